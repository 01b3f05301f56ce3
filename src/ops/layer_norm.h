// layer_norm over the last dimension: y = (x − mean) / sqrt(var + eps) · gamma + beta   (biased variance)
//   x:     [..., C] f32      gamma, beta: [C] f32       y: same shape as x, may alias x (in place)
// On CUDA x and y may differ in dtype (an f32 residual stream normalised into bf16 / f16 activations); y aliases x
// only when they share it.
// Errors: InvalidArgument on shape/dtype mismatch; Backend when not all on ctx's device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void layer_norm(Context& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y);

}  // namespace dacpp::ops
