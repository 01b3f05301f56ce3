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

// layer_norm_drop_leading: each image's rows past the first `skip`, normalised; the reference normalises every row
// and the kept ones are compared.
TEST(LayerNormDropLeadingTest, MatchesReferenceRows) {
  ops::Context ctx;
  for (int64_t skip : {0, 1, 5, 11}) {
    SCOPED_TRACE(skip);
    const int64_t b = 3, n = 11, c = 24;
    Tensor x = test::random_tensor({b, n, c}, 7, 2.f, "x");
    Tensor g = test::random_tensor({c}, 8), be = test::random_tensor({c}, 9);
    Tensor y = test::output_tensor({b, n - skip, c});
    ops::layer_norm_drop_leading(ctx, x, skip, g, be, 1e-6f, y);
    const Tensor all = ref::layer_norm(x, g, be, 1e-6f);
    Tensor want = test::output_tensor({b, n - skip, c});
    for (int64_t i = 0; i < b; ++i)
      for (int64_t r = skip; r < n; ++r)
        for (int64_t k = 0; k < c; ++k)
          want.data<float>()[(i * (n - skip) + r - skip) * c + k] = all.data<float>()[(i * n + r) * c + k];
    test::expect_close(y, want);
  }
}

TEST(LayerNormDropLeadingTest, ShapesChecked) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 5, 8}, 1), g = test::random_tensor({8}, 2), b = test::random_tensor({8}, 3);
  const auto expect_invalid = [&](int64_t skip, Tensor y, const char* what) {
    try {
      ops::layer_norm_drop_leading(ctx, x, skip, g, b, 1e-6f, y);
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << what << ": " << e.message();
    }
  };
  expect_invalid(1, test::output_tensor({2, 5, 8}), "y with the skipped rows");
  expect_invalid(6, test::output_tensor({2, 0, 8}), "skip past N");
  expect_invalid(-1, test::output_tensor({2, 6, 8}), "a negative skip");
  expect_invalid(1, test::output_tensor({8, 8}), "a rank-2 y");
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
