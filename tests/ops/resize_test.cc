#include "ops/resize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "ops/op_test_util.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

struct ResizeCase {
  Shape x;
  int64_t oh, ow;
  bool cubic, align_corners;
  double scale_h = 0, scale_w = 0;
};

Tensor run_fast(const ResizeCase& c, const Tensor& x) {
  ops::Context ctx;
  Tensor y = test::output_tensor({c.x[0], c.x[1], c.oh, c.ow});
  if (c.cubic) ops::resize_bicubic(ctx, x, y, c.align_corners, c.scale_h, c.scale_w);
  else ops::resize_bilinear(ctx, x, y, c.align_corners);
  return y;
}

Tensor run_ref(const ResizeCase& c, const Tensor& x) {
  return c.cubic ? ref::resize_bicubic(x, c.oh, c.ow, c.align_corners, c.scale_h, c.scale_w)
                 : ref::resize_bilinear(x, c.oh, c.ow, c.align_corners);
}

class ResizeTest : public ::testing::TestWithParam<ResizeCase> {};

TEST_P(ResizeTest, MatchesReference) {
  const ResizeCase& c = GetParam();
  Tensor x = test::random_tensor(c.x, 7, 1.f, "x");
  test::expect_close(run_fast(c, x), run_ref(c, x));
}

std::string resize_name(const ::testing::TestParamInfo<ResizeCase>& i) {
  const ResizeCase& c = i.param;
  return test::case_name(i.index, std::string(c.cubic ? "cubic" : "linear") + (c.align_corners ? "AC_" : "_") +
                                      test::shape_tag({c.x[2], c.x[3]}) + "to" + test::shape_tag({c.oh, c.ow}) +
                                      (c.scale_h > 0 ? "_scaled" : ""));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ResizeTest,
    ::testing::Values(ResizeCase{{1, 1, 1, 1}, 3, 2, false, false}, ResizeCase{{1, 1, 1, 1}, 3, 2, true, true},
                      ResizeCase{{1, 3, 5, 7}, 11, 3, false, false}, ResizeCase{{1, 3, 5, 7}, 11, 3, false, true},
                      ResizeCase{{2, 2, 37, 37}, 74, 74, false, true}, ResizeCase{{1, 4, 8, 9}, 8, 9, false, false},
                      ResizeCase{{1, 2, 6, 5}, 11, 13, true, false}, ResizeCase{{1, 2, 6, 5}, 11, 13, true, true},
                      ResizeCase{{1, 3, 40, 30}, 17, 9, true, false}, ResizeCase{{2, 1, 9, 9}, 1, 1, true, true},
                      ResizeCase{{1, 2, 37, 37}, 36, 46, true, false, 37 / 36.1, 37 / 46.1},
                      ResizeCase{{1, 1, 20, 24}, 61, 50, true, false, 1 / 3.05, 1 / 2.1}),
                         resize_name);

// The input pattern of scripts/gen_op_refs.py.
Tensor pattern(const Shape& s) {
  Tensor t = Tensor::empty(s, DType::F32, "x");
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = static_cast<float>(std::sin(0.37 * i) + 0.25 * std::cos(1.3 * i));
  return t;
}

Tensor load_fixture(const std::string& name, const Shape& s) {
  const std::string path = std::string(DACPP_FIXTURES_DIR) + "/ops/" + name + ".bin";
  std::ifstream f(path, std::ios::binary);
  Tensor t = Tensor::empty(s);
  f.read(reinterpret_cast<char*>(t.data<float>()), static_cast<std::streamsize>(t.nbytes()));
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  return t;
}

struct TorchCase {
  const char* name;
  ResizeCase c;
};

class ResizeTorchTest : public ::testing::TestWithParam<TorchCase> {};

// Pins the semantics to torch 1.13 F.interpolate (fixtures from scripts/gen_op_refs.py).
TEST_P(ResizeTorchTest, MatchesTorch) {
  const TorchCase& t = GetParam();
  Tensor x = pattern(t.c.x);
  Tensor want = load_fixture(t.name, {t.c.x[0], t.c.x[1], t.c.oh, t.c.ow});
  test::expect_close(run_fast(t.c, x), want, 1e-6, 1e-5, "fast");
  test::expect_close(run_ref(t.c, x), want, 1e-6, 1e-5, "reference");
}

std::string torch_name(const ::testing::TestParamInfo<TorchCase>& i) {
  return test::case_name(i.index, i.param.name);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ResizeTorchTest,
    ::testing::Values(TorchCase{"bilinear_ac0_5x7_9x4", {{1, 2, 5, 7}, 9, 4, false, false}},
                      TorchCase{"bilinear_ac1_5x7_9x4", {{1, 2, 5, 7}, 9, 4, false, true}},
                      TorchCase{"bicubic_ac0_6x5_11x13", {{2, 1, 6, 5}, 11, 13, true, false}},
                      TorchCase{"bicubic_ac1_6x5_11x13", {{2, 1, 6, 5}, 11, 13, true, true}},
                      TorchCase{"bicubic_ac0_37x37_scale", {{1, 2, 37, 37}, 36, 46, true, false, 37 / 36.1, 37 / 46.1}},
                      TorchCase{"bicubic_ac0_9x8_down_4x3", {{1, 1, 9, 8}, 4, 3, true, false}}),
                         torch_name);

TEST(ResizeScaleTest, ScaleFactorChangesResult) {
  // With scale_factor torch steps by 1/scale, not H/OH: the two must differ for 37 → 36.
  ResizeCase with{{1, 1, 37, 37}, 36, 46, true, false, 37 / 36.1, 37 / 46.1};
  ResizeCase without = with;
  without.scale_h = without.scale_w = 0;
  Tensor x = test::random_tensor(with.x, 3);
  const test::Diff d = test::diff(run_fast(with, x), run_fast(without, x));
  EXPECT_GT(d.max_abs, 1e-3);
}

// resize_bilinear_add: the resize, + bias per channel, + y's own values when accumulating, written out here.
TEST(ResizeBilinearAddTest, AddsTheBiasAndWhatYHeld) {
  ops::Context ctx;
  const Shape xs{2, 3, 5, 7}, ys{2, 3, 9, 13};
  Tensor x = test::random_tensor(xs, 1, 1.f, "x");
  Tensor bias = test::random_tensor({3}, 2, 1.f, "bias");
  Tensor prior = test::random_tensor(ys, 3, 1.f, "prior");
  Tensor up = test::output_tensor(ys, "up");
  ops::resize_bilinear(ctx, x, up, /*align_corners=*/true);
  for (const bool with_bias : {true, false})
    for (const bool accumulate : {true, false}) {
      Tensor y = prior.clone();
      ops::resize_bilinear_add(ctx, x, with_bias ? bias : Tensor(), y, true, accumulate);
      Tensor want = Tensor::empty(ys, DType::F32, "want");
      const int64_t plane = ys[2] * ys[3];
      for (int64_t i = 0; i < want.numel(); ++i) {
        const int64_t c = i / plane % ys[1];
        want.data<float>()[i] = up.data<float>()[i] + (with_bias ? bias.data<float>()[c] : 0.f) +
                                (accumulate ? prior.data<float>()[i] : 0.f);
      }
      test::expect_close(y, want, 1e-6, 1e-6, str_cat("bias ", with_bias, ", accumulate ", accumulate));
    }
  Tensor y = test::output_tensor(ys);
  try {
    ops::resize_bilinear_add(ctx, x, test::random_tensor({4}, 2, 1.f, "bias4"), y, true, false);
    FAIL() << "a bias of 4 for 3 channels was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("bias4"), std::string::npos) << e.message();
  }
}

TEST(ResizeErrorTest, ChannelMismatchNamed) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 3, 4, 4}, 1, 1.f, "depth");
  Tensor y = test::output_tensor({1, 2, 8, 8}, "depth_up");
  try {
    ops::resize_bilinear(ctx, x, y, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("depth_up"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace dacpp
