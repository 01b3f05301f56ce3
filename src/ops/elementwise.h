// Elementwise ops on f32 tensors. y may alias x (in place).
//   unary(kind, x, y):  y = f(x), same shape. GELU is the exact erf form.
//   add(a, b, y), mul(a, b, y): numpy-style broadcasting of b against a (right-aligned dims, size-1 dims
//     broadcast); y has a's shape. (Only b broadcasts: a's shape is the result shape.)
// Errors: InvalidArgument on shape/dtype mismatch; Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

enum class Unary { Gelu, Silu, Relu, Exp, Sigmoid };

void unary(Context& ctx, Unary kind, const Tensor& x, Tensor& y);
void add(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y);
void mul(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y);

}  // namespace dacpp::ops
