// Spatial resampling of [N, C, H, W] f32 tensors to y's [N, C, OH, OW], with torch.nn.functional.interpolate
// semantics.
//   resize_bilinear: mode="bilinear", align_corners as given, antialias=False.
//   resize_bicubic:  mode="bicubic" (A = −0.75, border-clamped taps), antialias=False.
//     scale_h / scale_w: the *source-per-destination* step used when a scale_factor was passed to interpolate
//     (torch uses 1/scale_factor, not H/OH, when align_corners=False). Pass 0 to use H/OH and W/OW.
//   add_upsampled: y = b + (resize_bilinear(x → b's H × W, align_corners = true) + bias), bias [C] f32 per channel
//     or undefined; b and y [N, C, H, W], x [N, C, h, w], one activation dtype. y may alias b, not x. The DPT
//     refinenets' "previous stage upsampled, then added to the lateral input" in one pass, with the previous
//     stage's 1×1-conv bias added after the upsample instead of before (the bilinear weights sum to 1: equal up to
//     f32 rounding), so the upsampled map is never stored.
// Errors: InvalidArgument on rank/dtype/batch/channel mismatch; Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void resize_bilinear(Context& ctx, const Tensor& x, Tensor& y, bool align_corners);
void resize_bicubic(Context& ctx, const Tensor& x, Tensor& y, bool align_corners, double scale_h = 0,
                    double scale_w = 0);
void add_upsampled(Context& ctx, const Tensor& x, const Tensor& bias, const Tensor& b, Tensor& y);

}  // namespace dacpp::ops
