// ops::OpProfile / OpScope: what a profiled forward's numbers mean. Each op dispatched while a profile is attached
// adds one call under its name and operand shapes; an op made of other ops (conv2d_upsampled on the CPU: a resize,
// then a conv2d) counts once, as itself; nothing is added once the profile is detached; and an op that fails inside
// its scope leaves the context able to time the next one.
#include "ops/op_profile.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/fault.h"
#include "ops/conv2d.h"
#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/op_test_util.h"

namespace dacpp {
namespace {

const ops::OpProfile::Entry* find(const std::vector<ops::OpProfile::Entry>& es, const std::string& op) {
  for (const auto& e : es)
    if (e.op == op) return &e;
  return nullptr;
}

TEST(OpProfileTest, EachOpCountsOnceUnderItsNameAndShapes) {
  ops::Context ctx;
  ops::OpProfile profile;
  const Tensor x = test::random_tensor({3, 8}, 1), w = test::random_tensor({5, 8}, 2);
  Tensor y = test::output_tensor({3, 5});
  const Tensor m = test::random_tensor({1, 2, 3, 4}, 3), wc = test::random_tensor({4, 2, 3, 3}, 4, 0.3f);
  Tensor up = test::output_tensor({1, 4, 6, 8});
  ops::linear(ctx, x, w, Tensor(), y);  // before the profile: not counted
  ctx.set_profile(&profile);
  for (int i = 0; i < 3; ++i) ops::linear(ctx, x, w, Tensor(), y);
  ops::conv2d_upsampled(ctx, m, wc, Tensor(), up, ops::Activation::Relu);
  ops::unary(ctx, ops::Unary::Relu, y, y);
  ctx.set_profile(nullptr);
  ops::linear(ctx, x, w, Tensor(), y);  // after: not counted either

  const auto es = profile.entries();
  ASSERT_EQ(es.size(), 3u) << "linear, conv2d_upsampled and unary relu; the resize and conv inside are not rows";
  const auto* lin = find(es, "linear");
  ASSERT_NE(lin, nullptr);
  EXPECT_EQ(lin->calls, 3);
  EXPECT_EQ(lin->shapes, "[3,8] [5,8]");
  const auto* cu = find(es, "conv2d_upsampled");
  ASSERT_NE(cu, nullptr);
  EXPECT_EQ(cu->calls, 1);
  EXPECT_EQ(cu->shapes, "[1,2,3,4] [4,2,3,3] [1,4,6,8]");
  EXPECT_EQ(find(es, "resize_bilinear"), nullptr);
  EXPECT_EQ(find(es, "conv2d"), nullptr);
  ASSERT_NE(find(es, "unary relu"), nullptr);
  double sum = 0;
  for (const auto& e : es) {
    EXPECT_GE(e.ms, 0.0) << e.op;
    sum += e.ms;
  }
  EXPECT_DOUBLE_EQ(sum, profile.total_ms());
  const auto kinds = profile.by_op();
  ASSERT_EQ(kinds.size(), 3u);
  for (size_t i = 1; i < kinds.size(); ++i) EXPECT_GE(kinds[i - 1].second, kinds[i].second) << "most time first";
  profile.clear();
  EXPECT_TRUE(profile.entries().empty());
}

TEST(OpProfileTest, AnOpThatFailsInsideItsScopeLeavesTheNextOneTimed) {
  ops::Context ctx;
  ops::OpProfile profile;
  ctx.set_profile(&profile);
  const Tensor x = test::random_tensor({3, 8}, 1), w = test::random_tensor({5, 8}, 2);
  Tensor y = test::output_tensor({3, 5});
  fault::configure("dnnl.call");
  EXPECT_THROW(ops::linear(ctx, x, w, Tensor(), y), Error);
  fault::configure("");
  ops::unary(ctx, ops::Unary::Relu, y, y);
  ctx.set_profile(nullptr);
  const auto es = profile.entries();
  const auto* relu = find(es, "unary relu");
  ASSERT_NE(relu, nullptr) << "the failed op left the context inside a scope: the next op was taken as nested";
  EXPECT_EQ(relu->calls, 1);
}

}  // namespace
}  // namespace dacpp
