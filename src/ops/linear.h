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
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void linear(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
            Activation act = Activation::None);

}  // namespace dacpp::ops
