#include "ops/conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "ops/op_test_util.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

struct ConvCase {
  Shape x;
  int64_t o, k;
  int stride, pad;
  bool bias, relu;
};

class Conv2dTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dTest, MatchesReference) {
  const ConvCase& c = GetParam();
  ops::Context ctx;
  Tensor x = test::random_tensor(c.x, 1, 1.f, "x");
  Tensor w = test::random_tensor({c.o, c.x[1], c.k, c.k}, 2, 0.3f, "w");
  Tensor b = c.bias ? test::random_tensor({c.o}, 3, 1.f, "b") : Tensor();
  const int64_t oh = (c.x[2] + 2 * c.pad - c.k) / c.stride + 1, ow = (c.x[3] + 2 * c.pad - c.k) / c.stride + 1;
  Tensor y = test::output_tensor({c.x[0], c.o, oh, ow});
  ops::conv2d(ctx, x, w, b, y, {c.stride, c.stride, c.pad, c.pad},
              c.relu ? ops::Activation::Relu : ops::Activation::None);
  test::expect_close(y, ref::conv2d(x, w, b, c.stride, c.stride, c.pad, c.pad, c.relu));
}

std::string conv_name(const ::testing::TestParamInfo<ConvCase>& i) {
  const ConvCase& c = i.param;
  return test::case_name(i.index, test::shape_tag(c.x) + "_o" + std::to_string(c.o) + "k" + std::to_string(c.k) +
                                      "s" + std::to_string(c.stride) + "p" + std::to_string(c.pad));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dTest,
                         ::testing::Values(ConvCase{{1, 1, 1, 1}, 1, 1, 1, 0, false, false},
                                           ConvCase{{1, 3, 7, 5}, 4, 3, 1, 1, true, false},
                                           ConvCase{{2, 5, 9, 11}, 6, 3, 2, 1, true, true},
                                           ConvCase{{1, 16, 13, 13}, 24, 1, 1, 0, true, false},
                                           ConvCase{{1, 32, 18, 22}, 32, 3, 1, 1, false, true},
                                           ConvCase{{1, 24, 15, 15}, 48, 3, 2, 1, true, false},
                                           ConvCase{{2, 8, 10, 10}, 8, 3, 2, 0, true, true}),
                         conv_name);

TEST(Conv2dRectTest, AsymmetricStridePadding) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 4, 9, 12}, 1), w = test::random_tensor({5, 4, 3, 2}, 2, 0.3f);
  Tensor b = test::random_tensor({5}, 3);
  ops::Conv2dParams p{2, 1, 1, 0};
  Tensor y = test::output_tensor({1, 5, (9 + 2 - 3) / 2 + 1, 12 - 2 + 1});
  ops::conv2d(ctx, x, w, b, y, p);
  test::expect_close(y, ref::conv2d(x, w, b, 2, 1, 1, 0, false));
}

struct DeconvCase {
  Shape x;
  int64_t o;
  int k;
  bool bias;
};

class ConvTranspose2dTest : public ::testing::TestWithParam<DeconvCase> {};

TEST_P(ConvTranspose2dTest, MatchesReference) {
  const DeconvCase& c = GetParam();
  ops::Context ctx;
  Tensor x = test::random_tensor(c.x, 1, 1.f, "x");
  Tensor w = test::random_tensor({c.x[1], c.o, c.k, c.k}, 2, 0.3f, "w");
  Tensor b = c.bias ? test::random_tensor({c.o}, 3, 1.f, "b") : Tensor();
  Tensor y = test::output_tensor({c.x[0], c.o, (c.x[2] - 1) * c.k + c.k, (c.x[3] - 1) * c.k + c.k});
  ops::conv_transpose2d(ctx, x, w, b, y, c.k);
  test::expect_close(y, ref::conv_transpose2d(x, w, b, c.k));
}

std::string deconv_name(const ::testing::TestParamInfo<DeconvCase>& i) {
  const DeconvCase& c = i.param;
  return test::case_name(i.index, test::shape_tag(c.x) + "_o" + std::to_string(c.o) + "k" + std::to_string(c.k));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTranspose2dTest,
                         ::testing::Values(DeconvCase{{1, 3, 4, 5}, 2, 2, true}, DeconvCase{{2, 5, 3, 3}, 7, 4, true},
                                           DeconvCase{{1, 48, 9, 9}, 24, 4, false},
                                           DeconvCase{{1, 64, 10, 7}, 32, 2, true}),
                         deconv_name);

// The tokens form reads x channels-last ([N, H·W, C]): against the reference on the same values as planes.
TEST_P(ConvTranspose2dTest, TokensMatchReference) {
  const DeconvCase& c = GetParam();
  ops::Context ctx;
  Tensor x = test::random_tensor(c.x, 1, 1.f, "x");
  Tensor tokens = ref::permute(x, {0, 2, 3, 1}).reshape({c.x[0], c.x[2] * c.x[3], c.x[1]});
  Tensor w = test::random_tensor({c.x[1], c.o, c.k, c.k}, 2, 0.3f, "w");
  Tensor b = c.bias ? test::random_tensor({c.o}, 3, 1.f, "b") : Tensor();
  Tensor y = test::output_tensor({c.x[0], c.o, c.x[2] * c.k, c.x[3] * c.k});
  ops::conv_transpose2d_tokens(ctx, tokens, c.x[2], c.x[3], w, b, y, c.k);
  test::expect_close(y, ref::conv_transpose2d(x, w, b, c.k));
}

TEST(ConvTranspose2dTokensTest, OverlapAndShapeErrors) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 3, 5, 4}, 1), w = test::random_tensor({3, 4, 3, 3}, 2, 0.3f);
  Tensor b = test::random_tensor({4}, 3);
  Tensor tokens = ref::permute(x, {0, 2, 3, 1}).reshape({1, 20, 3});
  Tensor y = test::output_tensor({1, 4, 4 * 2 + 3, 3 * 2 + 3});
  ops::conv_transpose2d_tokens(ctx, tokens, 5, 4, w, b, y, 2);
  test::expect_close(y, ref::conv_transpose2d(x, w, b, 2));
  // A token count that is not h·w, and channels that are not the weight's, name the tensor and the expectation.
  Tensor bad = test::random_tensor({1, 21, 3}, 4, 1.f, "proj_tokens");
  try {
    ops::conv_transpose2d_tokens(ctx, bad, 5, 4, w, b, y, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("proj_tokens"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[N, 5·4, C]"), std::string::npos) << e.message();
  }
  Tensor wrong_c = test::random_tensor({1, 20, 5}, 5, 1.f, "tokens5");
  EXPECT_THROW(ops::conv_transpose2d_tokens(ctx, wrong_c, 5, 4, w, b, y, 2), Error);
}

TEST(ConvTranspose2dOverlapTest, KernelLargerThanStride) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 3, 5, 4}, 1), w = test::random_tensor({3, 4, 3, 3}, 2, 0.3f);
  Tensor b = test::random_tensor({4}, 3);
  Tensor y = test::output_tensor({1, 4, 4 * 2 + 3, 3 * 2 + 3});
  ops::conv_transpose2d(ctx, x, w, b, y, 2);
  test::expect_close(y, ref::conv_transpose2d(x, w, b, 2));
}

// residual_conv_pair: conv2(relu(conv1(relu(x)))) against the reference convs, with h holding conv1's output (the
// CPU stores it); its operands' shapes checked and named.
TEST(ResidualConvPairTest, MatchesReference) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 8, 7, 9}, 1, 1.f, "x");
  Tensor w1 = test::random_tensor({8, 8, 3, 3}, 2, 0.3f, "w1"), w2 = test::random_tensor({8, 8, 3, 3}, 3, 0.3f, "w2");
  Tensor b1 = test::random_tensor({8}, 4, 1.f, "b1"), b2 = test::random_tensor({8}, 5, 1.f, "b2");
  Tensor xr = test::output_tensor(x.shape(), "relu(x)");
  for (int64_t i = 0; i < x.numel(); ++i) xr.data<float>()[i] = std::max(x.data<float>()[i], 0.f);
  const Tensor want_h = ref::conv2d(xr, w1, b1, 1, 1, 1, 1, true);
  const Tensor want = ref::conv2d(want_h, w2, b2, 1, 1, 1, 1, false);
  Tensor h = test::output_tensor(x.shape(), "h"), y = test::output_tensor(x.shape());
  ops::residual_conv_pair(ctx, x, w1, b1, w2, b2, h, y);
  test::expect_close(h, want_h);
  test::expect_close(y, want);
  // Without biases.
  ops::residual_conv_pair(ctx, x, w1, Tensor(), w2, Tensor(), h, y);
  test::expect_close(y, ref::conv2d(ref::conv2d(xr, w1, Tensor(), 1, 1, 1, 1, true), w2, Tensor(), 1, 1, 1, 1, false));
  // With a residual r: y = conv2(...) + r (a residual unit passes x; any map of x's shape adds the same way).
  for (const Tensor& r : {x, test::random_tensor(x.shape(), 6, 2.f, "r")}) {
    Tensor want_r = test::output_tensor(x.shape(), "want + r");
    for (int64_t i = 0; i < x.numel(); ++i) want_r.data<float>()[i] = want.data<float>()[i] + r.data<float>()[i];
    ops::residual_conv_pair(ctx, x, w1, b1, w2, b2, h, y, r);
    test::expect_close(y, want_r);
  }
}

TEST(ResidualConvPairTest, OperandErrorsNamed) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 4, 6, 6}, 1, 1.f, "x");
  Tensor w = test::random_tensor({4, 4, 3, 3}, 2, 1.f, "w1");
  const auto expect_named = [&](const Tensor& w2, Tensor& h, Tensor& y, const char* name, const Tensor& r = Tensor()) {
    try {
      ops::residual_conv_pair(ctx, x, w, Tensor(), w2, Tensor(), h, y, r);
      ADD_FAILURE() << "no error for " << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.message();
      EXPECT_NE(e.message().find(name), std::string::npos) << e.message();
    }
  };
  Tensor h = test::output_tensor({1, 4, 6, 6}, "mid"), y = test::output_tensor({1, 4, 6, 6}, "out");
  expect_named(test::random_tensor({4, 2, 3, 3}, 3, 1.f, "rcu.c2.weight"), h, y, "rcu.c2.weight");
  Tensor w2 = test::random_tensor({4, 4, 3, 3}, 3, 1.f, "w2");
  Tensor small_h = test::output_tensor({1, 4, 6, 5}, "small_mid");
  expect_named(w2, small_h, y, "small_mid");
  expect_named(w2, h, h, "mid");  // y aliasing h
  // The residual: its shape, and y aliasing it.
  expect_named(w2, h, y, "short_r", test::random_tensor({1, 4, 6, 5}, 4, 1.f, "short_r"));
  expect_named(w2, h, y, "out", y);
}

TEST(Conv2dErrorTest, WeightShapeNamed) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 4, 8, 8}, 1, 1.f, "features");
  Tensor w = test::random_tensor({8, 3, 3, 3}, 2, 1.f, "head.scratch.layer1_rn.weight");
  Tensor y = test::output_tensor({1, 8, 8, 8});
  try {
    ops::conv2d(ctx, x, w, Tensor(), y, {1, 1, 1, 1});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("head.scratch.layer1_rn.weight"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[8,3,3,3]"), std::string::npos) << e.message();
  }
}

TEST(Conv2dErrorTest, OutputShapeNamed) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 4, 8, 8}, 1), w = test::random_tensor({8, 4, 3, 3}, 2);
  Tensor y = test::output_tensor({1, 8, 7, 8}, "conv_out");
  EXPECT_THROW(ops::conv2d(ctx, x, w, Tensor(), y, {1, 1, 1, 1}), Error);
  Tensor xd = test::random_tensor({1, 4, 3, 3}, 1), wd = test::random_tensor({4, 2, 4, 4}, 2);
  Tensor yd = test::output_tensor({1, 2, 11, 12}, "deconv_out");
  try {
    ops::conv_transpose2d(ctx, xd, wd, Tensor(), yd, 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("deconv_out"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[1,2,12,12]"), std::string::npos) << e.message();
  }
}

// im2col3x3_tokens against the definition: for each pixel and each tap of the chosen kernel rows, the token there
// (zero outside the grid), the ones channel and the zero padding of the channels.
TEST(Im2col3x3TokensTest, MatchesTheDefinition) {
  struct Case {
    int64_t n, h, w, c, cp;
    int ky0, kyn;
    bool ones;
  };
  for (const Case& k :
       {Case{1, 4, 5, 3, 8, 0, 3, true}, Case{2, 3, 3, 2, 2, 0, 2, false}, Case{1, 5, 2, 4, 5, 1, 1, true},
        Case{2, 1, 6, 3, 4, 1, 2, true}, Case{1, 1, 1, 1, 3, 0, 3, true}}) {
    SCOPED_TRACE(str_cat(k.n, "x", k.h, "x", k.w, "x", k.c, " cp ", k.cp, " rows [", k.ky0, ", ", k.ky0 + k.kyn, ")",
                         k.ones ? " ones" : ""));
    ops::Context ctx;
    Tensor tokens = test::random_tensor({k.n, k.h * k.w, k.c}, 3, 1.f, "tokens");
    Tensor y = test::output_tensor({k.n * k.h * k.w, 3 * k.kyn * k.cp});
    ops::im2col3x3_tokens(ctx, tokens, k.h, k.w, k.ky0, k.kyn, k.ones, y);
    const float* t = tokens.data<float>();
    const float* got = y.data<float>();
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t i = 0; i < k.h; ++i)
        for (int64_t j = 0; j < k.w; ++j)
          for (int ky = k.ky0; ky < k.ky0 + k.kyn; ++ky)
            for (int kx = 0; kx < 3; ++kx)
              for (int64_t c = 0; c < k.cp; ++c) {
                const int64_t si = i + ky - 1, sj = j + kx - 1;
                const bool inside = si >= 0 && si < k.h && sj >= 0 && sj < k.w;
                const float want = !inside              ? 0.f
                                   : c < k.c            ? t[(n * k.h * k.w + si * k.w + sj) * k.c + c]
                                   : c == k.c && k.ones ? 1.f
                                                        : 0.f;
                const int64_t col = ((ky - k.ky0) * 3 + kx) * k.cp + c;
                ASSERT_EQ(got[((n * k.h + i) * k.w + j) * 3 * k.kyn * k.cp + col], want)
                    << "pixel " << n << "," << i << "," << j << " tap " << ky << kx << " channel " << c;
              }
  }
}

// `call` throws InvalidArgument with `part` (a tensor's name or the broken rule) in its message.
void refused(const std::function<void()>& call, const char* part) {
  try {
    call();
    ADD_FAILURE() << "no error (" << part << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
  }
}

TEST(Im2col3x3TokensTest, BadArgumentsAreNamed) {
  ops::Context ctx;
  Tensor tokens = test::random_tensor({1, 6, 2}, 1, 1.f, "blk.tokens");
  Tensor y = test::output_tensor({6, 3 * 3 * 3}, "cols");
  refused([&] { ops::im2col3x3_tokens(ctx, tokens, 2, 2, 0, 3, true, y); }, "blk.tokens");   // 6 != 2·2
  refused([&] { ops::im2col3x3_tokens(ctx, tokens, 2, 3, 1, 3, true, y); }, "kernel rows");  // rows past 3
  Tensor narrow = test::output_tensor({6, 3 * 3 * 2}, "cols");
  refused([&] { ops::im2col3x3_tokens(ctx, tokens, 2, 3, 0, 3, true, narrow); }, "cols");  // no room for the ones
}

// patch_rows against the definition: row i·(W/k) + j of image n holds x[n, c, i·k + ky, j·k + kx] at column
// (c·k + ky)·k + kx, then zeros up to Kp. layers::PatchEmbed's rows times its weight rows equal the NCHW conv (checked
// in conv2d_layer_test and the model tests), so only the gather is checked here.
TEST(PatchRowsTest, MatchesTheDefinition) {
  ops::Context ctx;
  struct Case {
    int64_t n, c, h, w;
    int k;
    int64_t kp;
  };
  for (const Case& t :
       {Case{1, 3, 28, 42, 14, 592}, Case{2, 2, 6, 4, 2, 8}, Case{1, 1, 3, 3, 3, 9}, Case{1, 4, 5, 5, 1, 4}}) {
    SCOPED_TRACE(str_cat(t.n, "x", t.c, "x", t.h, "x", t.w, " k ", t.k, " Kp ", t.kp));
    const Tensor x = test::random_tensor({t.n, t.c, t.h, t.w}, 7, 1.f, "x");
    const int64_t gh = t.h / t.k, gw = t.w / t.k, cols = t.c * t.k * t.k;
    Tensor y = test::output_tensor({t.n, gh * gw, t.kp}, "rows");
    std::fill_n(y.data<float>(), y.numel(), std::nanf(""));
    ops::patch_rows(ctx, x, t.k, y);
    for (int64_t n = 0; n < t.n; ++n)
      for (int64_t p = 0; p < gh * gw; ++p)
        for (int64_t col = 0; col < t.kp; ++col) {
          float want = 0.f;
          if (col < cols) {
            const int64_t c = col / (t.k * t.k), ky = col / t.k % t.k, kx = col % t.k;
            want = x.data<float>()[((n * t.c + c) * t.h + p / gw * t.k + ky) * t.w + p % gw * t.k + kx];
          }
          ASSERT_EQ(y.data<float>()[(n * gh * gw + p) * t.kp + col], want)
              << "image " << n << " patch " << p << " col " << col;
        }
  }
}

TEST(PatchRowsTest, BadArgumentsAreNamed) {
  ops::Context ctx;
  const Tensor x = test::random_tensor({1, 3, 28, 28}, 1, 1.f, "pixel_values");
  Tensor y = test::output_tensor({1, 4, 592}, "patch_rows");
  refused([&] { ops::patch_rows(ctx, x, 5, y); }, "pixel_values");  // 28 is not a multiple of 5
  Tensor narrow = test::output_tensor({1, 4, 587}, "narrow_rows");
  refused([&] { ops::patch_rows(ctx, x, 14, narrow); }, "narrow_rows");  // 587 < 3·14·14
  Tensor few = test::output_tensor({1, 3, 592}, "few_rows");
  refused([&] { ops::patch_rows(ctx, x, 14, few); }, "few_rows");  // 3 rows for 4 patches
}

}  // namespace
}  // namespace dacpp
