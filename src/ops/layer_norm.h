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

// layer_norm_drop_leading: y[b] = layer_norm(x[b, skip:]) for x [B, N, C], y [B, N − skip, C] (a ViT's patch
// tokens normalised without its leading class / register tokens), x and y as for layer_norm but never aliased. On
// CUDA one launch for the whole batch; elsewhere one layer_norm per image.
void layer_norm_drop_leading(Context& ctx, const Tensor& x, int64_t skip, const Tensor& gamma, const Tensor& beta,
                             float eps, Tensor& y);

// A second norm of add_scaled_layer_norm's updated x, as layer_norm_drop_leading takes it: y[b] =
// layer_norm(x[b, skip:]; gamma, beta, eps) for x [B, N, C], y [B, N − skip, C] — a ViT's output norm of a layer
// whose features are collected, taken from the same row statistics in the same pass.
struct DropLeadingNorm {
  Tensor gamma, beta;
  float eps = 0.f;
  int64_t skip = 0;
  Tensor y;
};

// add_scaled_layer_norm: x ← x + a ⊙ ls (ops::add_scaled in place; ls [C] or undefined), then y = layer_norm(x):
// the LayerScale residual update of a pre-norm block and the norm that follows it, and with `also` the collected
// output norm beside it (y may then be undefined: the last block, no norm follows). On CUDA with an f32 stream x
// it is one pass over each row (the updated row is normalised while it is in registers); otherwise the ops in turn.
// a undefined (and ls with it): no update, the norms of x alone — a stream that a GEMM has already added to
// (ops::linear_add), its two norms still in one pass on CUDA.
// y and also->y must not alias x, a or each other. Errors: those of add_scaled, layer_norm and
// layer_norm_drop_leading.
void add_scaled_layer_norm(Context& ctx, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                           const Tensor& beta, float eps, Tensor& y, const DropLeadingNorm* also = nullptr);

}  // namespace dacpp::ops
