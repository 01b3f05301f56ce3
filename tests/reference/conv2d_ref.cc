#include "reference/reference.h"

namespace dacpp::ref {

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, int stride_h, int stride_w, int pad_h,
              int pad_w, bool relu) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t o = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  const int64_t oh = (h + 2 * pad_h - kh) / stride_h + 1, ow = (wd + 2 * pad_w - kw) / stride_w + 1;
  Tensor y = Tensor::empty({n, o, oh, ow});
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  float* yp = y.data<float>();
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t oi = 0; oi < o; ++oi)
      for (int64_t yi = 0; yi < oh; ++yi)
        for (int64_t xi = 0; xi < ow; ++xi) {
          double acc = bias.defined() ? bias.data<float>()[oi] : 0.0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t iy = yi * stride_h - pad_h + a, ix = xi * stride_w - pad_w + b;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += static_cast<double>(xp[((ni * c + ci) * h + iy) * wd + ix]) *
                       wp[((oi * c + ci) * kh + a) * kw + b];
              }
          if (relu && acc < 0) acc = 0;
          yp[((ni * o + oi) * oh + yi) * ow + xi] = static_cast<float>(acc);
        }
  return y;
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias, int stride) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t o = w.dim(1), k = w.dim(2);
  const int64_t oh = (h - 1) * stride + k, ow = (wd - 1) * stride + k;
  std::vector<double> acc(static_cast<size_t>(n * o * oh * ow), 0.0);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < wd; ++ix)
          for (int64_t oi = 0; oi < o; ++oi)
            for (int64_t a = 0; a < k; ++a)
              for (int64_t b = 0; b < k; ++b)
                acc[((ni * o + oi) * oh + iy * stride + a) * ow + ix * stride + b] +=
                    static_cast<double>(xp[((ni * c + ci) * h + iy) * wd + ix]) * wp[((ci * o + oi) * k + a) * k + b];
  Tensor y = Tensor::empty({n, o, oh, ow});
  float* yp = y.data<float>();
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t oi = (static_cast<int64_t>(i) / (oh * ow)) % o;
    yp[i] = static_cast<float>(acc[i] + (bias.defined() ? bias.data<float>()[oi] : 0.0));
  }
  return y;
}

}  // namespace dacpp::ref
