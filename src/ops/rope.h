// rope2d: the 2-D rotary position embedding of DA3 (model/dinov2/layers/rope.py::RotaryPositionEmbedding2D),
// applied in place to q or k after qk-norm.
//   x:         [B, H, N, D] (f32 on the CPU; f32, bf16 or f16 on CUDA), D % 4 == 0, rotated in place
//   positions: [N, 2] i32 (row y, column x) per token, shared by every batch item and head, on ctx's device
//   base:      frequency base (DA3: 100), finite and > 0
// The head dim splits in two halves of width d = D/2: the first rotates with y, the second with x. Within a half,
// rotate-half RoPE with inverse frequencies base^(−2j/d), j < d/2, the angles concatenated twice:
//   t·cos + rotate_half(t)·sin,  rotate_half(t) = [−t₂, t₁].  Angles and sin/cos in f32.
// Errors: InvalidArgument on shape/dtype/base mismatch (and, on the CPU, a negative position); Backend off-device.
// Positions on the device are not read by the host: CUDA rotates whatever they hold (negative values included).
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void rope2d(Context& ctx, Tensor& x, const Tensor& positions, float base);

}  // namespace dacpp::ops
