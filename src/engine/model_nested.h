// Loading DA3NESTED-GIANT-LARGE from depth-anything.cpp's two-file layout (spec/gguf-compat.md §1.2-1.3): the
// any-view file plus the metric-branch file (names m_vit.* / m_head.*), merged into one weight index
// (formats/nested_model_file.h) and built as a models::Da3NestedModel. A nested checkpoint folder needs no second
// file (import_checkpoint reads both branches from it).
#pragma once

#include <memory>
#include <string>

#include "engine/model.h"

namespace dacpp {

// Each path is a .gguf or a checkpoint (as Model::load accepts; a nested checkpoint folder gives its any-view branch
// for `any_view_path` and its metric branch for `metric_path`). Errors: NotFound for a missing path; InvalidModel
// when the files are not an any-view file and a metric-branch file (merge_nested), or a branch does not build.
std::shared_ptr<const Model> load_nested_model(const std::string& any_view_path, const std::string& metric_path,
                                               const LoadOptions& options = {});

// Model::load, or load_nested_model when options.metric_model is set.
std::shared_ptr<const Model> load_model(const std::string& path, const LoadOptions& options = {});

}  // namespace dacpp
