// torch.nn.functional.interpolate (bilinear / bicubic, antialias=False) written directly from its definition in
// double precision: each output pixel is a weighted sum over its 2×2 or 4×4 source taps.
#include <algorithm>
#include <cmath>

#include "reference/reference.h"

namespace dacpp::ref {
namespace {

double src_coord(int64_t dst, int64_t in, int64_t out, bool align_corners, double step, bool cubic) {
  if (align_corners) return out > 1 ? dst * static_cast<double>(in - 1) / (out - 1) : 0.0;
  const double scale = step > 0 ? step : static_cast<double>(in) / out;
  const double s = (dst + 0.5) * scale - 0.5;
  return (!cubic && s < 0) ? 0.0 : s;
}

double cubic_weight(double d) {
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

template <typename Weights>
Tensor resample(const Tensor& x, int64_t oh, int64_t ow, Weights weights) {
  const int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3);
  Tensor y = Tensor::empty({x.dim(0), x.dim(1), oh, ow});
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        std::vector<std::pair<int64_t, double>> ty = weights(oy, h, oh, true), tx = weights(ox, w, ow, false);
        double acc = 0;
        for (auto [iy, wy] : ty)
          for (auto [ix, wx] : tx) acc += wy * wx * xp[(p * h + iy) * w + ix];
        yp[(p * oh + oy) * ow + ox] = static_cast<float>(acc);
      }
  return y;
}

}  // namespace

Tensor resize_bilinear(const Tensor& x, int64_t oh, int64_t ow, bool align_corners) {
  return resample(x, oh, ow, [&](int64_t o, int64_t in, int64_t out, bool) {
    const double s = src_coord(o, in, out, align_corners, 0, false);
    const int64_t i0 = std::min<int64_t>(static_cast<int64_t>(std::floor(s)), in - 1);
    const int64_t i1 = std::min<int64_t>(i0 + 1, in - 1);
    const double l = std::clamp(s - i0, 0.0, 1.0);
    return std::vector<std::pair<int64_t, double>>{{i0, 1 - l}, {i1, l}};
  });
}

Tensor resize_bicubic(const Tensor& x, int64_t oh, int64_t ow, bool align_corners, double scale_h,
                      double scale_w) {
  return resample(x, oh, ow, [&](int64_t o, int64_t in, int64_t out, bool vertical) {
    const double s = src_coord(o, in, out, align_corners, vertical ? scale_h : scale_w, true);
    const int64_t i0 = static_cast<int64_t>(std::floor(s));
    std::vector<std::pair<int64_t, double>> taps;
    for (int64_t j = i0 - 1; j <= i0 + 2; ++j)
      taps.push_back({std::clamp<int64_t>(j, 0, in - 1), cubic_weight(s - j)});
    return taps;
  });
}

}  // namespace dacpp::ref
