// cv_resize: OpenCV's cv2.resize(src, (dst_w, dst_h), interpolation=...) for INTER_CUBIC and INTER_AREA, rewritten
// to give the same numbers as the OpenCV 4.x build the official Depth Anything code runs on (x86-64, SSE2 baseline,
// no IPP, no custom HAL). The official preprocessing is defined by these exact arithmetic choices, so the parity of
// the whole pipeline depends on them (spec/models.md §2a, §2b).
//
// What is reproduced, per element type:
//  - uint8 INTER_CUBIC: float tap weights (A = -0.75, sample at (d + 0.5)·scale - 0.5 computed in double then
//    rounded to float) quantised to Q11 shorts; the horizontal pass in exact int32; the vertical pass in OpenCV's
//    SIMD float arithmetic for whole SIMD blocks of a row and its Q22 fixed-point rounding for the tail. Border:
//    replicate.
//  - float / double INTER_CUBIC: float weights, arithmetic in the element type.
//  - INTER_AREA (shrinking on both axes only): integer factors use the block average (uint8: (sum + 2) >> 2 for
//    2×2, otherwise round(sum · (1/area)) in float); other factors use the area-weighted tables (float weights,
//    float accumulation for uint8/float, double for double) with round-half-even saturation for uint8.
//
// Images are interleaved H×W×C, C in 1..4, rows contiguous. Equal sizes copy (as cv2 does).
// Errors: InvalidArgument for a bad size or channel count; Unsupported for INTER_AREA that enlarges an axis.
#pragma once

#include <cstdint>

namespace dacpp::pipeline {

enum class CvInterpolation { Cubic, Area };

// "INTER_CUBIC" / "INTER_AREA".
const char* cv_interpolation_name(CvInterpolation interp);

void cv_resize(const uint8_t* src, int src_h, int src_w, int channels, uint8_t* dst, int dst_h, int dst_w,
               CvInterpolation interp);
void cv_resize(const float* src, int src_h, int src_w, int channels, float* dst, int dst_h, int dst_w,
               CvInterpolation interp);
void cv_resize(const double* src, int src_h, int src_w, int channels, double* dst, int dst_h, int dst_w,
               CvInterpolation interp);

// cv2.resize(src.astype(float64) / divisor, ...) for a uint8 source, without materialising the float64 source
// (DA2 resizes its image after dividing it by 255.0). Same numbers as converting first: the division is per element.
void cv_resize_u8_to_f64(const uint8_t* src, int src_h, int src_w, int channels, double divisor, double* dst,
                         int dst_h, int dst_w, CvInterpolation interp);

}  // namespace dacpp::pipeline
