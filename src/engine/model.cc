#include "engine/model.h"

#include "engine/weight_placement.h"
#include "formats/open_model_file.h"
#include "formats/tensor_names.h"

namespace dacpp {

Model::Model(std::shared_ptr<const ModelFile> file, std::unique_ptr<models::DepthModel> net)
    : file_(std::move(file)), net_(std::move(net)) {}

std::shared_ptr<const Model> Model::load(const std::string& path, const LoadOptions& options) {
  return from_file(open_model_file(path, options.import), options);
}

std::shared_ptr<const Model> Model::from_file(std::shared_ptr<const ModelFile> file, const LoadOptions& options) {
  DACPP_CHECK(file != nullptr, ErrorCode::Internal, "Model::from_file: null model file");
  // A well-formed GGUF of another family (an LLM, say) is named as such rather than as a missing key.
  const std::string family = file->get_string_or(names::kGeneralArchitecture, names::kArchitecture);
  DACPP_CHECK(family == names::kArchitecture, ErrorCode::InvalidModel, "model '", file->path(), "': metadata key '",
              names::kGeneralArchitecture, "' = '", family, "': not a Depth Anything model (expected '",
              names::kArchitecture, "')");
  const models::ModelConfig cfg = models::ModelConfig::from_file(*file);
  std::shared_ptr<DevicePlacement> placement;
  if (options.device.kind != DeviceKind::Cpu) {
    placement = std::make_shared<DevicePlacement>(options.device, options.precision);
    file = file->placed(placement);
  }
  std::unique_ptr<models::DepthModel> net = models::create_model(*file, cfg);
  std::shared_ptr<Model> m(new Model(std::move(file), std::move(net)));
  if (placement) {
    m->device_ = options.device;
    m->act_dtype_ = options.precision;
    m->device_weight_bytes_ = placement->bytes();
  }
  return m;
}

}  // namespace dacpp
