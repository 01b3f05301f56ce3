// Internals of cv_resize shared by its two translation units (cubic, area). Not part of the pipeline's interface.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace dacpp::pipeline::detail {

// OpenCV's cvFloor for a float: the largest int not above v.
inline int floor_to_int(float v) {
  const int i = static_cast<int>(v);
  return i - (static_cast<float>(i) > v ? 1 : 0);
}
inline int floor_to_int(double v) {
  const int i = static_cast<int>(v);
  return i - (static_cast<double>(i) > v ? 1 : 0);
}

// OpenCV's cvRound: nearest, ties to even (the SSE conversion; the default rounding mode).
inline int round_to_int(float v) { return static_cast<int>(std::nearbyint(v)); }
inline int round_to_int(double v) { return static_cast<int>(std::nearbyint(v)); }

// OpenCV's saturate_cast<uchar> from int / float / double.
inline uint8_t saturate_u8(int v) { return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v)); }
inline uint8_t saturate_u8(float v) { return saturate_u8(round_to_int(v)); }
inline uint8_t saturate_u8(double v) { return saturate_u8(round_to_int(v)); }
inline int16_t saturate_s16(int v) {
  return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}

// The scale cv2 derives from the sizes: 1 / (dst / src), both in double (not src / dst: they can differ in the
// last bit, and the sample positions depend on it).
inline double cv_scale(int src_len, int dst_len) {
  const double inv = static_cast<double>(dst_len) / static_cast<double>(src_len);
  return 1.0 / inv;
}

// Same-size copy, and the two interpolations per element type. Arguments are validated by the caller.
void cubic_u8(const uint8_t* src, int sh, int sw, int cn, uint8_t* dst, int dh, int dw);
void cubic_f32(const float* src, int sh, int sw, int cn, float* dst, int dh, int dw);
void cubic_f64(const double* src, int sh, int sw, int cn, double* dst, int dh, int dw);
// cubic_f64 of a uint8 source whose values are first mapped through a 256-entry table.
void cubic_u8_lut_f64(const uint8_t* src, const double* lut, int sh, int sw, int cn, double* dst, int dh, int dw);
void area_u8(const uint8_t* src, int sh, int sw, int cn, uint8_t* dst, int dh, int dw);
void area_f32(const float* src, int sh, int sw, int cn, float* dst, int dh, int dw);
void area_f64(const double* src, int sh, int sw, int cn, double* dst, int dh, int dw);

}  // namespace dacpp::pipeline::detail
