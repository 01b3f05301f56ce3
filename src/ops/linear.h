// linear: y = act(x · wᵀ + b)
//   x:    [..., K] f32, contiguous; all leading dims are flattened into M rows
//   w:    [N, K]   f32 (torch nn.Linear layout)
//   bias: [N]      f32, or an undefined Tensor for none
//   y:    [..., N] f32, preallocated, same leading dims as x; may not alias x
//   act:  None or Gelu (exact erf GELU) or Relu
// Errors: InvalidArgument naming the tensors on any shape/dtype mismatch; Backend when not all on ctx's device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void linear(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
            Activation act = Activation::None);

}  // namespace dacpp::ops
