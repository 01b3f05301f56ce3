#include "ops/layer_norm.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

class LayerNormTest : public ::testing::TestWithParam<Shape> {};

TEST_P(LayerNormTest, MatchesReference) {
  ops::Context ctx;
  const Shape s = GetParam();
  Tensor x = test::random_tensor(s, 1, 2.f, "x");
  Tensor g = test::random_tensor({s.back()}, 2, 1.f, "gamma"), b = test::random_tensor({s.back()}, 3, 1.f, "beta");
  Tensor y = test::output_tensor(s);
  ops::layer_norm(ctx, x, g, b, 1e-6f, y);
  test::expect_close(y, ref::layer_norm(x, g, b, 1e-6f));
}

std::string layer_norm_name(const ::testing::TestParamInfo<Shape>& i) {
  return test::case_name(i.index, test::shape_tag(i.param));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormTest,
                         ::testing::Values(Shape{1, 1}, Shape{3, 7}, Shape{2, 37, 64}, Shape{1, 197, 384},
                                           Shape{5, 1025}),
                         layer_norm_name);

TEST(LayerNormInPlaceTest, AliasedOutput) {
  ops::Context ctx;
  Tensor x = test::random_tensor({9, 48}, 4, 3.f, "x");
  Tensor g = test::random_tensor({48}, 5), b = test::random_tensor({48}, 6);
  Tensor want = ref::layer_norm(x, g, b, 1e-5f);
  ops::layer_norm(ctx, x, g, b, 1e-5f, x);
  test::expect_close(x, want);
}

TEST(LayerNormErrorTest, GammaShapeNamed) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 8}, 1), y = test::output_tensor({2, 8});
  Tensor g = test::random_tensor({7}, 2, 1.f, "norm1.weight"), b = test::random_tensor({8}, 3);
  try {
    ops::layer_norm(ctx, x, g, b, 1e-6f, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("norm1.weight"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[7]"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace dacpp
