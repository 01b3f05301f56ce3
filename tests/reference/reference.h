// dacpp::ref — slow, obvious, single-threaded reference implementations of every op: the test oracle
// (style.md rule 3). Plain nested loops over the torch definitions, double accumulation, host tensors only.
// Each returns a new tensor; shapes follow the matching src/ops/<op>.h contract. No validation: tests pass
// well-formed inputs.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "ops/context.h"
#include "ops/elementwise.h"

namespace dacpp::ref {

// x: [..., K], w: [N, K], bias: [N] or undefined → [..., N].
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias, ops::Activation act);
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps);
// q: [B, H, Nq, D], k, v: [B, H, Nk, D] → [B, Nq, H, D].
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale);
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, int stride_h, int stride_w, int pad_h,
              int pad_w, bool relu);
// w: [C_in, C_out, K, K].
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias, int stride);
Tensor resize_bilinear(const Tensor& x, int64_t oh, int64_t ow, bool align_corners);
Tensor resize_bicubic(const Tensor& x, int64_t oh, int64_t ow, bool align_corners, double scale_h,
                      double scale_w);
Tensor unary(ops::Unary kind, const Tensor& x);
Tensor add(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor permute(const Tensor& x, const std::vector<int>& perm);

}  // namespace dacpp::ref
