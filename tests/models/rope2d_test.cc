// Rope2d against the textbook pairwise-rotation form of 2-D RoPE: within each half (rows, then columns) of the
// head dim, the pair (t_j, t_{j+d/2}) is rotated by p·base^(−2j/d).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/arena.h"
#include "layers/rope2d.h"
#include "models/dinov2_internal.h"
#include "models/pos_embed_cache.h"
#include "models/model_test_util.h"

namespace dacpp {
namespace {

TEST(Rope2d, MatchesPairwiseRotation) {
  const int64_t b = 2, h = 3, n = 5, dd = 16, d = dd / 2;
  const float base = 100.f;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(b * h * n * dd));
  for (float& x : v) x = nd(rng);
  const std::vector<int32_t> pos = {0, 0, 1, 1, 1, 2, 2, 1, 3, 7};
  std::vector<float> want(v.size());
  for (int64_t r = 0; r < b * h * n; ++r) {
    const int64_t tok = r % n;
    for (int axis = 0; axis < 2; ++axis) {
      const double p = pos[static_cast<size_t>(2 * tok + axis)];
      const float* t = &v[static_cast<size_t>(r * dd + axis * d)];
      float* o = &want[static_cast<size_t>(r * dd + axis * d)];
      for (int64_t j = 0; j < d / 2; ++j) {
        const double th = p * std::pow(static_cast<double>(base), -2.0 * j / d);
        o[j] = static_cast<float>(t[j] * std::cos(th) - t[j + d / 2] * std::sin(th));
        o[j + d / 2] = static_cast<float>(t[j + d / 2] * std::cos(th) + t[j] * std::sin(th));
      }
    }
  }
  ops::Context ctx(Device::cpu(), 2);
  HostArena arena;
  layers::Exec ex{ctx, arena};
  Tensor x = Tensor::from_vector({b, h, n, dd}, v, "q");
  Tensor original = x.clone();
  layers::Rope2d(base).apply(ex, x, pos);
  EXPECT_LE(testing::rel_l2(x, Tensor::from_vector({b, h, n, dd}, want)), 1e-6);
  EXPECT_GT(testing::rel_l2(x, original), 1e-2);  // positions ≠ 0 do rotate
}

TEST(Rope2d, RejectsBadShapes) {
  ops::Context ctx(Device::cpu(), 1);
  HostArena arena;
  layers::Exec ex{ctx, arena};
  Tensor x = Tensor::zeros({1, 1, 2, 6});
  EXPECT_THROW(layers::Rope2d().apply(ex, x, {0, 0, 1, 1}), Error);  // 6 % 4 != 0
  Tensor y = Tensor::zeros({1, 1, 2, 8});
  EXPECT_THROW(layers::Rope2d().apply(ex, y, {0, 0}), Error);  // 1 position for 2 tokens
}

TEST(Rope2d, TensorPositionsMatchVectorPositions) {
  const int64_t n = 5, dd = 8;
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(2 * n * dd));
  for (float& x : v) x = nd(rng);
  const std::vector<int32_t> pos = models::detail::rope_positions(2, 2, /*global=*/false);
  ops::Context ctx(Device::cpu(), 1);
  HostArena arena;
  layers::Exec ex{ctx, arena};
  Tensor a = Tensor::from_vector({1, 2, n, dd}, v), b = a.clone();
  layers::Rope2d().apply(ex, a, pos);
  const Tensor t = layers::upload_positions(ctx, pos);
  ASSERT_EQ(t.shape(), (Shape{n, 2}));
  EXPECT_EQ(t.dtype(), DType::I32);
  layers::Rope2d().apply(ex, b, t);
  EXPECT_EQ(testing::rel_l2(a, b), 0.0);
  EXPECT_GT(testing::rel_l2(a, Tensor::from_vector({1, 2, n, dd}, v)), 1e-2);
  EXPECT_THROW(layers::upload_positions(ctx, {0, 0, 1}), Error);  // not (row, column) pairs
}

TEST(Rope2d, PositionsCachedPerGridAndKind) {
  ops::Context ctx(Device::cpu(), 1);
  models::PosEmbedCache cache(1);
  const Tensor local = cache.rope_positions(ctx, 2, 3, /*global=*/false, 1);
  const Tensor global = cache.rope_positions(ctx, 2, 3, /*global=*/true, 2);
  ASSERT_EQ(local.shape(), (Shape{7, 2}));
  ASSERT_EQ(global.shape(), (Shape{14, 2}));
  const std::vector<int32_t> want_local = models::detail::rope_positions(2, 3, false);
  const std::vector<int32_t> want_global = models::detail::rope_positions(2, 3, true, 2);
  EXPECT_TRUE(std::equal(want_local.begin(), want_local.end(), local.data<int32_t>()));
  EXPECT_TRUE(std::equal(want_global.begin(), want_global.end(), global.data<int32_t>()));
  EXPECT_EQ(cache.rope_positions(ctx, 2, 3, false, 1).raw(), local.raw());  // kept, not rebuilt
  EXPECT_EQ(cache.rope_positions(ctx, 2, 3, true, 2).raw(), global.raw());
  EXPECT_NE(cache.rope_positions(ctx, 3, 2, false, 1).raw(), local.raw());
  EXPECT_EQ(cache.size(), 0u);  // pos-embed tables are counted apart
}

TEST(HostArenaMark, RewindFreesOnlyLaterAllocations) {
  HostArena arena(/*block_bytes=*/1024);
  Tensor keep = arena.alloc({16});
  const HostArena::Mark m = arena.mark();
  arena.alloc({200});
  arena.alloc({300});  // spills into a second block
  arena.rewind(m);
  EXPECT_EQ(arena.used_bytes(), 64u);
  Tensor next = arena.alloc({16});
  EXPECT_EQ(static_cast<char*>(next.raw()), static_cast<char*>(keep.raw()) + 64);
}

}  // namespace
}  // namespace dacpp
