// DA3NESTED-GIANT-LARGE in one weight index. depth-anything.cpp stores the nested model as two GGUF files: the any-view
// network (names vit.* / head.* / cam.*, keys depthanything3.vit.* …) and the metric branch (names m_vit.* /
// m_head.*, keys depthanything3.m_vit.* / m_head.*; spec/gguf-compat.md §1.2, §1.3). dacpp loads them as ONE
// ModelFile holding both name sets (merge_nested), which ModelConfig classifies as ModelKind::Da3Nested, and the
// nested model splits it back into two ordinary files (nested_branch) to build its two networks.
#pragma once

#include <memory>

#include "formats/model_file.h"

namespace dacpp {

// The union of the any-view file and the metric-branch file: every tensor and key of both, the any-view file's path
// and checkpoint name. The result keeps both inputs alive. Errors (InvalidModel naming the file): `any_view` holds
// metric-branch keys or no vit.embed_dim; `metric` lacks m_vit.embed_dim or holds any-view tensors (vit.*, head.*);
// a tensor name in both.
std::shared_ptr<const ModelFile> merge_nested(std::shared_ptr<const ModelFile> any_view,
                                              std::shared_ptr<const ModelFile> metric);

enum class NestedBranch { AnyView, Metric };

// One network of a merged nested file, as an ordinary model file (a view: no tensor data is copied; `mf` must
// outlive the result). AnyView: everything but the m_* tensors and keys. Metric: m_vit.X → vit.X and m_head.X →
// head.X (tensors and keys), plus the shared keys (arch, patch_size, img.*), checkpoint name "<name>-metric".
// The weight placement of `mf` carries over.
std::shared_ptr<const ModelFile> nested_branch(const ModelFile& mf, NestedBranch branch);

}  // namespace dacpp
