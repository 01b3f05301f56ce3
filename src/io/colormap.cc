// Colour maps and colorize (see colormap.h).
#include "io/colormap.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/host_memory.h"

namespace dacpp::io {
namespace {

// ColorBrewer "Spectral", 11 classes, at t = 0, 0.1, ..., 1 (matplotlib's 'Spectral' order).
constexpr uint8_t kSpectral[11][3] = {
    {0x9e, 0x01, 0x42}, {0xd5, 0x3e, 0x4f}, {0xf4, 0x6d, 0x43}, {0xfd, 0xae, 0x61}, {0xfe, 0xe0, 0x8b},
    {0xff, 0xff, 0xbf}, {0xe6, 0xf5, 0x98}, {0xab, 0xdd, 0xa4}, {0x66, 0xc2, 0xa5}, {0x32, 0x88, 0xbd},
    {0x5e, 0x4f, 0xa2}};

// Turbo: Anton Mikhailov's degree-5 polynomial fit of the turbo colour map (per channel, coefficients of
// 1, t, t², t³, t⁴, t⁵).
constexpr double kTurbo[3][6] = {
    {0.13572138, 4.61539260, -42.66032258, 132.13108234, -152.94239396, 59.28637943},
    {0.09140261, 2.19418839, 4.84296658, -14.18503333, 4.27729857, 2.82956604},
    {0.10667330, 12.64194608, -60.58204836, 110.36276771, -89.90310912, 27.34824973}};

uint8_t to_byte(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0)); }

}  // namespace

ColorMap parse_color_map(const std::string& name) {
  if (name == "turbo") return ColorMap::Turbo;
  if (name == "spectral") return ColorMap::Spectral;
  if (name == "gray" || name == "grey") return ColorMap::Gray;
  DACPP_THROW(ErrorCode::InvalidArgument, "unknown colour map '", name, "' (choices: turbo, spectral, gray)");
}

const char* color_map_name(ColorMap map) {
  switch (map) {
    case ColorMap::Turbo: return "turbo";
    case ColorMap::Spectral: return "spectral";
    default: return "gray";
  }
}

void color_at(ColorMap map, float t_in, uint8_t rgb[3]) {
  const double t = std::isnan(t_in) ? 0.0 : std::clamp(static_cast<double>(t_in), 0.0, 1.0);
  if (map == ColorMap::Gray) {
    rgb[0] = rgb[1] = rgb[2] = to_byte(t);
  } else if (map == ColorMap::Turbo) {
    for (int c = 0; c < 3; ++c) {
      const double* k = kTurbo[c];
      rgb[c] = to_byte(k[0] + t * (k[1] + t * (k[2] + t * (k[3] + t * (k[4] + t * k[5])))));
    }
  } else {
    const double pos = t * 10.0;
    const int i = std::min(9, static_cast<int>(pos));
    const double f = pos - i;
    for (int c = 0; c < 3; ++c) {
      const double v = kSpectral[i][c] + (kSpectral[i + 1][c] - kSpectral[i][c]) * f;
      rgb[c] = static_cast<uint8_t>(std::lround(v));
    }
  }
}

ValueRange robust_range(const float* values, size_t count, float low_pct, float high_pct) {
  DACPP_CHECK(values != nullptr || count == 0, ErrorCode::InvalidArgument, "robust_range: no data");
  DACPP_CHECK(low_pct >= 0 && low_pct <= high_pct && high_pct <= 100, ErrorCode::InvalidArgument,
              "robust_range: percentiles ", low_pct, ", ", high_pct, " must satisfy 0 <= low <= high <= 100");
  std::vector<float, host_memory::BufferAllocator<float>> finite;  // a 12 MP map's copy in huge pages
  finite.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (std::isfinite(values[i])) finite.push_back(values[i]);
  if (finite.empty()) return {};
  auto percentile = [&](double p) {
    const double pos = p / 100.0 * static_cast<double>(finite.size() - 1);
    const size_t k = static_cast<size_t>(pos);
    std::nth_element(finite.begin(), finite.begin() + k, finite.end());
    const double a = finite[k];
    if (k + 1 >= finite.size()) return a;
    const double b = *std::min_element(finite.begin() + k + 1, finite.end());
    return a + (b - a) * (pos - static_cast<double>(k));
  };
  ValueRange r;
  r.lo = static_cast<float>(percentile(low_pct));
  r.hi = static_cast<float>(percentile(high_pct));
  if (!(r.hi > r.lo)) r.hi = r.lo + std::max(1e-6f, std::abs(r.lo) * 1e-6f);
  return r;
}

Image colorize(const float* values, int height, int width, ColorMap map, bool invert, float lo, float hi) {
  DACPP_CHECK(values != nullptr, ErrorCode::InvalidArgument, "colorize: no data");
  DACPP_CHECK(height > 0 && width > 0, ErrorCode::InvalidArgument, "colorize: bad size ", height, "x", width);
  DACPP_CHECK(std::isfinite(lo) && std::isfinite(hi) && hi > lo, ErrorCode::InvalidArgument, "colorize: range [",
              lo, ", ", hi, "] is empty or not finite");
  Image out = Image::uninitialized(height, width);  // every pixel written below
  const double scale = 1.0 / (static_cast<double>(hi) - lo);
  const int64_t n = static_cast<int64_t>(height) * width;
  uint8_t* px = out.data();
  // Each pixel on its own: rows of a 12 MP map over the cores (~0.3 s on one).
#pragma omp parallel for schedule(static) if (n >= (int64_t{1} << 20))
  for (int64_t i = 0; i < n; ++i) {
    const float v = values[i];
    uint8_t* rgb = px + i * 3;
    if (!std::isfinite(v)) {  // black
      rgb[0] = rgb[1] = rgb[2] = 0;
      continue;
    }
    double t = std::clamp((static_cast<double>(v) - lo) * scale, 0.0, 1.0);
    if (invert) t = 1.0 - t;
    color_at(map, static_cast<float>(t), rgb);
  }
  return out;
}

}  // namespace dacpp::io
