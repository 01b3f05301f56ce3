// Weight placements (design.md §4.4: residency is explicit), built by Model::load. The placed ModelFile hands every
// weight a layer fetches to place().
// DevicePlacement: puts a Model's weights on a GPU, each uploaded once, synchronously, into device memory owned by the
// returned tensor.
// HostBf16Placement: a CPU model in bf16 (design.md §3: opt-in, AVX-512 BF16 / AMX): its matrices are rounded once
// into bf16 host copies (half the memory of f32), which the CPU's linear and conv ops run on bf16 operands.
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
  bool on_host() const override { return false; }

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

class HostBf16Placement final : public WeightPlacement {
 public:
  // Unsupported (with oneDNN's reason and the CPU's instruction set) where oneDNN has no bf16 kernels for this CPU;
  // logs a warning where it only emulates bf16 (AVX-512 without BF16: slower than f32).
  HostBf16Placement();

  // Matrices (rank >= 2) not kept f32 are rounded to bf16 (nearest even) into a new host tensor; InvalidModel naming
  // the tensor where a value overflows bf16. Others are returned as they are.
  Tensor place(const Tensor& host, bool keep_f32) const override;
  bool on_host() const override { return true; }

  // Bytes of the bf16 copies made so far.
  size_t bytes() const { return bytes_; }

 private:
  mutable size_t bytes_ = 0;
};

}  // namespace dacpp
