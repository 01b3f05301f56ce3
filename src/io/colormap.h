// Colour maps for depth visualisation: turbo (Google's polynomial approximation), spectral (matplotlib's
// 'Spectral': the 11-colour ColorBrewer diverging scheme, red → yellow → blue, interpolated linearly) and grey.
#pragma once

#include <string>

#include "io/image.h"

namespace dacpp::io {

enum class ColorMap { Turbo, Spectral, Gray };

// "turbo" / "spectral" / "gray" (also "grey"), case-sensitive. Throws InvalidArgument naming the choices.
ColorMap parse_color_map(const std::string& name);
const char* color_map_name(ColorMap map);

// The colour at t in [0, 1] (clamped; NaN → 0) as 8-bit RGB.
void color_at(ColorMap map, float t, uint8_t rgb[3]);

struct ValueRange {
  float lo = 0.f;
  float hi = 1.f;
};

// A robust display range: the 2nd and 98th percentiles of the finite values (numpy's linear interpolation), widened
// to a non-empty range when they coincide; {0, 1} when no value is finite.
ValueRange robust_range(const float* values, size_t count, float low_pct = 2.f, float high_pct = 98.f);

// An h×w RGB image of `values` (h×w, row-major): t = (v - lo) / (hi - lo), clamped to [0, 1], then 1 - t when
// `invert` (DA2's 'Spectral_r' look: near = red), then the colour map. Non-finite values are drawn black.
// Throws InvalidArgument for null data, a bad size or hi <= lo.
Image colorize(const float* values, int height, int width, ColorMap map, bool invert, float lo, float hi);

}  // namespace dacpp::io
