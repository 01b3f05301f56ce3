// cv_resize: argument checks and dispatch by element type and interpolation (see cv_resize.h).
#include "pipeline/cv_resize.h"

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "pipeline/cv_resize_detail.h"

namespace dacpp::pipeline {

const char* cv_interpolation_name(CvInterpolation interp) {
  return interp == CvInterpolation::Cubic ? "INTER_CUBIC" : "INTER_AREA";
}

namespace {

// Largest side accepted: OpenCV's index arithmetic is int, and every row offset here is int too.
constexpr int kMaxSide = 1 << 20;

void check_args(const void* src, int sh, int sw, int cn, const void* dst, int dh, int dw, CvInterpolation interp) {
  const char* name = cv_interpolation_name(interp);
  DACPP_CHECK(src != nullptr && dst != nullptr, ErrorCode::InvalidArgument, "cv_resize(", name,
              "): null image buffer");
  DACPP_CHECK(cn >= 1 && cn <= 4, ErrorCode::InvalidArgument, "cv_resize(", name, "): ", cn,
              " channels, expected 1..4");
  DACPP_CHECK(sh > 0 && sw > 0 && dh > 0 && dw > 0 && sh <= kMaxSide && sw <= kMaxSide && dh <= kMaxSide &&
                  dw <= kMaxSide,
              ErrorCode::InvalidArgument, "cv_resize(", name, "): bad size ", sh, "x", sw, " -> ", dh, "x", dw,
              " (each side must be in 1..", kMaxSide, ")");
  DACPP_CHECK(static_cast<int64_t>(sw) * cn <= std::numeric_limits<int>::max() / 2 &&
                  static_cast<int64_t>(dw) * cn <= std::numeric_limits<int>::max() / 2,
              ErrorCode::InvalidArgument, "cv_resize(", name, "): row too wide");
  if (interp == CvInterpolation::Area) {
    DACPP_CHECK(dh <= sh && dw <= sw, ErrorCode::Unsupported, "cv_resize(INTER_AREA): enlarging ", sh, "x", sw,
                " -> ", dh, "x", dw, " is not implemented (INTER_AREA is only used for shrinking)");
  }
}

template <typename T>
bool copy_if_same(const T* src, int sh, int sw, int cn, T* dst, int dh, int dw) {
  if (sh != dh || sw != dw) return false;
  std::copy(src, src + static_cast<size_t>(sh) * sw * cn, dst);
  return true;
}

}  // namespace

void cv_resize(const uint8_t* src, int sh, int sw, int cn, uint8_t* dst, int dh, int dw, CvInterpolation interp) {
  check_args(src, sh, sw, cn, dst, dh, dw, interp);
  if (copy_if_same(src, sh, sw, cn, dst, dh, dw)) return;
  if (interp == CvInterpolation::Cubic)
    detail::cubic_u8(src, sh, sw, cn, dst, dh, dw);
  else
    detail::area_u8(src, sh, sw, cn, dst, dh, dw);
}

void cv_resize(const float* src, int sh, int sw, int cn, float* dst, int dh, int dw, CvInterpolation interp) {
  check_args(src, sh, sw, cn, dst, dh, dw, interp);
  if (copy_if_same(src, sh, sw, cn, dst, dh, dw)) return;
  if (interp == CvInterpolation::Cubic)
    detail::cubic_f32(src, sh, sw, cn, dst, dh, dw);
  else
    detail::area_f32(src, sh, sw, cn, dst, dh, dw);
}

void cv_resize(const double* src, int sh, int sw, int cn, double* dst, int dh, int dw, CvInterpolation interp) {
  check_args(src, sh, sw, cn, dst, dh, dw, interp);
  if (copy_if_same(src, sh, sw, cn, dst, dh, dw)) return;
  if (interp == CvInterpolation::Cubic)
    detail::cubic_f64(src, sh, sw, cn, dst, dh, dw);
  else
    detail::area_f64(src, sh, sw, cn, dst, dh, dw);
}

void cv_resize_u8_to_f64(const uint8_t* src, int sh, int sw, int cn, double divisor, double* dst, int dh, int dw,
                         CvInterpolation interp) {
  check_args(src, sh, sw, cn, dst, dh, dw, interp);
  DACPP_CHECK(divisor != 0 && std::isfinite(divisor), ErrorCode::InvalidArgument, "cv_resize_u8_to_f64: divisor ",
              divisor, " must be finite and non-zero");
  double lut[256];
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<double>(i) / divisor;
  if (interp == CvInterpolation::Cubic && (sh != dh || sw != dw)) {
    detail::cubic_u8_lut_f64(src, lut, sh, sw, cn, dst, dh, dw);
    return;
  }
  const size_t n = static_cast<size_t>(sh) * sw * cn;
  std::vector<double> converted(n);
  for (size_t i = 0; i < n; ++i) converted[i] = lut[src[i]];
  cv_resize(converted.data(), sh, sw, cn, dst, dh, dw, interp);
}

}  // namespace dacpp::pipeline
