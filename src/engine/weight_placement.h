// DevicePlacement: puts a Model's weights on a GPU (design.md §4.4: residency is explicit). Built by Model::load
// for a CUDA device; the placed ModelFile hands every weight a layer fetches to place(), which uploads it once,
// synchronously, into device memory owned by the returned tensor.
//
// Dtype rule: matrices and tokens (rank ≥ 2: linear / conv weights, cls / camera tokens) take the model's
// precision (f32, bf16 or f16); vectors (biases, norm parameters, LayerScale) stay f32, where the ops read them
// in f32 whatever the activation dtype. Weights that host code needs (the pos-embed table) are fetched with
// ModelFile::host_f32 and never pass through here.
#pragma once

#include <memory>

#include "core/device.h"
#include "core/dtype.h"
#include "formats/model_file.h"
#include "ops/context.h"

namespace dacpp {

class DevicePlacement final : public WeightPlacement {
 public:
  // Creates the upload context on `device` (Backend when there is no such GPU; Unsupported in a CPU-only build).
  // precision: F32, BF16 or F16 (InvalidArgument otherwise).
  DevicePlacement(Device device, DType precision);
  ~DevicePlacement() override;

  Tensor place(const Tensor& host, bool keep_f32) const override;

  const Device& device() const { return device_; }
  DType precision() const { return precision_; }
  // Bytes uploaded so far.
  size_t bytes() const { return bytes_; }

 private:
  Device device_;
  DType precision_;
  std::unique_ptr<ops::Context> ctx_;  // owns the device allocator the weights live in: outlives them (Model)
  mutable size_t bytes_ = 0;
};

}  // namespace dacpp
