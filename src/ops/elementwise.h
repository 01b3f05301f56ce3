// Elementwise ops on f32 tensors. y may alias x (in place).
//   unary(kind, x, y):  y = f(x), same shape. GELU is the exact erf form.
//   add(a, b, y), mul(a, b, y): numpy-style broadcasting of b against a (right-aligned dims, size-1 dims
//     broadcast); y has a's shape. (Only b broadcasts: a's shape is the result shape.)
//   add_scaled(x, a, gamma, y): y = x + a ⊙ gamma (gamma [C] broadcast over a's last dim; undefined: y = x + a),
//     the LayerScale residual update in one pass. x and y share a dtype and shape and may alias; a has x's shape
//     and may have another activation dtype (on CUDA: a bf16 / f16 branch added into an f32 residual stream, the
//     product and sum taken in f32).
// Errors: InvalidArgument on shape/dtype mismatch; Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

enum class Unary { Gelu, Silu, Relu, Exp, Sigmoid };

void unary(Context& ctx, Unary kind, const Tensor& x, Tensor& y);
void add(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y);
void mul(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y);
void add_scaled(Context& ctx, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y);

}  // namespace dacpp::ops
