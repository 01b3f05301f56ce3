// Position-embedding interpolation against a direct transcription of torch's bicubic upsampling with a scale
// factor (align_corners=False, A = −0.75, border-clamped taps, source step 1/scale_factor), and the Runner-owned
// cache's LRU bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "models/model_test_util.h"
#include "models/pos_embed_cache.h"
#include "ops/context.h"

namespace dacpp {
namespace {

double cubic_weight(double t, int tap) {
  const double a = -0.75;
  auto near = [&](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [&](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  switch (tap) {
    case 0: return far(t + 1);
    case 1: return near(t);
    case 2: return near(1 - t);
    default: return far(2 - t);
  }
}

// table: [M·M, E] → [gh·gw, E], as interpolate(scale_factor=((gh+off)/M, (gw+off)/M), mode="bicubic").
std::vector<float> direct_reference(const std::vector<float>& table, int64_t m, int64_t e, int64_t gh, int64_t gw,
                                    double off) {
  const double sh = m / (gh + off), sw = m / (gw + off);
  std::vector<float> out(static_cast<size_t>(gh * gw * e));
  for (int64_t oy = 0; oy < gh; ++oy)
    for (int64_t ox = 0; ox < gw; ++ox) {
      const double ry = (oy + 0.5) * sh - 0.5, rx = (ox + 0.5) * sw - 0.5;
      const int64_t y0 = static_cast<int64_t>(std::floor(ry)), x0 = static_cast<int64_t>(std::floor(rx));
      for (int64_t c = 0; c < e; ++c) {
        double acc = 0;
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            const int64_t y = std::clamp<int64_t>(y0 - 1 + i, 0, m - 1), x = std::clamp<int64_t>(x0 - 1 + j, 0, m - 1);
            acc += cubic_weight(ry - y0, i) * cubic_weight(rx - x0, j) * table[static_cast<size_t>((y * m + x) * e + c)];
          }
        out[static_cast<size_t>((oy * gw + ox) * e + c)] = static_cast<float>(acc);
      }
    }
  return out;
}

Tensor random_table(int64_t m, int64_t e) {
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(m * m * e));
  for (float& x : v) x = n(rng);
  return Tensor::from_vector({m * m, e}, v, "pos_patch");
}

TEST(PosEmbed, MatchesDirectBicubicWithOffset) {
  ops::Context ctx(Device::cpu(), 2);
  const int64_t m = 37, e = 6;
  Tensor table = random_table(m, e);
  const std::vector<float> src(table.data<float>(), table.data<float>() + table.numel());
  for (auto [gh, gw] : {std::pair<int64_t, int64_t>{10, 13}, {36, 27}, {45, 60}, {37, 38}, {1, 2}}) {
    Tensor got = models::interpolate_pos_embed(ctx, table, m, gh, gw, 0.1f);
    ASSERT_EQ(got.shape(), (Shape{gh * gw, e}));
    const std::vector<float> ref = direct_reference(src, m, e, gh, gw, 0.1);
    Tensor want = Tensor::from_vector({gh * gw, e}, ref);
    EXPECT_LE(testing::rel_l2(got, want), 1e-5) << gh << "x" << gw;
  }
}

TEST(PosEmbed, OffsetMattersSoTheTestCanFail) {
  const int64_t m = 37, e = 4, gh = 10, gw = 13;
  Tensor table = random_table(m, e);
  const std::vector<float> src(table.data<float>(), table.data<float>() + table.numel());
  Tensor with = Tensor::from_vector({gh * gw, e}, direct_reference(src, m, e, gh, gw, 0.1));
  Tensor without = Tensor::from_vector({gh * gw, e}, direct_reference(src, m, e, gh, gw, 0.0));
  EXPECT_GT(testing::rel_l2(with, without), 1e-3);
}

TEST(PosEmbed, CacheReturnsStoredTableForNativeGridAndBoundsEntries) {
  ops::Context ctx(Device::cpu(), 2);
  Tensor table = random_table(37, 4);
  models::PosEmbedCache cache(/*capacity=*/2);
  Tensor same = cache.get(ctx, table, 37, 37, 37, 0.1f);
  EXPECT_EQ(same.raw(), table.raw());
  EXPECT_EQ(cache.size(), 0u);
  Tensor a = cache.get(ctx, table, 37, 10, 13, 0.1f);
  EXPECT_EQ(cache.get(ctx, table, 37, 10, 13, 0.1f).raw(), a.raw());
  cache.get(ctx, table, 37, 20, 13, 0.1f);
  cache.get(ctx, table, 37, 30, 13, 0.1f);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.get(ctx, table, 37, 10, 13, 0.1f).raw(), a.raw());  // evicted, recomputed
}

}  // namespace
}  // namespace dacpp
