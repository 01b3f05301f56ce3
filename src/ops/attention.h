// attention: out = softmax(q · kᵀ · scale) · v, per batch and head.
//   q:   [B, H, Nq, D] f32      k, v: [B, H, Nk, D] f32
//   out: [B, Nq, H, D] f32 (token-major, so it reshapes to [B, Nq, H·D] for the output projection)
//   scale: usually 1/sqrt(D). D is 64 for every DA model; other D are accepted.
// Errors: InvalidArgument on shape/dtype mismatch; Backend when not all on ctx's device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void attention(Context& ctx, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out);

// attention_qkv: self-attention straight from a fused qkv projection, without splitting it first.
//   qkv: [B, N, 3·H·D] — per token the H heads of q, then of k, then of v (each head's D values contiguous)
//   out: [B, N, H, D];  heads = H.  The same as attention() on q, k, v = qkv viewed as [B, N, 3, H, D] and
//   permuted to [3, B, H, N, D] (the CUDA kernel reads them in place).
// Errors: InvalidArgument on shape/dtype mismatch or a width not divisible by 3·heads; Backend as attention().
void attention_qkv(Context& ctx, const Tensor& qkv, int64_t heads, float scale, Tensor& out);

}  // namespace dacpp::ops
