// resize_bilinear_rows: one horizontal band of a bilinear resize, so a consumer can stream a large upsampled map
// band by band instead of materialising it whole.
//   x: [N, C, H, W] f32    y: [N, C, R, OW] f32
//   y = resize_bilinear(x → [N, C, full_h, OW], align_corners)[:, :, row0 : row0 + R, :]   (bit-identical rows)
// Errors: InvalidArgument on rank/dtype/batch/channel mismatch or a band outside 0..full_h; Backend off-device.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void resize_bilinear_rows(Context& ctx, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners);

}  // namespace dacpp::ops
