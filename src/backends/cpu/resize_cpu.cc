// resize_bilinear / resize_bicubic: separable resampling with torch.nn.functional.interpolate's index math
// (aten UpSample.h: area_pixel_compute_scale / area_pixel_compute_source_index, cubic A = −0.75, border-clamped
// taps), computed in f32 as torch does for f32 inputs. Each output row blends its input rows vertically into a
// row buffer, then horizontally. Parallel over N·C·OH output rows.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/bf16_round_cpu.h"
#include "backends/cpu/cpu_ops.h"

namespace dacpp::cpu {
namespace {

// Per output index: `n` source indices and weights (already border-clamped).
struct Taps {
  int n = 0;
  std::vector<int64_t> idx;
  std::vector<float> wt;
};

float source_scale(int64_t in, int64_t out, bool align_corners, double step) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  return step > 0 ? static_cast<float>(step) : static_cast<float>(in) / static_cast<float>(out);
}

float source_index(float scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<float>(dst);
  const float src = scale * (static_cast<float>(dst) + 0.5f) - 0.5f;
  return (!cubic && src < 0.f) ? 0.f : src;
}

Taps linear_taps(int64_t in, int64_t out, bool align_corners) {
  Taps t{2, std::vector<int64_t>(out * 2), std::vector<float>(out * 2)};
  const float scale = source_scale(in, out, align_corners, 0);
  for (int64_t o = 0; o < out; ++o) {
    const float src = source_index(scale, o, align_corners, false);
    const int64_t i0 = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
    const float l1 = std::clamp(src - static_cast<float>(i0), 0.f, 1.f);
    t.idx[o * 2] = i0;
    t.idx[o * 2 + 1] = i0 < in - 1 ? i0 + 1 : i0;
    t.wt[o * 2] = 1.f - l1;
    t.wt[o * 2 + 1] = l1;
  }
  return t;
}

Taps cubic_taps(int64_t in, int64_t out, bool align_corners, double step) {
  constexpr float kA = -0.75f;
  Taps t{4, std::vector<int64_t>(out * 4), std::vector<float>(out * 4)};
  const float scale = source_scale(in, out, align_corners, step);
  for (int64_t o = 0; o < out; ++o) {
    const float src = source_index(scale, o, align_corners, true);
    const int64_t i0 = static_cast<int64_t>(std::floor(src));
    const float x = src - static_cast<float>(i0);
    const float near[2] = {x, 1.f - x};  // distances of taps 1 and 2
    const float far[2] = {x + 1.f, 2.f - x};  // distances of taps 0 and 3
    float w[4];
    for (int s = 0; s < 2; ++s) {
      const float d = near[s], e = far[s];
      w[1 + s] = ((kA + 2) * d - (kA + 3)) * d * d + 1;
      w[s == 0 ? 0 : 3] = ((kA * e - 5 * kA) * e + 8 * kA) * e - 4 * kA;
    }
    for (int j = 0; j < 4; ++j) {
      t.idx[o * 4 + j] = std::clamp<int64_t>(i0 - 1 + j, 0, in - 1);
      t.wt[o * 4 + j] = w[j];
    }
  }
  return t;
}

// y's rows are rows [row0, row0 + y.dim(2)) of the resampled map whose vertical taps are `th`.
void resample(CpuContext& c, const Tensor& x, Tensor& y, const Taps& th, const Taps& tw, int64_t row0 = 0) {
  const int64_t h = x.dim(2), w = x.dim(3), oh = y.dim(2), ow = y.dim(3);
  const int64_t rows = x.dim(0) * x.dim(1) * oh;
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  c.pool().parallel_for(rows, /*grain=*/4, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(w));
    float* __restrict rp = row.data();
    for (int64_t r = begin; r < end; ++r) {
      const int64_t plane = r / oh, oy = row0 + r % oh;
      const float* src = xp + plane * h * w;
      std::fill(row.begin(), row.end(), 0.f);
      for (int i = 0; i < th.n; ++i) {
        const float wy = th.wt[oy * th.n + i];
        const float* __restrict in = src + th.idx[oy * th.n + i] * w;
        for (int64_t ix = 0; ix < w; ++ix) rp[ix] += wy * in[ix];
      }
      float* out = yp + r * ow;
      for (int64_t ox = 0; ox < ow; ++ox) {
        float acc = 0.f;
        for (int j = 0; j < tw.n; ++j) acc += tw.wt[ox * tw.n + j] * row[tw.idx[ox * tw.n + j]];
        out[ox] = acc;
      }
    }
  });
}

}  // namespace

void resize_bilinear_rows_nhwc(CpuContext& c, const float* x, int64_t ch, int64_t h, int64_t w, int64_t row0,
                               int64_t rows, int64_t full_h, int64_t ow, bool align_corners, void* y, bool bf16,
                               const float* add_cols, const float* add_rows) {
  if (rows == 0 || ow == 0 || ch == 0) return;
  const Taps th = linear_taps(h, full_h, align_corners), tw = linear_taps(w, ow, align_corners);
  // Per output row: the two input rows of every channel blended into a [w, C] buffer (channels innermost), then
  // each output pixel's C values as a blend of two of its pixels. Same f32 operations, in the same order, as
  // resample() above: the values equal resize_bilinear_rows's, laid out channels-last.
  c.pool().parallel_for(rows, /*grain=*/1, [&](int64_t begin, int64_t end) {
    std::vector<float> mixed(static_cast<size_t>(w * ch)), out(static_cast<size_t>(bf16 ? ow * ch : 0));
    float* __restrict mp = mixed.data();
    for (int64_t r = begin; r < end; ++r) {
      const int64_t oy = row0 + r;
      const float w0 = th.wt[oy * 2], w1 = th.wt[oy * 2 + 1];
      for (int64_t k = 0; k < ch; ++k) {
        const float* __restrict a = x + (k * h + th.idx[oy * 2]) * w;
        const float* __restrict b = x + (k * h + th.idx[oy * 2 + 1]) * w;
        for (int64_t ix = 0; ix < w; ++ix) mp[ix * ch + k] = (0.f + w0 * a[ix]) + w1 * b[ix];
      }
      float* __restrict dst = bf16 ? out.data() : static_cast<float*>(y) + r * ow * ch;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const float u0 = tw.wt[ox * 2], u1 = tw.wt[ox * 2 + 1];
        const float* __restrict p0 = mp + tw.idx[ox * 2] * ch;
        const float* __restrict p1 = mp + tw.idx[ox * 2 + 1] * ch;
        float* __restrict o = dst + ox * ch;
        for (int64_t k = 0; k < ch; ++k) o[k] = (0.f + u0 * p0[k]) + u1 * p1[k];
        if (add_cols != nullptr) {
          const float* __restrict ac = add_cols + ox * ch;
          const float* __restrict ar = add_rows + oy * ch;
          for (int64_t k = 0; k < ch; ++k) o[k] += ac[k] + ar[k];
        }
      }
      if (bf16) round_to_bf16_serial(dst, static_cast<uint16_t*>(y) + r * ow * ch, ow * ch);
    }
  });
}

void resize_bilinear(CpuContext& c, const Tensor& x, Tensor& y, bool align_corners) {
  if (y.numel() == 0) return;
  resample(c, x, y, linear_taps(x.dim(2), y.dim(2), align_corners), linear_taps(x.dim(3), y.dim(3), align_corners));
}

void resize_bilinear_rows(CpuContext& c, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners) {
  if (y.numel() == 0) return;
  resample(c, x, y, linear_taps(x.dim(2), full_h, align_corners), linear_taps(x.dim(3), y.dim(3), align_corners),
           row0);
}

void resize_bicubic(CpuContext& c, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w) {
  if (y.numel() == 0) return;
  resample(c, x, y, cubic_taps(x.dim(2), y.dim(2), align_corners, scale_h),
           cubic_taps(x.dim(3), y.dim(3), align_corners, scale_w));
}

}  // namespace dacpp::cpu
