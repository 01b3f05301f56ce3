// The CPU's bf16 products (a model loaded in bf16): linear, conv2d and the transposed convs with bf16 weights (and the
// linear's x in bf16, the resize fold's case). The oracle is the f32 reference run on operands rounded to bf16 the
// same way (nearest even): the products of bf16 values are exact in f32, so only the accumulation order differs and
// the tolerances stay those of the f32 tests. A second check bounds the error against the unrounded f32 product,
// which is what a user of --precision bf16 sees.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/cpu/bf16_round_cpu.h"
#include "backends/cpu/cpu_ops.h"
#include "core/fault.h"
#include "formats/half.h"
#include "ops/conv2d.h"
#include "ops/linear.h"
#include "ops/op_test_util.h"
#include "ops/upsample_conv_head.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

// t's values rounded to bf16, kept in f32.
Tensor rounded(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), DType::F32, t.name());
  for (int64_t i = 0; i < t.numel(); ++i) out.data<float>()[i] = bf16_to_f32(f32_to_bf16(t.data<float>()[i]));
  return out;
}

class Bf16WeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const cpu::Bf16Support& s = cpu::bf16_support();
    if (!s.refusal.empty()) GTEST_SKIP() << "this CPU has no bf16 kernels in oneDNN: " << s.refusal;
  }
  ops::Context ctx;
};

struct LinearBf16Case {
  bool x_bf16, w_bf16;
  ops::Activation act;
};

class LinearBf16Test : public Bf16WeightsTest, public ::testing::WithParamInterface<LinearBf16Case> {};

TEST_P(LinearBf16Test, EqualsTheRoundedProduct) {
  const LinearBf16Case& c = GetParam();
  const Tensor x = test::random_tensor({3, 67, 96}, 1, 1.f, "x"), w = test::random_tensor({130, 96}, 2, 0.3f, "w");
  const Tensor b = test::random_tensor({130}, 3, 1.f, "b");
  Tensor y = test::output_tensor({3, 67, 130});
  ops::linear(ctx, c.x_bf16 ? test::to_bf16(x) : x, c.w_bf16 ? test::to_bf16(w) : w, b, y, c.act);
  // Either operand in bf16 puts both there.
  test::expect_close(y, ref::linear(rounded(x), rounded(w), b, c.act));
  EXPECT_LE(test::diff(y, ref::linear(x, w, b, c.act)).rel_l2, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Operands, LinearBf16Test,
                         ::testing::Values(LinearBf16Case{false, true, ops::Activation::None},
                                           LinearBf16Case{false, true, ops::Activation::Gelu},
                                           LinearBf16Case{true, false, ops::Activation::None},
                                           LinearBf16Case{true, true, ops::Activation::Relu}));

// A linear weight packed at load (ops::pack_linear_weight) gives what the plain weight gives, bit for bit, for any
// number of rows (the packing asked the matmul about 1024), with and without bias and epilogue: a bf16 weight, an
// f32 weight rounded to bf16 in the packing (a bf16 model's layers do this, from the f32 pages), and an f32 weight
// for f32 products. Mismatched operands are refused naming the weight.
TEST_F(Bf16WeightsTest, APackedWeightGivesWhatThePlainOneGives) {
  const int64_t n = 96, k = 80;
  const Tensor wf = test::random_tensor({n, k}, 31, 0.3f, "blocks.0.mlp.fc1.weight");
  const Tensor w = test::to_bf16(wf);
  const Tensor b = test::random_tensor({n}, 32, 1.f, "b");
  struct Arm {
    const char* what;
    Tensor host, plain;
    DType product;
  };
  for (const Arm& arm : {Arm{"bf16", w, w, DType::BF16}, Arm{"f32 rounded in the packing", wf, w, DType::BF16},
                         Arm{"f32", wf, wf, DType::F32}}) {
    const std::optional<ops::LinearWeight> packed = ops::pack_linear_weight(arm.host, arm.product);
    ASSERT_TRUE(packed.has_value()) << arm.what << ": oneDNN reads a weight blocked on AVX-512";
    ASSERT_NE(packed->packed(), nullptr);
    EXPECT_FALSE(packed->plain().defined());
    EXPECT_EQ(packed->out_features(), n);
    EXPECT_EQ(packed->in_features(), k);
    EXPECT_EQ(packed->dtype(), arm.product);
    EXPECT_EQ(packed->name(), "blocks.0.mlp.fc1.weight");
    for (const Shape& xs : {Shape{1, k}, Shape{7, k}, Shape{2, 33, k}, Shape{1, 1370, k}})
      for (const bool bias : {false, true})
        for (const ops::Activation act : {ops::Activation::None, ops::Activation::Gelu}) {
          const Tensor x = test::random_tensor(xs, 33, 1.f, "x");
          Shape ys = xs;
          ys.back() = n;
          Tensor got = test::output_tensor(ys), want = test::output_tensor(ys);
          ops::linear(ctx, x, *packed, bias ? b : Tensor(), got, act);
          ops::linear(ctx, x, arm.plain, bias ? b : Tensor(), want, act);
          EXPECT_EQ(test::diff(got, want).max_abs, 0.0) << arm.what << " " << shape_str(xs) << " bias " << bias;
        }
  }
  const ops::LinearWeight packed = *ops::pack_linear_weight(w, DType::BF16);
  Tensor y = test::output_tensor({3, n});
  try {
    ops::linear(ctx, test::random_tensor({3, k + 1}, 35, 1.f, "x"), packed, Tensor(), y);
    FAIL() << "took an x of another width";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("weight 'blocks.0.mlp.fc1.weight' has shape [96,80]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ops::linear(ctx, test::to_bf16(test::random_tensor({3, k}, 36)), packed, Tensor(), y), Error)
      << "x must be an f32 activation";
  try {
    ops::pack_linear_weight(w, DType::F32);
    FAIL() << "packed a bf16 weight for f32 products";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("blocks.0.mlp.fc1.weight"), std::string::npos) << e.what();
  }
}

// A oneDNN failure while packing (an injected fault at dnnl.call) is a Backend error naming the packing, and the
// next packing works.
TEST_F(Bf16WeightsTest, APackingFailureIsABackendError) {
  const Tensor wf = test::random_tensor({40, 64}, 38, 0.3f, "blocks.2.mlp.fc2.weight");
  fault::configure("dnnl.call");
  try {
    ops::pack_linear_weight(wf, DType::BF16);
    ADD_FAILURE() << "the injected fault was not raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Backend);
    EXPECT_NE(std::string(e.what()).find("linear weight packing"), std::string::npos) << e.what();
  }
  fault::configure("");
  EXPECT_TRUE(ops::pack_linear_weight(wf, DType::BF16).has_value());
}

// An f32 weight whose value rounds past bf16's largest is refused when it is packed for bf16 products, naming the
// tensor, the value and its index (a bf16 model's load; never an inf weight).
TEST_F(Bf16WeightsTest, PackingAValuePastBf16sRangeIsNamed) {
  Tensor wf = test::random_tensor({40, 64}, 37, 0.3f, "blocks.3.attn.qkv.weight");
  wf.data<float>()[1234] = -3.4e38f;
  try {
    ops::pack_linear_weight(wf, DType::BF16);
    FAIL() << "packed -3.4e38 as bf16";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_NE(
        std::string(e.what()).find("tensor 'blocks.3.attn.qkv.weight': value -3.4e+38 at index 1234 overflows bf16"),
        std::string::npos)
        << e.what();
  }
}

TEST_F(Bf16WeightsTest, LinearF32AndBf16OfOneShapeAreSeparatePlans) {
  const Tensor x = test::random_tensor({9, 40}, 4), w = test::random_tensor({24, 40}, 5, 0.5f);
  Tensor y32 = test::output_tensor({9, 24}), y16 = test::output_tensor({9, 24});
  ops::linear(ctx, x, w, Tensor(), y32);
  ops::linear(ctx, x, test::to_bf16(w), Tensor(), y16);
  test::expect_close(y32, ref::linear(x, w, Tensor(), ops::Activation::None));
  test::expect_close(y16, ref::linear(rounded(x), rounded(w), Tensor(), ops::Activation::None));
  EXPECT_GT(test::diff(y16, y32).max_abs, 0.0);  // the second call did not reuse the f32 plan
}

struct ConvBf16Case {
  Shape x;
  int64_t o, k, stride, pad;
  bool relu;
};

class Conv2dBf16Test : public Bf16WeightsTest, public ::testing::WithParamInterface<ConvBf16Case> {};

TEST_P(Conv2dBf16Test, EqualsTheRoundedConv) {
  const ConvBf16Case& c = GetParam();
  const Tensor x = test::random_tensor(c.x, 6, 1.f, "x");
  const Tensor w = test::random_tensor({c.o, c.x[1], c.k, c.k}, 7, 0.2f, "w");
  const Tensor b = test::random_tensor({c.o}, 8, 1.f, "b");
  const int64_t oh = (c.x[2] + 2 * c.pad - c.k) / c.stride + 1, ow = (c.x[3] + 2 * c.pad - c.k) / c.stride + 1;
  Tensor y = test::output_tensor({c.x[0], c.o, oh, ow});
  const int s = static_cast<int>(c.stride), p = static_cast<int>(c.pad);
  ops::conv2d(ctx, x, test::to_bf16(w), b, y, ops::Conv2dParams{s, s, p, p},
              c.relu ? ops::Activation::Relu : ops::Activation::None);
  test::expect_close(y, ref::conv2d(rounded(x), rounded(w), b, s, s, p, p, c.relu));
  EXPECT_LE(test::diff(y, ref::conv2d(x, w, b, s, s, p, p, c.relu)).rel_l2, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dBf16Test,
                         ::testing::Values(ConvBf16Case{{1, 32, 11, 9}, 48, 3, 1, 1, true},
                                           ConvBf16Case{{2, 16, 10, 10}, 24, 3, 2, 1, false},
                                           ConvBf16Case{{1, 40, 7, 5}, 8, 1, 1, 0, false},
                                           ConvBf16Case{{1, 3, 28, 42}, 32, 14, 14, 0, false}));

struct DeconvBf16Case {
  Shape x;
  int64_t o, k;
};

class ConvTranspose2dBf16Test : public Bf16WeightsTest, public ::testing::WithParamInterface<DeconvBf16Case> {};

TEST_P(ConvTranspose2dBf16Test, PlanesAndTokensEqualTheRoundedConv) {
  const DeconvBf16Case& c = GetParam();
  const Tensor x = test::random_tensor(c.x, 9, 1.f, "x");
  const Tensor w = test::random_tensor({c.x[1], c.o, c.k, c.k}, 10, 0.3f, "w");
  const Tensor b = test::random_tensor({c.o}, 11, 1.f, "b");
  const Tensor want = ref::conv_transpose2d(rounded(x), rounded(w), b, static_cast<int>(c.k));
  const Shape ys{c.x[0], c.o, c.x[2] * c.k, c.x[3] * c.k};
  const int s = static_cast<int>(c.k);
  Tensor y = test::output_tensor(ys);
  ops::conv_transpose2d(ctx, x, test::to_bf16(w), b, y, s);
  test::expect_close(y, want, 1e-5, 1e-4, "planes");
  const Tensor tokens = ref::permute(x, {0, 2, 3, 1}).reshape({c.x[0], c.x[2] * c.x[3], c.x[1]});
  Tensor yt = test::output_tensor(ys);
  ops::conv_transpose2d_tokens(ctx, tokens, c.x[2], c.x[3], test::to_bf16(w), b, yt, s);
  test::expect_close(yt, want, 1e-5, 1e-4, "tokens");
  EXPECT_LE(test::diff(y, ref::conv_transpose2d(x, w, b, s)).rel_l2, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTranspose2dBf16Test,
                         ::testing::Values(DeconvBf16Case{{1, 48, 5, 7}, 24, 4}, DeconvBf16Case{{2, 32, 6, 3}, 40, 2}));

// upsample_conv_head with bf16 weights: the upsampled map is rounded to bf16 for the 3×3 conv, whose hidden map
// stays f32 for the 1×1 conv (its bf16 weight widened exactly). One band and bands of two rows.
TEST_F(Bf16WeightsTest, UpsampleConvHeadEqualsTheRoundedConvs) {
  const int64_t c = 16, m = 32, oh = 13, ow = 17;
  const Tensor x = test::random_tensor({2, c, 5, 6}, 21, 1.f, "x");
  const Tensor w3 = test::random_tensor({m, c, 3, 3}, 22, 0.2f, "w3"), w1 = test::random_tensor({1, m, 1, 1}, 23, 0.3f);
  const Tensor b3 = test::random_tensor({m}, 24, 0.5f, "b3"), b1 = test::random_tensor({1}, 25, 0.5f, "b1");
  const Tensor up = ref::resize_bilinear(x, oh, ow, /*align_corners=*/true);
  const Tensor hidden = ref::conv2d(rounded(up), rounded(w3), b3, 1, 1, 1, 1, /*relu=*/true);
  const Tensor want = ref::conv2d(hidden, rounded(w1), b1, 1, 1, 0, 0, false);
  const Tensor exact = ref::conv2d(ref::conv2d(up, w3, b3, 1, 1, 1, 1, true), w1, b1, 1, 1, 0, 0, false);
  for (const size_t band_rows : {size_t{0}, size_t{2}}) {
    ops::Context bctx;
    if (band_rows != 0) bctx.cpu().set_work_limit_bytes(2 * band_rows * static_cast<size_t>(c * ow * 4));
    Tensor y = test::output_tensor({2, 1, oh, ow});
    ops::upsample_conv_head(bctx, x, test::to_bf16(w3), b3, test::to_bf16(w1), b1, y);
    test::expect_close(y, want, 1e-5, 1e-4, band_rows != 0 ? "2-row bands" : "one band");
    EXPECT_LE(test::diff(y, exact).rel_l2, 1e-2);
  }
}

// round_to_bf16 (the linear's x and attention's operands in a bf16 model): every length's tail, split over the
// threads or not, equals the scalar rounding (nearest even) except that the native instruction reads denormals as
// zero, as oneDNN's bf16 kernels do; a NaN stays a NaN.
TEST(Bf16RoundTest, EqualsTheScalarRoundingForEveryTail) {
  ThreadPool pool(2);
  cpu::CpuContext c(pool, 4);
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{32},
                          int64_t{33}, int64_t{63}, int64_t{70}, int64_t{200003}}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      x[static_cast<size_t>(i)] = std::ldexp(std::sin(0.37f * static_cast<float>(i)), static_cast<int>(i % 40) - 20);
    if (n > 5) {
      x[1] = std::nanf("");
      x[2] = 1.00390625f;     // a tie: 1 + 2^-8, rounds to even (1)
      x[3] = 1.01171875f;     // a tie the other way: 1 + 3·2^-8 → 1 + 2^-6
      x[4] = 1e-40f;          // a denormal
      x[5] = -3.4028235e38f;  // rounds past the largest bf16: −inf
    }
    std::vector<uint16_t> y(static_cast<size_t>(n) + 1, 0xABCD), serial(static_cast<size_t>(n) + 1, 0xABCD);
    cpu::round_to_bf16(c, x.data(), y.data(), n);
    cpu::round_to_bf16_serial(x.data(), serial.data(), n);
    EXPECT_EQ(y, serial) << n << " values: the threads' split changes nothing";
    EXPECT_EQ(y[static_cast<size_t>(n)], 0xABCD) << n << " values: wrote past the end";
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[static_cast<size_t>(i)];
      const uint16_t got = y[static_cast<size_t>(i)];
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(bf16_to_f32(got))) << i;
      } else if (std::fpclassify(v) == FP_SUBNORMAL && cpu::bf16_rounding_native()) {
        EXPECT_EQ(bf16_to_f32(got), 0.f) << i;
      } else {
        EXPECT_EQ(got, f32_to_bf16(v)) << n << " values, index " << i << ": " << v;
      }
    }
  }
}

TEST_F(Bf16WeightsTest, ActivationsStayF32AndOtherWeightDtypesAreNamed) {
  const Tensor x = test::random_tensor({1, 8, 6, 6}, 12), w = test::random_tensor({8, 8, 3, 3}, 13, 0.3f, "w");
  Tensor y = test::output_tensor({1, 8, 6, 6});
  // A bf16 activation is not a CPU dtype (only a linear's x may be a bf16 weight).
  try {
    ops::conv2d(ctx, test::to_bf16(x), test::to_bf16(w), Tensor(), y, ops::Conv2dParams{1, 1, 1, 1});
    FAIL() << "conv2d took a bf16 x on the CPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("expected f32"), std::string::npos) << e.what();
  }
  // f16 weights are a GPU precision.
  Tensor w16 = Tensor::empty(w.shape(), DType::F16, "w16");
  try {
    ops::conv2d(ctx, x, w16, Tensor(), y, ops::Conv2dParams{1, 1, 1, 1});
    FAIL() << "conv2d took an f16 weight on the CPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("w 'w16' has dtype f16, expected f32 or bf16"), std::string::npos) << e.what();
  }
  Tensor yl = test::output_tensor({6, 8});
  EXPECT_THROW(ops::linear(ctx, test::random_tensor({6, 8}, 14), Tensor::empty({8, 8}, DType::F16, "wl"), Tensor(), yl),
               Error);
}

TEST(Bf16SupportTest, NamesTheInstructionSetOneDnnDispatchesTo) {
  const cpu::Bf16Support& s = cpu::bf16_support();
  EXPECT_FALSE(s.isa.empty());
  // Native bf16 implies oneDNN has the kernels.
  if (s.native) {
    EXPECT_TRUE(s.refusal.empty()) << s.refusal;
  }
  EXPECT_EQ(&s, &cpu::bf16_support());  // probed once
}

}  // namespace
}  // namespace dacpp
