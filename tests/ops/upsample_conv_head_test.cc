// ops::upsample_conv_head and ops::conv2d_upsampled on the CPU against loops written out here: bilinear upsampling
// with align_corners, a zero-padded 3×3 conv, ReLU, a 1×1 conv to one channel (double precision), and refusals.
#include "ops/upsample_conv_head.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_context.h"
#include "core/error.h"
#include "core/fault.h"
#include "ops/conv2d.h"
#include "ops/op_test_util.h"

namespace dacpp {
namespace {

// The op's definition, one output at a time; `add` (cols [C, ow], rows [C, oh]) added to the upsampled map.
Tensor naive(const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1, const Tensor& b1, int64_t oh,
             int64_t ow, const ops::UpsampledAdd* add = nullptr) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), m = w3.dim(0), outs = w1.dim(0);
  const float* xp = x.data<float>();
  std::vector<double> up(static_cast<size_t>(n * c * oh * ow));
  const auto taps = [](int64_t in, int64_t out, int64_t o, int64_t& i0, int64_t& i1, double& l) {
    const double src = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) * o : 0.0;
    i0 = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
    i1 = std::min<int64_t>(i0 + 1, in - 1);
    l = src - static_cast<double>(i0);
  };
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t y0, y1, x0, x1;
        double ly, lx;
        taps(h, oh, oy, y0, y1, ly);
        taps(w, ow, ox, x0, x1, lx);
        const float* s = xp + p * h * w;
        const double top = (1 - lx) * s[y0 * w + x0] + lx * s[y0 * w + x1];
        const double bottom = (1 - lx) * s[y1 * w + x0] + lx * s[y1 * w + x1];
        const int64_t ch = p % c;
        const double plus = add != nullptr ? static_cast<double>(add->cols.data<float>()[ch * ow + ox]) +
                                                 add->rows.data<float>()[ch * oh + oy]
                                           : 0.0;
        up[static_cast<size_t>((p * oh + oy) * ow + ox)] = (1 - ly) * top + ly * bottom + plus;
      }
  Tensor y = Tensor::empty({n, outs, oh, ow}, DType::F32, "naive");
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < outs; ++o)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double out = b1.defined() ? b1.data<float>()[o] : 0.0;
          for (int64_t j = 0; j < m; ++j) {
            double hid = b3.defined() ? b3.data<float>()[j] : 0.0;
            for (int64_t ci = 0; ci < c; ++ci)
              for (int64_t ky = 0; ky < 3; ++ky)
                for (int64_t kx = 0; kx < 3; ++kx) {
                  const int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                  if (iy < 0 || iy >= oh || ix < 0 || ix >= ow) continue;
                  hid += static_cast<double>(w3.data<float>()[((j * c + ci) * 3 + ky) * 3 + kx]) *
                         up[static_cast<size_t>(((b * c + ci) * oh + iy) * ow + ix)];
                }
            out += static_cast<double>(w1.data<float>()[o * m + j]) * std::max(hid, 0.0);
          }
          y.data<float>()[((b * outs + o) * oh + oy) * ow + ox] = static_cast<float>(out);
        }
  return y;
}

TEST(UpsampleConvHead, MatchesTheWrittenOutDefinition) {
  ops::Context ctx;
  struct Case {
    int64_t n, c, h, w, m, oh, ow;
    bool bias;
  };
  for (const Case& k : {Case{2, 4, 3, 4, 3, 5, 7, true}, Case{1, 3, 1, 1, 2, 4, 3, false},
                        Case{1, 2, 6, 5, 4, 6, 5, true}, Case{1, 5, 7, 9, 6, 19, 26, true}}) {
    Tensor x = test::random_tensor({k.n, k.c, k.h, k.w}, 1, 1.f, "x");
    Tensor w3 = test::random_tensor({k.m, k.c, 3, 3}, 2, 0.4f, "w3");
    Tensor w1 = test::random_tensor({1, k.m, 1, 1}, 3, 0.5f, "w1");
    Tensor b3 = k.bias ? test::random_tensor({k.m}, 4, 0.3f, "b3") : Tensor();
    Tensor b1 = k.bias ? test::random_tensor({1}, 5, 0.3f, "b1") : Tensor();
    Tensor y = test::output_tensor({k.n, 1, k.oh, k.ow});
    ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y);
    const Tensor logits = naive(x, w3, b3, w1, b1, k.oh, k.ow);
    const test::Diff d = test::diff(y, logits);
    EXPECT_LE(d.rel_l2, 1e-5) << k.c << " channels, " << k.h << "x" << k.w << " -> " << k.oh << "x" << k.ow;
    EXPECT_TRUE(ops::upsample_conv_head_fused(ctx, x, w3, y)) << "the CPU never stores the full-size maps";
    // The head's activation applied to the logits (ops::HeadFinal).
    for (const ops::HeadFinal final : {ops::HeadFinal::Relu, ops::HeadFinal::Exp}) {
      Tensor ya = test::output_tensor({k.n, 1, k.oh, k.ow});
      ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, ya, final);
      Tensor want = logits.clone();
      for (int64_t i = 0; i < want.numel(); ++i) {
        float& v = want.data<float>()[i];
        v = final == ops::HeadFinal::Relu ? std::max(v, 0.f) : std::exp(v);
      }
      EXPECT_LE(test::diff(ya, want).rel_l2, 1e-5) << "final " << static_cast<int>(final);
    }
  }
}

// The CPU runs the op in bands of output rows, each upsampled with a halo row either side and convolved with the
// image's edge padding only where it touches an edge. Bands of 1, 2, 3 and 5 rows (a small work limit) against the
// definition and against one band: every split of rows gives the whole, and a one-row band is padded on both sides.
TEST(UpsampleConvHead, BandsOfAnyHeightGiveTheWhole) {
  const int64_t n = 2, c = 6, h = 4, w = 5, m = 9, oh = 11, ow = 13;
  const Tensor x = test::random_tensor({n, c, h, w}, 11, 1.f, "x");
  const Tensor w3 = test::random_tensor({m, c, 3, 3}, 12, 0.4f, "w3");
  const Tensor w1 = test::random_tensor({1, m, 1, 1}, 13, 0.5f, "w1");
  const Tensor b3 = test::random_tensor({m}, 14, 0.3f, "b3"), b1 = test::random_tensor({1}, 15, 0.3f, "b1");
  const Tensor want = naive(x, w3, b3, w1, b1, oh, ow);
  ops::Context whole_ctx;
  Tensor whole = test::output_tensor({n, 1, oh, ow});
  ops::upsample_conv_head(whole_ctx, x, w3, b3, w1, b1, whole);
  EXPECT_LE(test::diff(whole, want).rel_l2, 1e-5);
  const size_t row_bytes = static_cast<size_t>(c * ow * 4);
  for (const size_t rows : {1, 2, 3, 5}) {
    ops::Context ctx;
    ctx.cpu().set_work_limit_bytes(2 * rows * row_bytes);
    Tensor y = test::output_tensor({n, 1, oh, ow});
    ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y);
    EXPECT_LE(test::diff(y, want).rel_l2, 1e-5) << rows << "-row bands";
    EXPECT_LE(test::diff(y, whole).max_abs, 1e-5) << rows << "-row bands against one band";
  }
}

// The op's only failures besides oneDNN's are its two scratch buffers (the upsampled band, the hidden band): each
// allocation failing in turn is an OutOfMemory error naming the CPU scratch, and the next call on the same context
// gives the whole.
TEST(UpsampleConvHead, ScratchFailureIsOutOfMemoryAndTheContextRecovers) {
  const int64_t n = 1, c = 4, h = 3, w = 4, m = 5, oh = 7, ow = 9;
  const Tensor x = test::random_tensor({n, c, h, w}, 31, 1.f, "x");
  const Tensor w3 = test::random_tensor({m, c, 3, 3}, 32, 0.4f, "w3");
  const Tensor w1 = test::random_tensor({1, m, 1, 1}, 33, 0.5f, "w1");
  const Tensor b3 = test::random_tensor({m}, 34, 0.3f, "b3"), b1 = test::random_tensor({1}, 35, 0.3f, "b1");
  const Tensor want = naive(x, w3, b3, w1, b1, oh, ow);
  for (const int alloc : {1, 2}) {
    ops::Context ctx;
    Tensor y = test::output_tensor({n, 1, oh, ow});
    fault::configure("host.alloc:" + std::to_string(alloc));
    try {
      ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y);
      ADD_FAILURE() << "allocation " << alloc << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.message();
      EXPECT_NE(e.message().find("cpu scratch"), std::string::npos) << e.message();
    }
    fault::configure("");
    ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y);
    EXPECT_LE(test::diff(y, want).rel_l2, 1e-5) << "after allocation " << alloc << " failed";
  }
}

// Several output channels (DualDPT's depth and confidence) and a separable map added to the upsampled one (its UV
// embedding: half the channels varying along a row, half down a column), in one band and in bands of 2 rows; the
// add's tables of the wrong size are refused.
TEST(UpsampleConvHead, OutputChannelsAndASeparableAddMatchTheDefinition) {
  const int64_t n = 2, c = 8, h = 4, w = 6, m = 5, outs = 2, oh = 9, ow = 11;
  const Tensor x = test::random_tensor({n, c, h, w}, 21, 1.f, "x");
  const Tensor w3 = test::random_tensor({m, c, 3, 3}, 22, 0.4f, "w3");
  const Tensor w1 = test::random_tensor({outs, m, 1, 1}, 23, 0.5f, "w1");
  const Tensor b3 = test::random_tensor({m}, 24, 0.3f, "b3"), b1 = test::random_tensor({outs}, 25, 0.3f, "b1");
  ops::UpsampledAdd add{Tensor::zeros({c, ow}, DType::F32, "cols"), Tensor::zeros({c, oh}, DType::F32, "rows")};
  const Tensor rc = test::random_tensor({c, ow}, 26, 0.5f), rr = test::random_tensor({c, oh}, 27, 0.5f);
  for (int64_t k = 0; k < c; ++k) {
    if (k < c / 2)
      std::copy(rc.data<float>() + k * ow, rc.data<float>() + (k + 1) * ow, add.cols.data<float>() + k * ow);
    else
      std::copy(rr.data<float>() + k * oh, rr.data<float>() + (k + 1) * oh, add.rows.data<float>() + k * oh);
  }
  const Tensor want = naive(x, w3, b3, w1, b1, oh, ow, &add);
  EXPECT_GT(test::diff(want, naive(x, w3, b3, w1, b1, oh, ow)).rel_l2, 1e-2) << "the add must matter";
  for (const size_t rows : {size_t{0}, size_t{2}}) {
    ops::Context ctx;
    if (rows != 0) ctx.cpu().set_work_limit_bytes(2 * rows * static_cast<size_t>(c * ow * 4));
    Tensor y = test::output_tensor({n, outs, oh, ow});
    ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y, ops::HeadFinal::None, &add);
    EXPECT_LE(test::diff(y, want).rel_l2, 1e-5) << (rows != 0 ? "2-row bands" : "one band");
  }
  ops::Context ctx;
  Tensor y = test::output_tensor({n, outs, oh, ow});
  const ops::UpsampledAdd short_cols{Tensor::zeros({c, ow - 1}, DType::F32, "cols"), add.rows};
  try {
    ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y, ops::HeadFinal::None, &short_cols);
    FAIL() << "took add.cols of the wrong width";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("add.cols"), std::string::npos) << e.what();
  }
  Tensor y1 = test::output_tensor({n, 1, oh, ow});
  EXPECT_THROW(ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y1), Error) << "y's channels must be w1's outputs";
}

// conv2d_upsampled's output y [n, o, oh, ow] (ReLU epilogue) against naive() per output channel j, with w[j] as its
// only hidden channel, b[j] as its bias and a 1×1 weight of 1: relu(b[j] + conv3x3(up(x), w[j])).
void expect_upsampled_conv(const Tensor& y, const Tensor& x, const Tensor& wt, const Tensor& b,
                           const std::string& what) {
  const int64_t n = y.dim(0), o = y.dim(1), oh = y.dim(2), ow = y.dim(3), c = wt.dim(1);
  for (int64_t j = 0; j < o; ++j) {
    Tensor w3 = Tensor::empty({1, c, 3, 3}, DType::F32, "w3");
    std::copy(wt.data<float>() + j * c * 9, wt.data<float>() + (j + 1) * c * 9, w3.data<float>());
    Tensor b3 = Tensor::from_vector({1}, {b.data<float>()[j]}, "b3");
    Tensor w1 = Tensor::from_vector({1, 1, 1, 1}, {1.f}, "w1");
    const Tensor want = naive(x, w3, b3, w1, Tensor(), oh, ow);
    Tensor got = Tensor::empty({n, 1, oh, ow}, DType::F32, "got");
    for (int64_t i = 0; i < n; ++i)
      std::copy(y.data<float>() + (i * o + j) * oh * ow, y.data<float>() + (i * o + j + 1) * oh * ow,
                got.data<float>() + i * oh * ow);
    EXPECT_LE(test::diff(got, want).rel_l2, 1e-5) << what << ", output channel " << j;
  }
}

// conv2d_upsampled on the CPU against expect_upsampled_conv's definition.
TEST(Conv2dUpsampled, MatchesTheWrittenOutDefinition) {
  ops::Context ctx;
  const int64_t n = 2, c = 3, h = 4, w = 5, oh = 9, ow = 11, o = 4;
  Tensor x = test::random_tensor({n, c, h, w}, 1, 1.f, "x");
  Tensor wt = test::random_tensor({o, c, 3, 3}, 2, 0.4f, "w");
  Tensor b = test::random_tensor({o}, 3, 0.3f, "bias");
  Tensor y = test::output_tensor({n, o, oh, ow});
  ops::conv2d_upsampled(ctx, x, wt, b, y, ops::Activation::Relu);
  expect_upsampled_conv(y, x, wt, b, "conv2d_upsampled");
  EXPECT_FALSE(ops::conv2d_upsampled_fused(ctx, x, wt, y)) << "the CPU has no fused kernel";
  Tensor w1x1 = test::random_tensor({o, c, 1, 1}, 2, 1.f, "w");
  try {
    ops::conv2d_upsampled(ctx, x, w1x1, b, y);
    ADD_FAILURE() << "conv2d_upsampled accepted a 1x1 kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
}

// conv2d_upsampled after a 1×1 conv (ops::Pointwise) on the CPU: the 1×1 conv written out here (double sums), then
// each output channel against naive() as above; and its mismatched operands.
TEST(Conv2dUpsampled, AfterAPointwiseConvMatchesTheWrittenOutDefinition) {
  ops::Context ctx;
  const int64_t n = 2, c0 = 5, c = 3, h = 4, w = 5, oh = 9, ow = 11, o = 4;
  Tensor x = test::random_tensor({n, c0, h, w}, 1, 1.f, "x");
  Tensor pw = test::random_tensor({c, c0, 1, 1}, 6, 0.5f, "pre.w");
  Tensor pb = test::random_tensor({c}, 7, 0.4f, "pre.bias");
  Tensor wt = test::random_tensor({o, c, 3, 3}, 2, 0.4f, "w");
  Tensor b = test::random_tensor({o}, 3, 0.3f, "bias");
  for (const bool pre_bias : {true, false}) {
    const ops::Pointwise pre{pw, pre_bias ? pb : Tensor()};
    Tensor y = test::output_tensor({n, o, oh, ow});
    ops::conv2d_upsampled(ctx, x, pre, wt, b, y, ops::Activation::Relu);
    Tensor mixed = Tensor::empty({n, c, h, w}, DType::F32, "mixed");
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t p = 0; p < h * w; ++p) {
          double v = pre_bias ? pb.data<float>()[k] : 0.0;
          for (int64_t j = 0; j < c0; ++j)
            v += static_cast<double>(pw.data<float>()[k * c0 + j]) * x.data<float>()[(i * c0 + j) * h * w + p];
          mixed.data<float>()[(i * c + k) * h * w + p] = static_cast<float>(v);
        }
    expect_upsampled_conv(y, mixed, wt, b, pre_bias ? "after the 1x1 conv" : "after the 1x1 conv, no 1x1 bias");
    EXPECT_FALSE(ops::conv2d_upsampled_folds(ctx, x, pre, wt, y)) << "the CPU folds nothing";
  }
  const auto expect_invalid = [&](const Tensor& xx, const ops::Pointwise& pre, const Tensor& ww, const char* what) {
    Tensor y = test::output_tensor({n, o, oh, ow});
    try {
      ops::conv2d_upsampled(ctx, xx, pre, ww, b, y);
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("1x1"), std::string::npos) << e.what();
    }
  };
  expect_invalid(test::random_tensor({n, c0 + 1, h, w}, 1, 1.f, "x"), ops::Pointwise{pw, pb}, wt,
                 "x with other channels than pre.w takes");
  expect_invalid(x, ops::Pointwise{test::random_tensor({c, c0, 3, 3}, 6, 1.f, "pre.w"), pb}, wt, "a 3x3 pre.w");
  expect_invalid(x, ops::Pointwise{pw, test::random_tensor({c + 1}, 7, 1.f, "pre.bias")}, wt,
                 "pre.bias of another length");
  expect_invalid(x, ops::Pointwise{pw, pb}, test::random_tensor({o, c + 1, 3, 3}, 2, 1.f, "w"),
                 "w with other channels than pre.w makes");
}

TEST(UpsampleConvHead, MismatchedOperandsAreInvalidArguments) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 4, 3, 3}, 1, 1.f, "x");
  Tensor w3 = test::random_tensor({2, 4, 3, 3}, 2, 1.f, "w3");
  Tensor w1 = test::random_tensor({1, 2, 1, 1}, 3, 1.f, "w1");
  Tensor y = test::output_tensor({1, 1, 6, 6});
  const auto expect_invalid = [&](const Tensor& xx, const Tensor& ww3, const Tensor& ww1, const Tensor& b3, Tensor& yy,
                                  const char* what) {
    try {
      ops::upsample_conv_head(ctx, xx, ww3, b3, ww1, Tensor(), yy);
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << what << ": " << e.what();
    }
  };
  Tensor w3_c = test::random_tensor({2, 5, 3, 3}, 2, 1.f, "w3");
  expect_invalid(x, w3_c, w1, Tensor(), y, "w3 with other input channels");
  Tensor w3_k = test::random_tensor({2, 4, 1, 1}, 2, 1.f, "w3");
  expect_invalid(x, w3_k, w1, Tensor(), y, "a 1x1 w3");
  Tensor w1_m = test::random_tensor({1, 3, 1, 1}, 3, 1.f, "w1");
  expect_invalid(x, w3, w1_m, Tensor(), y, "w1 with other hidden channels");
  Tensor w1_two = test::random_tensor({2, 2, 1, 1}, 3, 1.f, "w1");
  expect_invalid(x, w3, w1_two, Tensor(), y, "two output channels");
  Tensor b3_bad = test::random_tensor({3}, 4, 1.f, "b3");
  expect_invalid(x, w3, w1, b3_bad, y, "b3 of 3 for 2 hidden channels");
  Tensor y_c = test::output_tensor({1, 2, 6, 6});
  expect_invalid(x, w3, w1, Tensor(), y_c, "y with two channels");
  Tensor y_n = test::output_tensor({2, 1, 6, 6});
  expect_invalid(x, w3, w1, Tensor(), y_n, "y with another batch");
}

}  // namespace
}  // namespace dacpp
