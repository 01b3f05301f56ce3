// ops::rope2d on the CPU: against the layer implementation (layers::Rope2d, the math the op was moved from) and the
// textbook pairwise rotation in double; plus its argument checks.
#include "ops/rope.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/arena.h"
#include "layers/rope2d.h"
#include "ops/op_test_util.h"

namespace dacpp {
namespace {

Tensor positions_tensor(const std::vector<int32_t>& pos) {
  Tensor t = Tensor::empty({static_cast<int64_t>(pos.size() / 2), 2}, DType::I32, "positions");
  for (size_t i = 0; i < pos.size(); ++i) t.data<int32_t>()[i] = pos[i];
  return t;
}

std::vector<int32_t> grid_positions(int64_t n, int cols) {
  std::vector<int32_t> pos;
  for (int64_t i = 0; i < n; ++i) {
    pos.push_back(static_cast<int32_t>(i / cols));
    pos.push_back(static_cast<int32_t>(i % cols));
  }
  return pos;
}

TEST(RopeOp, MatchesLayerImplementation) {
  const int64_t b = 2, h = 3, n = 37, dd = 64;
  const std::vector<int32_t> pos = grid_positions(n, 7);
  ops::Context ctx(Device::cpu(), 2);
  HostArena arena;
  layers::Exec ex{ctx, arena};
  Tensor x = test::random_tensor({b, h, n, dd}, 11, 1.f, "q");
  Tensor want = x.clone();
  layers::Rope2d(100.f).apply(ex, want, pos);
  ops::rope2d(ctx, x, positions_tensor(pos), 100.f);
  test::expect_close(x, want, 1e-6, 1e-5);
}

TEST(RopeOp, MatchesPairwiseRotationInDouble) {
  const int64_t b = 1, h = 2, n = 6, dd = 16, d = dd / 2;
  const std::vector<int32_t> pos = {0, 0, 1, 1, 1, 2, 2, 1, 3, 7, 40, 36};
  ops::Context ctx(Device::cpu(), 1);
  Tensor x = test::random_tensor({b, h, n, dd}, 3);
  Tensor want = x.clone();
  float* w = want.data<float>();
  const float* v = x.data<float>();
  for (int64_t r = 0; r < b * h * n; ++r) {
    for (int axis = 0; axis < 2; ++axis) {
      const double p = pos[static_cast<size_t>(2 * (r % n) + axis)];
      const int64_t off = r * dd + axis * d;
      for (int64_t j = 0; j < d / 2; ++j) {
        const double th = p * std::pow(100.0, -2.0 * j / d);
        w[off + j] = static_cast<float>(v[off + j] * std::cos(th) - v[off + j + d / 2] * std::sin(th));
        w[off + j + d / 2] = static_cast<float>(v[off + j + d / 2] * std::cos(th) + v[off + j] * std::sin(th));
      }
    }
  }
  Tensor original = x.clone();
  ops::rope2d(ctx, x, positions_tensor(pos), 100.f);
  test::expect_close(x, want, 1e-6, 1e-5);
  EXPECT_GT(test::diff(x, original).rel_l2, 1e-2);  // non-zero positions do rotate
}

TEST(RopeOp, RejectsBadArguments) {
  ops::Context ctx(Device::cpu(), 1);
  Tensor x = test::random_tensor({1, 1, 2, 8}, 1, 1.f, "q");
  const auto code = [&](Tensor& t, const Tensor& p, float base) {
    try {
      ops::rope2d(ctx, t, p, base);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;
  };
  Tensor odd = test::random_tensor({1, 1, 2, 6}, 1, 1.f, "q6");
  EXPECT_EQ(code(odd, positions_tensor({0, 0, 1, 1}), 100.f), ErrorCode::InvalidArgument);        // D % 4
  EXPECT_EQ(code(x, positions_tensor({0, 0, 1, 1, 2, 2}), 100.f), ErrorCode::InvalidArgument);    // N mismatch
  EXPECT_EQ(code(x, positions_tensor({0, 0, -1, 1}), 100.f), ErrorCode::InvalidArgument);         // negative
  EXPECT_EQ(code(x, positions_tensor({0, 0, 1, 1}), NAN), ErrorCode::InvalidArgument);            // base
  EXPECT_EQ(code(x, test::random_tensor({2, 2}, 1), 100.f), ErrorCode::InvalidArgument);          // f32 positions
}

}  // namespace
}  // namespace dacpp
