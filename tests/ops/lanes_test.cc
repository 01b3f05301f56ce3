// ops::Lanes on the CPU: one lane whatever is asked; ops enqueued "on" other lanes run in order on the caller's
// context and join() is a no-op, so a layer written for lanes gives the serial result here.
#include <gtest/gtest.h>

#include "ops/elementwise.h"
#include "ops/lanes.h"
#include "ops/op_test_util.h"

namespace dacpp {
namespace {

TEST(Lanes, TheCpuHasOneLaneAndRunsBranchesInOrder) {
  ops::Context ctx(Device::cpu(), 1);
  const Tensor x = test::random_tensor({8, 16}, 5, 1.f, "x");
  Tensor a = test::output_tensor({8, 16}, "a"), b = test::output_tensor({8, 16}, "b");
  Tensor sum = test::output_tensor({8, 16}, "sum"), want = test::output_tensor({8, 16}, "want");
  {
    ops::Lanes lanes(ctx, 4);
    EXPECT_EQ(lanes.count(), 1);
    {
      const auto on = lanes.on(3);
      ops::unary(ctx, ops::Unary::Relu, x, a);
    }
    ops::unary(ctx, ops::Unary::Gelu, x, b);
    lanes.join(3);
    ops::add(ctx, a, b, sum);
  }
  Tensor ra = test::output_tensor({8, 16}), rb = test::output_tensor({8, 16});
  ops::unary(ctx, ops::Unary::Relu, x, ra);
  ops::unary(ctx, ops::Unary::Gelu, x, rb);
  ops::add(ctx, ra, rb, want);
  EXPECT_EQ(test::diff(sum, want).max_abs, 0.0);
  EXPECT_THROW(ops::Lanes(ctx, 0), Error);
}

}  // namespace
}  // namespace dacpp
