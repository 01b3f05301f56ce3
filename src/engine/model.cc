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
  const bool gpu = options.device.kind != DeviceKind::Cpu;
  const DType precision = options.precision.value_or(gpu ? DType::BF16 : DType::F32);
  std::shared_ptr<DevicePlacement> placement;
  if (gpu) {
    placement = std::make_shared<DevicePlacement>(options.device, precision);
    file = file->placed(placement);
  } else if (precision == DType::BF16) {
    file = file->placed(std::make_shared<HostBf16Placement>());
  } else {
    DACPP_CHECK(precision == DType::F32, ErrorCode::Unsupported, "precision ", dtype_name(precision),
                " on the CPU: the CPU runs f32 (the default) or bf16");
  }
  std::unique_ptr<models::DepthModel> net = models::create_model(*file, cfg);
  std::shared_ptr<Model> m(new Model(std::move(file), std::move(net)));
  m->precision_ = precision;
  if (placement) {
    m->device_ = options.device;
    m->device_weight_bytes_ = placement->bytes();
  }
  return m;
}

}  // namespace dacpp
