// DA3NESTED-GIANT-LARGE in one weight index. depth-anything.cpp stores the nested model as two GGUF files: the any-view
// network (names vit.* / head.* / cam.*, keys depthanything3.vit.* …) and the metric branch (names m_vit.* /
// m_head.*, keys depthanything3.m_vit.* / m_head.*; spec/gguf-compat.md §1.2, §1.3). dacpp loads them as ONE
// ModelFile holding both name sets (merge_nested), which ModelConfig classifies as ModelKind::Da3Nested, and the
// nested model splits it back into two ordinary files (nested_branch) to build its two networks.
#pragma once

#include <memory>

#include "core/error.h"
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

// Whether `mf` holds a nested metric branch: any m_vit.* / m_head.* tensor or depthanything3.m_* key (so a merged file
// missing one of them is still recognised as nested, and the missing item named).
bool holds_metric_branch(const ModelFile& mf);
// Whether every tensor of `mf` is a metric-branch tensor: depth-anything.cpp's metric-branch file alone.
bool is_metric_branch_only(const ModelFile& mf);

// An error raised while building the branch nested_branch(mf, Metric), re-worded with the names the file stores:
// tensors 'vit.X' / 'head.X' → 'm_vit.X' / 'm_head.X', keys depthanything3.vit.X / head.X → depthanything3.m_vit.X /
// m_head.X. The code is kept; the branch's path (`branch_path`) in the message is left as is.
Error metric_branch_error(const Error& e, const std::string& branch_path);

}  // namespace dacpp
