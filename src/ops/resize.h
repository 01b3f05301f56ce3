// Spatial resampling of [N, C, H, W] f32 tensors to y's [N, C, OH, OW], with torch.nn.functional.interpolate
// semantics.
//   resize_bilinear: mode="bilinear", align_corners as given, antialias=False.
//   resize_bicubic:  mode="bicubic" (A = −0.75, border-clamped taps), antialias=False.
//     scale_h / scale_w: the *source-per-destination* step used when a scale_factor was passed to interpolate
//     (torch uses 1/scale_factor, not H/OH, when align_corners=False). Pass 0 to use H/OH and W/OW.
//   resize_bilinear_add: resize_bilinear's map + bias[c] (bias [C] f32 or undefined) + y's own values when
//     `accumulate`, written to y in one pass (one rounding): a DPT refinenet's upsample with its out_conv's bias and
//     the next refinenet's lateral branch merged in.
// Errors: InvalidArgument on rank/dtype/batch/channel mismatch; Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void resize_bilinear(Context& ctx, const Tensor& x, Tensor& y, bool align_corners);
void resize_bilinear_add(Context& ctx, const Tensor& x, const Tensor& bias, Tensor& y, bool align_corners,
                         bool accumulate);
void resize_bicubic(Context& ctx, const Tensor& x, Tensor& y, bool align_corners, double scale_h = 0,
                    double scale_w = 0);

}  // namespace dacpp::ops
