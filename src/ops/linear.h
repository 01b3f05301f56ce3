// linear: y = act(x · wᵀ + b)
//   x:    [..., K] contiguous; all leading dims are flattened into M rows
//   w:    [N, K]   (torch nn.Linear layout)
//   bias: [N]      f32, or an undefined Tensor for none
//   y:    [..., N] preallocated, same leading dims as x; may not alias x
//   act:  None or Gelu (exact erf GELU) or Relu
// Dtypes: on CUDA x, w and y share the activation dtype (f32, bf16 or f16). On the CPU y is f32 and x and w are each
// f32 or bf16; when either is bf16 the product runs on bf16 operands (the f32 one rounded to nearest even) with f32
// accumulation, bias and epilogue — a model loaded in bf16 (its weights bf16; a weight may be either operand).
// Errors: InvalidArgument naming the tensors on any shape/dtype mismatch; Backend when not all on ctx's device.
//
// LinearWeight: a linear layer's weight as the layer holds it. On the CPU, for a model loaded in bf16 (a host bf16
// [N, K] weight), prepare_linear_weight packs it once, at load, into the blocked layout oneDNN's matmul reads
// (cpu::PackedWeight), and the plain copy is let go; linear() on a LinearWeight then computes exactly what it would on
// the plain weight, without the matmul re-packing the weight each call. Elsewhere the plain weight is kept. A packed
// weight given to an op on another device is a Backend error naming it.
#pragma once

#include <memory>
#include <string>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::cpu {
struct PackedWeight;
}

namespace dacpp::ops {

void linear(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
            Activation act = Activation::None);

class LinearWeight {
 public:
  LinearWeight() = default;
  explicit LinearWeight(Tensor plain);
  explicit LinearWeight(std::shared_ptr<const cpu::PackedWeight> packed);

  int64_t out_features() const;
  int64_t in_features() const;
  DType dtype() const;
  const std::string& name() const;
  // The [N, K] tensor when not packed; undefined when packed.
  const Tensor& plain() const { return plain_; }
  const cpu::PackedWeight* packed() const { return packed_.get(); }

 private:
  Tensor plain_;
  std::shared_ptr<const cpu::PackedWeight> packed_;
};

// w packed for the CPU where it is a host bf16 rank-2 tensor and oneDNN's matmul would re-pack it; otherwise w as it
// is (f32 weights stay views of the mapped file: see linear.cc). Throws Backend or OutOfMemory from the packing.
LinearWeight prepare_linear_weight(const Tensor& w);

void linear(Context& ctx, const Tensor& x, const LinearWeight& w, const Tensor& bias, Tensor& y,
            Activation act = Activation::None);

}  // namespace dacpp::ops
