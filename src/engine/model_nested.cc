#include "engine/model_nested.h"

#include <filesystem>

#include "core/error.h"
#include "formats/nested_model_file.h"
#include "formats/open_model_file.h"

namespace dacpp {

std::shared_ptr<const Model> load_nested_model(const std::string& any_view_path, const std::string& metric_path,
                                               const LoadOptions& options) {
  std::error_code ec;
  DACPP_CHECK(std::filesystem::exists(any_view_path, ec), ErrorCode::NotFound, "model '", any_view_path,
              "': file not found");
  DACPP_CHECK(std::filesystem::exists(metric_path, ec), ErrorCode::NotFound, "metric model '", metric_path,
              "': file not found");
  ImportOptions any_opt = options.import;
  any_opt.nested_part = ImportOptions::NestedPart::AnyView;
  any_opt.nested_metric = false;
  ImportOptions metric_opt = options.import;
  metric_opt.nested_part = ImportOptions::NestedPart::Metric;
  std::shared_ptr<const ModelFile> merged =
      merge_nested(open_model_file(any_view_path, any_opt), open_model_file(metric_path, metric_opt));
  LoadOptions one = options;
  one.metric_model.clear();
  return Model::from_file(std::move(merged), one);
}

std::shared_ptr<const Model> load_model(const std::string& path, const LoadOptions& options) {
  if (!options.metric_model.empty()) return load_nested_model(path, options.metric_model, options);
  return Model::load(path, options);
}

}  // namespace dacpp
