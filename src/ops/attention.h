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

}  // namespace dacpp::ops
