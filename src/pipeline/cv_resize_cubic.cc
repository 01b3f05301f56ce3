// INTER_CUBIC of cv_resize: separable 4-tap Keys cubic (A = -0.75), replicated border, with OpenCV's arithmetic
// (see cv_resize.h for what is reproduced and why).
#include <cstddef>
#include <type_traits>
#include <vector>

#include "pipeline/cv_resize_detail.h"

namespace dacpp::pipeline::detail {
namespace {

constexpr int kCoefBits = 11;  // OpenCV INTER_RESIZE_COEF_BITS
constexpr int kCoefScale = 1 << kCoefBits;
// Elements of a row the vertical pass of OpenCV's SSE2 build handles per SIMD step (8 int16 lanes for uint8, 4
// float lanes for float). The rest of the row takes the scalar formula.
constexpr int kVecStepU8 = 8;
constexpr int kVecStepF32 = 4;

// Tap weights for offsets -1, 0, +1, +2 at fraction x in [0, 1), evaluated in float in OpenCV's operation order.
void cubic_weights(float x, float c[4]) {
  const float a = -0.75f;
  const float xp = x + 1;
  const float xm = 1 - x;
  c[0] = ((a * xp - 5 * a) * xp + 8 * a) * xp - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * xm - (a + 3)) * xm * xm + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

// Taps along one axis: for destination index d, source indices first[d] .. first[d] + 3 (before clamping) with
// weights w[4d .. 4d + 3].
struct CubicAxis {
  std::vector<int> first;
  std::vector<float> w;
};

CubicAxis cubic_axis(int src_len, int dst_len) {
  const double scale = cv_scale(src_len, dst_len);
  CubicAxis ax;
  ax.first.resize(static_cast<size_t>(dst_len));
  ax.w.resize(static_cast<size_t>(dst_len) * 4);
  for (int d = 0; d < dst_len; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    const int s = floor_to_int(f);
    f -= static_cast<float>(s);
    cubic_weights(f, &ax.w[static_cast<size_t>(d) * 4]);
    ax.first[static_cast<size_t>(d)] = s - 1;
  }
  return ax;
}

// The Q11 weights of the uint8 path.
std::vector<int16_t> quantize(const std::vector<float>& w) {
  std::vector<int16_t> q(w.size());
  for (size_t i = 0; i < w.size(); ++i) q[i] = saturate_s16(round_to_int(w[i] * static_cast<float>(kCoefScale)));
  return q;
}

inline int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// Reads a source element as the work type, optionally through a lookup table (uint8 source of a float resize).
template <typename T, typename WT>
struct Load {
  const WT* lut = nullptr;
  WT operator()(T v) const {
    if constexpr (std::is_same_v<T, uint8_t>) {
      if (lut != nullptr) return lut[v];
    }
    return WT(v);
  }
};

// Horizontal pass of one source row into `out` (dw * cn values of the work type WT), left-to-right sums.
template <typename T, typename WT, typename AT>
void horizontal(const T* row, int sw, int cn, const CubicAxis& ax, const AT* w, int dw, Load<T, WT> ld, WT* out) {
  for (int dx = 0; dx < dw; ++dx) {
    const int s = ax.first[static_cast<size_t>(dx)];
    const int i0 = clamp_index(s, sw) * cn, i1 = clamp_index(s + 1, sw) * cn;
    const int i2 = clamp_index(s + 2, sw) * cn, i3 = clamp_index(s + 3, sw) * cn;
    const AT* a = w + static_cast<size_t>(dx) * 4;
    WT* o = out + static_cast<size_t>(dx) * cn;
    for (int c = 0; c < cn; ++c) {
      o[c] = ld(row[i0 + c]) * WT(a[0]) + ld(row[i1 + c]) * WT(a[1]) + ld(row[i2 + c]) * WT(a[2]) +
             ld(row[i3 + c]) * WT(a[3]);
    }
  }
}

// Vertical pass, uint8: SIMD blocks in float (s0·b0 + (s1·b1 + (s2·b2 + s3·b3)), round to even, saturate),
// the tail in Q22 fixed point with round-half-up.
void vertical_u8(const int* const r[4], const int16_t* b, int width, uint8_t* out) {
  const float unit = 1.f / static_cast<float>(kCoefScale * kCoefScale);
  const float f0 = b[0] * unit, f1 = b[1] * unit, f2 = b[2] * unit, f3 = b[3] * unit;
  const int vec_end = width - width % kVecStepU8;
  int x = 0;
  for (; x < vec_end; ++x) {
    const float v = static_cast<float>(r[0][x]) * f0 +
                    (static_cast<float>(r[1][x]) * f1 +
                     (static_cast<float>(r[2][x]) * f2 + static_cast<float>(r[3][x]) * f3));
    out[x] = saturate_u8(static_cast<int>(saturate_s16(round_to_int(v))));
  }
  constexpr int kShift = 2 * kCoefBits;
  for (; x < width; ++x) {
    const int v = r[0][x] * b[0] + r[1][x] * b[1] + r[2][x] * b[2] + r[3][x] * b[3];
    out[x] = saturate_u8((v + (1 << (kShift - 1))) >> kShift);
  }
}

// Vertical pass, float: SIMD blocks as s0·b0 + (s1·b1 + (s2·b2 + s3·b3)), the tail left to right.
void vertical_f32(const float* const r[4], const float* b, int width, float* out) {
  const int vec_end = width - width % kVecStepF32;
  int x = 0;
  for (; x < vec_end; ++x) out[x] = r[0][x] * b[0] + (r[1][x] * b[1] + (r[2][x] * b[2] + r[3][x] * b[3]));
  for (; x < width; ++x) out[x] = r[0][x] * b[0] + r[1][x] * b[1] + r[2][x] * b[2] + r[3][x] * b[3];
}

// Vertical pass, double: no SIMD in OpenCV, left to right with float weights widened to double.
void vertical_f64(const double* const r[4], const float* b, int width, double* out) {
  const double b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
  for (int x = 0; x < width; ++x) out[x] = r[0][x] * b0 + r[1][x] * b1 + r[2][x] * b2 + r[3][x] * b3;
}

// The whole resize: for each destination row, the four source rows it needs go through the horizontal pass
// (recomputed per row: at most 4 rows of work per output row), then the vertical pass.
template <typename T, typename WT, typename AT, typename OT, typename VFn>
void cubic(const T* src, int sh, int sw, int cn, OT* dst, int dh, int dw, const CubicAxis& ax, const AT* wx,
           const CubicAxis& ay, const AT* wy, Load<T, WT> ld, VFn vertical) {
  const int width = dw * cn;
  std::vector<WT> rows(static_cast<size_t>(width) * 4);
  const size_t src_stride = static_cast<size_t>(sw) * cn;
  for (int dy = 0; dy < dh; ++dy) {
    const WT* r[4];
    for (int k = 0; k < 4; ++k) {
      const int sy = clamp_index(ay.first[static_cast<size_t>(dy)] + k, sh);
      WT* buf = rows.data() + static_cast<size_t>(k) * width;
      horizontal<T, WT, AT>(src + static_cast<size_t>(sy) * src_stride, sw, cn, ax, wx, dw, ld, buf);
      r[k] = buf;
    }
    vertical(r, wy + static_cast<size_t>(dy) * 4, width, dst + static_cast<size_t>(dy) * width);
  }
}

}  // namespace

void cubic_u8(const uint8_t* src, int sh, int sw, int cn, uint8_t* dst, int dh, int dw) {
  const CubicAxis ax = cubic_axis(sw, dw), ay = cubic_axis(sh, dh);
  const std::vector<int16_t> qx = quantize(ax.w), qy = quantize(ay.w);
  cubic<uint8_t, int, int16_t>(src, sh, sw, cn, dst, dh, dw, ax, qx.data(), ay, qy.data(), {}, vertical_u8);
}

void cubic_f32(const float* src, int sh, int sw, int cn, float* dst, int dh, int dw) {
  const CubicAxis ax = cubic_axis(sw, dw), ay = cubic_axis(sh, dh);
  cubic<float, float, float>(src, sh, sw, cn, dst, dh, dw, ax, ax.w.data(), ay, ay.w.data(), {}, vertical_f32);
}

void cubic_f64(const double* src, int sh, int sw, int cn, double* dst, int dh, int dw) {
  const CubicAxis ax = cubic_axis(sw, dw), ay = cubic_axis(sh, dh);
  cubic<double, double, float>(src, sh, sw, cn, dst, dh, dw, ax, ax.w.data(), ay, ay.w.data(), {}, vertical_f64);
}

void cubic_u8_lut_f64(const uint8_t* src, const double* lut, int sh, int sw, int cn, double* dst, int dh, int dw) {
  const CubicAxis ax = cubic_axis(sw, dw), ay = cubic_axis(sh, dh);
  const Load<uint8_t, double> ld{lut};
  cubic<uint8_t, double, float>(src, sh, sw, cn, dst, dh, dw, ax, ax.w.data(), ay, ay.w.data(), ld, vertical_f64);
}

}  // namespace dacpp::pipeline::detail
