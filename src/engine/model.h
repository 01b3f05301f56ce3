// Model: one loaded network — its weight index (kept alive: weight tensors are views into the file mapping),
// config and layers. Immutable after load and safe to share across threads; per-worker state lives in Runner.
//
// Load-time validation (design.md §4.3): the config keys and every tensor the network needs are looked up and
// shape-checked here, so a Model that loads can run. Errors: NotFound (no such path), InvalidModel (corrupt file,
// bad key, missing/misshapen tensor, all named), Unsupported (a model version not implemented yet), Io.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "formats/import.h"
#include "formats/model_file.h"
#include "models/depth_model.h"

namespace dacpp {

struct LoadOptions {
  ImportOptions import;  // used when the path is a checkpoint rather than a GGUF file
  Device device = Device::cpu();  // where the weights live and the Runners compute
  // The weights' dtype. On a GPU F32, BF16 (the default) or F16, the activations' too. On the CPU F32 (the default)
  // or BF16 (design.md §3, opt-in: linear and conv weights in bf16, their products on bf16 operands with f32
  // accumulation, every activation f32; Unsupported where oneDNN has no bf16 kernels for the CPU); F16 there is
  // Unsupported.
  std::optional<DType> precision;
  // DA3 nested from depth-anything.cpp's two files: the path given to load is the any-view file and this is the
  // metric-branch file (m_vit.* / m_head.*). Empty: one file. See engine/model_nested.h.
  std::string metric_model;
};

class Model {
 public:
  // A .gguf file (detected by its magic) is read with read_gguf; anything else (a .pth, .safetensors, or a
  // checkpoint folder) goes through import_checkpoint.
  static std::shared_ptr<const Model> load(const std::string& path, const LoadOptions& options = {});
  // Builds a model from an already-read weight index (tests, converters).
  static std::shared_ptr<const Model> from_file(std::shared_ptr<const ModelFile> file,
                                                const LoadOptions& options = {});

  const ModelFile& file() const { return *file_; }
  const models::ModelConfig& config() const { return net_->config(); }
  const models::DepthModel& net() const { return *net_; }
  const Device& device() const { return device_; }
  // The activation dtype of Runners over this model: F32 on the CPU, the load precision on a GPU.
  DType act_dtype() const { return device_.is_cpu() ? DType::F32 : precision_; }
  // The precision the model was loaded in (LoadOptions::precision, its default resolved for the device).
  DType precision() const { return precision_; }
  // Bytes of weights uploaded to the device (0 on the CPU).
  size_t device_weight_bytes() const { return device_weight_bytes_; }

 private:
  Model(std::shared_ptr<const ModelFile> file, std::unique_ptr<models::DepthModel> net);

  std::shared_ptr<const ModelFile> file_;
  std::unique_ptr<const models::DepthModel> net_;  // declared after file_: destroyed first (its device weights
                                                  // live in the placement that file_ holds)
  Device device_ = Device::cpu();
  DType precision_ = DType::F32;
  size_t device_weight_bytes_ = 0;
};

}  // namespace dacpp
