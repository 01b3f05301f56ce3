// INTER_AREA of cv_resize, for shrinking: OpenCV's block average when both factors are integers, otherwise its
// area-weighted tables (see cv_resize.h).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "pipeline/cv_resize_detail.h"

namespace dacpp::pipeline::detail {
namespace {

// Element type traits: the work type of the weighted path and the final conversion.
template <typename T>
struct AreaTraits;
template <>
struct AreaTraits<uint8_t> {
  using Work = float;   // weighted path accumulator
  using Fast = int;     // block-average accumulator
  static uint8_t store(float v) { return saturate_u8(v); }
};
template <>
struct AreaTraits<float> {
  using Work = float;
  using Fast = float;
  static float store(float v) { return v; }
};
template <>
struct AreaTraits<double> {
  using Work = double;
  using Fast = double;
  static double store(double v) { return v; }
};

// ---- integer factors: block average ----

template <typename T>
T block_average(const T* const* rows, int sx0, int fx, int fy, int cn, float inv_area) {
  using Fast = typename AreaTraits<T>::Fast;
  // OpenCV sums the block row-major in groups of four terms, each group added to the running sum.
  Fast group[4];
  Fast sum = 0;
  int n = 0;
  for (int y = 0; y < fy; ++y) {
    for (int x = 0; x < fx; ++x) {
      group[n++] = rows[y][sx0 + x * cn];
      if (n == 4) {
        sum += group[0] + group[1] + group[2] + group[3];
        n = 0;
      }
    }
  }
  for (int k = 0; k < n; ++k) sum += group[k];
  return AreaTraits<T>::store(sum * inv_area);
}

// 2×2 blocks take a dedicated formula in OpenCV: (a + b + c + d + 2) >> 2 for uint8 (1, 3 or 4 channels), and
// ((a + b) + (c + d)) · 0.25 for float with 1 or 4 channels in whole 4-lane SIMD blocks of the row (`in_vec`);
// anything else takes the generic block average.
template <typename T>
bool two_by_two(const T* r0, const T* r1, int i, int cn, bool in_vec, T* out) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (cn == 2) return false;
    *out = static_cast<uint8_t>((r0[i] + r0[i + cn] + r1[i] + r1[i + cn] + 2) >> 2);
    return true;
  } else if constexpr (std::is_same_v<T, float>) {
    if ((cn != 1 && cn != 4) || !in_vec) return false;
    *out = ((r0[i] + r0[i + cn]) + (r1[i] + r1[i + cn])) * 0.25f;
    return true;
  } else {
    return false;
  }
}

template <typename T>
void area_fast(const T* src, int sw, int cn, T* dst, int dh, int dw, int fx, int fy) {
  const float inv_area = 1.f / static_cast<float>(fx * fy);
  const size_t src_stride = static_cast<size_t>(sw) * cn;
  const int width = dw * cn;
  const int vec_end = width - width % 4;
  std::vector<const T*> rows(static_cast<size_t>(fy));
  for (int dy = 0; dy < dh; ++dy) {
    for (int y = 0; y < fy; ++y) rows[static_cast<size_t>(y)] = src + (static_cast<size_t>(dy) * fy + y) * src_stride;
    T* out = dst + static_cast<size_t>(dy) * width;
    for (int e = 0; e < width; ++e) {
      const int sx0 = (e / cn) * fx * cn + e % cn;
      if (fx == 2 && fy == 2 && two_by_two(rows[0], rows[1], sx0, cn, e < vec_end, &out[e])) continue;
      out[e] = block_average(rows.data(), sx0, fx, fy, cn, inv_area);
    }
  }
}

// ---- other factors: area-weighted tables ----

struct AreaTap {
  int src;  // source index (pixels)
  int dst;  // destination index (pixels)
  float w;
};

// OpenCV's computeResizeAreaTab: the source cells each destination cell covers, with their covered fraction.
std::vector<AreaTap> area_taps(int src_len, int dst_len, double scale) {
  std::vector<AreaTap> taps;
  taps.reserve(static_cast<size_t>(src_len) * 2);
  for (int d = 0; d < dst_len; ++d) {
    const double f1 = d * scale;
    const double f2 = f1 + scale;
    const double cell = std::min(scale, src_len - f1);
    int s1 = static_cast<int>(std::ceil(f1));
    int s2 = floor_to_int(f2);
    s2 = std::min(s2, src_len - 1);
    s1 = std::min(s1, s2);
    if (s1 - f1 > 1e-3) taps.push_back({s1 - 1, d, static_cast<float>((s1 - f1) / cell)});
    for (int s = s1; s < s2; ++s) taps.push_back({s, d, static_cast<float>(1.0 / cell)});
    if (f2 - s2 > 1e-3) taps.push_back({s2, d, static_cast<float>(std::min(std::min(f2 - s2, 1.), cell) / cell)});
  }
  return taps;
}

template <typename T>
void area_weighted(const T* src, int sh, int sw, int cn, T* dst, int dh, int dw, double sx, double sy) {
  using W = typename AreaTraits<T>::Work;
  const std::vector<AreaTap> xt = area_taps(sw, dw, sx), yt = area_taps(sh, dh, sy);
  const int width = dw * cn;
  std::vector<W> buf(static_cast<size_t>(width)), sum(static_cast<size_t>(width));
  const size_t src_stride = static_cast<size_t>(sw) * cn;
  size_t j = 0;
  for (int dy = 0; dy < dh; ++dy) {
    bool first = true;
    for (; j < yt.size() && yt[j].dst == dy; ++j) {
      const T* row = src + static_cast<size_t>(yt[j].src) * src_stride;
      std::fill(buf.begin(), buf.end(), W(0));
      for (const AreaTap& t : xt) {
        const W a = t.w;
        for (int c = 0; c < cn; ++c) buf[t.dst * cn + c] = buf[t.dst * cn + c] + W(row[t.src * cn + c]) * a;
      }
      const W beta = yt[j].w;
      for (int e = 0; e < width; ++e) sum[e] = first ? beta * buf[e] : sum[e] + beta * buf[e];
      first = false;
    }
    T* out = dst + static_cast<size_t>(dy) * width;
    for (int e = 0; e < width; ++e) out[e] = AreaTraits<T>::store(sum[e]);
  }
}

template <typename T>
void area(const T* src, int sh, int sw, int cn, T* dst, int dh, int dw) {
  const double sx = cv_scale(sw, dw), sy = cv_scale(sh, dh);
  const int ix = round_to_int(sx), iy = round_to_int(sy);
  const bool fast = std::abs(sx - ix) < DBL_EPSILON && std::abs(sy - iy) < DBL_EPSILON;
  if (fast) {
    area_fast(src, sw, cn, dst, dh, dw, ix, iy);
  } else {
    area_weighted(src, sh, sw, cn, dst, dh, dw, sx, sy);
  }
}

}  // namespace

void area_u8(const uint8_t* src, int sh, int sw, int cn, uint8_t* dst, int dh, int dw) {
  area(src, sh, sw, cn, dst, dh, dw);
}
void area_f32(const float* src, int sh, int sw, int cn, float* dst, int dh, int dw) {
  area(src, sh, sw, cn, dst, dh, dw);
}
void area_f64(const double* src, int sh, int sw, int cn, double* dst, int dh, int dw) {
  area(src, sh, sw, cn, dst, dh, dw);
}

}  // namespace dacpp::pipeline::detail
