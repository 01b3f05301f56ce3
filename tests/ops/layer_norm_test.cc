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

// Each image's rows past the first `skip` of a [B, N, C] tensor: [B, N − skip, C].
Tensor kept_rows(const Tensor& all, int64_t skip) {
  const int64_t b = all.dim(0), n = all.dim(1), c = all.dim(2);
  Tensor kept = test::output_tensor({b, n - skip, c});
  for (int64_t i = 0; i < b; ++i)
    for (int64_t r = skip; r < n; ++r)
      for (int64_t k = 0; k < c; ++k)
        kept.data<float>()[(i * (n - skip) + r - skip) * c + k] = all.data<float>()[(i * n + r) * c + k];
  return kept;
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
    const Tensor want = kept_rows(all, skip);
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

// add_scaled_layer_norm with a collected layer's output norm beside the next block's (ops::DropLeadingNorm): the
// updated stream, y = norm(x) and y2 = norm2(x)[:, skip:] against the reference on x + a ⊙ ls; without y (the
// last block) only the stream and y2.
TEST(AddScaledLayerNormTest, SecondNormMatchesReference) {
  ops::Context ctx;
  const int64_t b = 2, n = 9, c = 40, skip = 1;
  for (bool with_y : {true, false}) {
    SCOPED_TRACE(with_y);
    Tensor x = test::random_tensor({b, n, c}, 11, 2.f, "x"), a = test::random_tensor({b, n, c}, 12, 1.f, "a");
    Tensor ls = test::random_tensor({c}, 13, 0.5f, "ls");
    Tensor g = test::random_tensor({c}, 14), be = test::random_tensor({c}, 15);
    Tensor g2 = test::random_tensor({c}, 16), be2 = test::random_tensor({c}, 17);
    Tensor updated = x.clone();
    for (int64_t i = 0; i < updated.numel(); ++i)
      updated.data<float>()[i] += a.data<float>()[i] * ls.data<float>()[i % c];
    Tensor y = with_y ? test::output_tensor({b, n, c}) : Tensor();
    const ops::DropLeadingNorm also{g2, be2, 1e-5f, skip, test::output_tensor({b, n - skip, c})};
    ops::add_scaled_layer_norm(ctx, x, a, ls, with_y ? g : Tensor(), with_y ? be : Tensor(), 1e-6f, y, &also);
    test::expect_close(x, updated);
    if (with_y) test::expect_close(y, ref::layer_norm(updated, g, be, 1e-6f));
    const Tensor all = ref::layer_norm(updated, g2, be2, 1e-5f);
    const Tensor want = kept_rows(all, skip);
    test::expect_close(also.y, want);
  }
}

// Without a branch (a stream a GEMM has added to: ops::linear_add): the norms of x alone, x left as it is.
TEST(AddScaledLayerNormTest, WithoutABranchNormalisesTheStreamAlone) {
  ops::Context ctx;
  const int64_t b = 2, n = 9, c = 40, skip = 1;
  for (bool with_y : {true, false}) {
    SCOPED_TRACE(with_y);
    Tensor x = test::random_tensor({b, n, c}, 21, 2.f, "x");
    const Tensor before = x.clone();
    Tensor g = test::random_tensor({c}, 22), be = test::random_tensor({c}, 23);
    Tensor g2 = test::random_tensor({c}, 24), be2 = test::random_tensor({c}, 25);
    Tensor y = with_y ? test::output_tensor({b, n, c}) : Tensor();
    const ops::DropLeadingNorm also{g2, be2, 1e-5f, skip, test::output_tensor({b, n - skip, c})};
    ops::add_scaled_layer_norm(ctx, x, Tensor(), Tensor(), with_y ? g : Tensor(), with_y ? be : Tensor(), 1e-6f, y,
                               &also);
    test::expect_close(x, before, 0, 0);
    if (with_y) test::expect_close(y, ref::layer_norm(before, g, be, 1e-6f));
    test::expect_close(also.y, kept_rows(ref::layer_norm(before, g2, be2, 1e-5f), skip));
  }
  // A LayerScale with nothing to scale is a caller's mistake.
  Tensor x = test::random_tensor({1, 3, 8}, 26), y = test::output_tensor({1, 3, 8});
  const Tensor g = test::random_tensor({8}, 27), be = test::random_tensor({8}, 28);
  EXPECT_THROW(ops::add_scaled_layer_norm(ctx, x, Tensor(), test::random_tensor({8}, 29, 1.f, "ls"), g, be, 1e-6f, y),
               Error);
}

TEST(AddScaledLayerNormTest, SecondNormChecked) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 5, 8}, 1), a = test::random_tensor({2, 5, 8}, 2);
  Tensor g = test::random_tensor({8}, 3), be = test::random_tensor({8}, 4);
  Tensor y = test::output_tensor({2, 5, 8}), none;
  const auto expect_invalid = [&](Tensor& out, const ops::DropLeadingNorm* also, const char* what) {
    try {
      ops::add_scaled_layer_norm(ctx, x, a, Tensor(), g, be, 1e-6f, out, also);
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << what << ": " << e.message();
    }
  };
  expect_invalid(none, nullptr, "neither y nor a second norm");
  const ops::DropLeadingNorm rows{g, be, 1e-6f, 1, test::output_tensor({2, 5, 8})};
  expect_invalid(y, &rows, "a second output with the skipped rows");
  const ops::DropLeadingNorm past{g, be, 1e-6f, 6, test::output_tensor({2, 0, 8})};
  expect_invalid(y, &past, "skip past N");
  const ops::DropLeadingNorm gamma{test::random_tensor({7}, 5), be, 1e-6f, 1, test::output_tensor({2, 4, 8})};
  expect_invalid(y, &gamma, "a second gamma of the wrong length");
  const ops::DropLeadingNorm same{g, be, 1e-6f, 0, y};
  expect_invalid(y, &same, "a second output aliasing y");
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
