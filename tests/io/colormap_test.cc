// Colour maps, colorize and the robust display range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "io/colormap.h"

namespace dacpp::io {
namespace {

std::vector<int> rgb(ColorMap m, float t) {
  uint8_t c[3];
  color_at(m, t, c);
  return {c[0], c[1], c[2]};
}

TEST(ColorMap, SpectralAnchorsAndInterpolation) {
  EXPECT_EQ(rgb(ColorMap::Spectral, 0.f), (std::vector<int>{0x9e, 0x01, 0x42}));
  EXPECT_EQ(rgb(ColorMap::Spectral, 0.5f), (std::vector<int>{0xff, 0xff, 0xbf}));
  EXPECT_EQ(rgb(ColorMap::Spectral, 1.f), (std::vector<int>{0x5e, 0x4f, 0xa2}));
  EXPECT_EQ(rgb(ColorMap::Spectral, 0.05f), (std::vector<int>{186, 32, 73}));  // halfway 9e0142 → d53e4f
  EXPECT_EQ(rgb(ColorMap::Spectral, -3.f), rgb(ColorMap::Spectral, 0.f));      // clamped
  EXPECT_EQ(rgb(ColorMap::Spectral, NAN), rgb(ColorMap::Spectral, 0.f));
}

TEST(ColorMap, TurboShapeAndGray) {
  const auto lo = rgb(ColorMap::Turbo, 0.f), blue = rgb(ColorMap::Turbo, 0.15f), green = rgb(ColorMap::Turbo, 0.5f),
             red = rgb(ColorMap::Turbo, 0.9f);
  EXPECT_LT(lo[0] + lo[1] + lo[2], 150);        // dark at the low end
  EXPECT_GT(blue[2], blue[0]);                  // blue
  EXPECT_GT(green[1], 200);                     // green-yellow in the middle
  EXPECT_GT(red[0], red[2] + 100);              // red at the high end
  EXPECT_EQ(rgb(ColorMap::Gray, 0.f), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(rgb(ColorMap::Gray, 1.f), (std::vector<int>{255, 255, 255}));
  EXPECT_EQ(parse_color_map("turbo"), ColorMap::Turbo);
  EXPECT_EQ(parse_color_map("grey"), ColorMap::Gray);
  EXPECT_THROW(parse_color_map("jet"), Error);
}

TEST(ColorMap, ColorizeInvertClampAndNonFinite) {
  const float v[4] = {0.f, 10.f, 20.f, NAN};
  const Image a = colorize(v, 2, 2, ColorMap::Gray, false, 0.f, 10.f);
  EXPECT_EQ(a.data()[0], 0);
  EXPECT_EQ(a.data()[3], 255);
  EXPECT_EQ(a.data()[6], 255);  // above hi: clamped
  EXPECT_EQ(a.data()[9], 0);    // NaN: black
  const Image b = colorize(v, 2, 2, ColorMap::Gray, true, 0.f, 10.f);
  EXPECT_EQ(b.data()[0], 255);
  EXPECT_EQ(b.data()[3], 0);
  EXPECT_THROW(colorize(v, 2, 2, ColorMap::Gray, false, 1.f, 1.f), Error);
  EXPECT_THROW(colorize(nullptr, 2, 2, ColorMap::Gray, false, 0.f, 1.f), Error);
}

// A map over 1 M pixels is coloured on several threads: each pixel as color_at gives it, non-finite ones black
// (the image is not zero-filled first, so every pixel must be written).
TEST(ColorMap, LargeMapsEqualThePixelByPixelColours) {
  const int h = 1031, w = 1027;
  std::vector<float> v(static_cast<size_t>(h) * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)) * 5.0);
  v[0] = NAN;
  v[v.size() / 2] = INFINITY;
  v[v.size() - 1] = -INFINITY;
  for (ColorMap map : {ColorMap::Turbo, ColorMap::Spectral, ColorMap::Gray}) {
    const Image img = colorize(v.data(), h, w, map, map == ColorMap::Spectral, -4.f, 4.5f);
    size_t wrong = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      uint8_t want[3] = {0, 0, 0};
      if (std::isfinite(v[i])) {
        const double lo = -4.f, scale = 1.0 / (static_cast<double>(4.5f) - lo);  // colorize's own expression
        double t = std::clamp((static_cast<double>(v[i]) - lo) * scale, 0.0, 1.0);
        if (map == ColorMap::Spectral) t = 1.0 - t;
        color_at(map, static_cast<float>(t), want);
      }
      wrong += std::memcmp(img.data() + 3 * i, want, 3) != 0;
    }
    EXPECT_EQ(wrong, 0u) << color_map_name(map);
  }
}

TEST(ColorMap, RobustRangeIsNumpyPercentiles) {
  std::vector<float> v;
  for (int i = 99; i >= 0; --i) v.push_back(static_cast<float>(i));
  v.push_back(INFINITY);
  v.push_back(NAN);
  const ValueRange r = robust_range(v.data(), v.size());
  EXPECT_NEAR(r.lo, 1.98f, 1e-5);  // np.percentile(range(100), 2)
  EXPECT_NEAR(r.hi, 97.02f, 1e-5);
  const float flat[3] = {4.f, 4.f, 4.f};
  const ValueRange f = robust_range(flat, 3);
  EXPECT_EQ(f.lo, 4.f);
  EXPECT_GT(f.hi, f.lo);
  const float none[2] = {NAN, -INFINITY};
  const ValueRange n = robust_range(none, 2);
  EXPECT_EQ(n.lo, 0.f);
  EXPECT_EQ(n.hi, 1.f);
}

}  // namespace
}  // namespace dacpp::io
