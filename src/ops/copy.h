// copy and cast: moving activations between residencies and precisions.
//
//   copy(ctx, src, dst): dst = src, bytes for bytes. src and dst have the same shape and dtype (any dtype) and
//     each is on the host or on ctx's device (h2d, d2h, d2d, and h2h on any context). When either side is on the
//     host the call returns after the copy is complete (the host buffer may be reused); device-to-device copies
//     are ordered on ctx's stream. src and dst may not alias.
//   cast(ctx, src, dst): dst = src converted between f32, bf16 and f16 (round to nearest even; same dtype is a
//     copy), same shape, both on ctx's device. On the CPU only f32 -> f32 is supported (Unsupported otherwise).
// Errors: InvalidArgument on shape/dtype mismatch or aliasing; Backend when a tensor is on another device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void copy(Context& ctx, const Tensor& src, Tensor& dst);
void cast(Context& ctx, const Tensor& src, Tensor& dst);

}  // namespace dacpp::ops
