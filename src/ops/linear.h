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
// LinearWeight: a linear layer's weight as the layer holds it: the plain [N, K] tensor, or on the CPU the same laid
// out once, at load, the way oneDNN's matmul reads it (cpu::PackedWeight; pack_linear_weight), which a matmul on the
// plain weight would otherwise build again in every call. A bf16 model on the CPU packs its linear weights straight
// from their f32 pages, rounding to bf16 in the same pass (no plain bf16 copy is made); f32 models keep the plain
// weights, views of the mapped file (packing them cost DA2-L's load a second; docs/PERFORMANCE.md). linear() on a
// LinearWeight computes what it would on the plain weight. A packed weight given to an op on another device is a
// Backend error naming it.
#pragma once

#include <memory>
#include <optional>
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

// host (a host f32 or bf16 [N, K] weight) packed for the CPU's matmul with products in `product` (f32, or bf16: an
// f32 weight rounded to nearest even, denormals read as zero, as oneDNN's bf16 kernels read them); nullopt where the
// matmul reads the plain layout itself. Throws InvalidArgument for other operands, InvalidModel naming the tensor
// where a value rounds past bf16's range, Backend or OutOfMemory from the packing.
std::optional<LinearWeight> pack_linear_weight(const Tensor& host, DType product);

void linear(Context& ctx, const Tensor& x, const LinearWeight& w, const Tensor& bias, Tensor& y,
            Activation act = Activation::None);

// linear_add: y += x · wᵀ + b, y an f32 [..., N] whatever the activation dtype (a transformer's residual stream: the
// product, accumulated in f32, is added to y without being rounded to the activation dtype first). Operands as
// linear's otherwise; no activation. On CUDA the GEMM accumulates into y (cuBLASLt, beta 1, an f32 D); on the CPU
// oneDNN's matmul adds to y (its sum post-op).
void linear_add(Context& ctx, const Tensor& x, const LinearWeight& w, const Tensor& bias, Tensor& y);

}  // namespace dacpp::ops
