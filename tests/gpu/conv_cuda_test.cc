// ops::conv2d and ops::conv_transpose2d on CUDA against the CPU backend on the same (dtype-rounded) inputs, for
// the geometries of the DPT heads and the patch embedding, in f32 (exact kernel) and bf16/f16 (tensor cores).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "backends/cuda/conv2d_variants.cuh"
#include "core/fault.h"
#include "gpu/nn_cuda_test_util.h"
#include "ops/conv2d.h"
#include "ops/elementwise.h"
#include "ops/permute.h"

namespace dacpp {
namespace {

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  int stride, pad;
  bool bias, relu;
  DType dt;
};

class Conv2dCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<ConvCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(Conv2dCudaTest, MatchesCpu) {
  if (IsSkipped()) return;
  const ConvCase& c = GetParam();
  const int64_t oh = (c.h + 2 * c.pad - c.kh) / c.stride + 1, ow = (c.w + 2 * c.pad - c.kw) / c.stride + 1;
  Tensor x = test::random_tensor({c.n, c.c, c.h, c.w}, 1, 1.f, "x");
  Tensor w = test::random_tensor({c.o, c.c, c.kh, c.kw}, 2, 0.3f, "w");
  Tensor b = c.bias ? test::random_tensor({c.o}, 3, 0.5f, "bias") : Tensor();
  Tensor xd = to_device(x, c.dt), wd = to_device(w, c.dt);
  Tensor bd = c.bias ? to_device(b, DType::F32) : Tensor();
  Tensor y = nan_output({c.n, c.o, oh, ow}, c.dt);
  const ops::Conv2dParams p{c.stride, c.stride, c.pad, c.pad};
  const ops::Activation act = c.relu ? ops::Activation::Relu : ops::Activation::None;
  ops::conv2d(ctx(), xd, wd, bd, y, p, act);

  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({c.n, c.o, oh, ow});
  ops::conv2d(cpu, x, w, b, want, p, act);
  expect_close(y, want, c.dt, "conv2d");

  // Every path on every geometry, whatever the dispatcher picks: the implicit GEMM and im2col + cuBLASLt.
  const cuda::ConvGeometry g{c.stride, c.stride, c.pad, c.pad};
  const cuda::Epilogue e = c.relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
  Tensor y2 = nan_output({c.n, c.o, oh, ow}, c.dt);
  cuda::conv2d_generic(ctx().cuda(), xd, wd, bd, y2, g, e);
  expect_close(y2, want, c.dt, "conv2d implicit GEMM");
  Tensor y3 = nan_output({c.n, c.o, oh, ow}, c.dt);
  cuda::conv2d_im2col_gemm(ctx().cuda(), xd, wd, bd, y3, g, e);
  expect_close(y3, want, c.dt, "conv2d im2col + cuBLASLt");
  // 1×1 convs: the GEMM on a pitched copy (rows padded to 8 pixels), whatever the pixel count; others refuse it.
  Tensor yp = nan_output({c.n, c.o, oh, ow}, c.dt);
  if (c.kh == 1 && c.kw == 1 && c.stride == 1 && c.pad == 0) {
    cuda::conv2d_gemm_pitched(ctx().cuda(), xd, wd, bd, yp, g, e);
    expect_close(yp, want, c.dt, "conv2d pitched 1x1 GEMM");
  } else {
    EXPECT_THROW(cuda::conv2d_gemm_pitched(ctx().cuda(), xd, wd, bd, yp, g, e), Error);
  }
  // The row-shifted GEMMs (kx taps gathered, one accumulating GEMM per ky) take vertical stride 1, KH > 1.
  Tensor y6 = nan_output({c.n, c.o, oh, ow}, c.dt);
  if (c.stride == 1 && c.kh > 1) {
    cuda::conv2d_row_gemm(ctx().cuda(), xd, wd, bd, y6, g, e);
    expect_close(y6, want, c.dt, "conv2d row-shifted GEMMs");
    // A weight without owned storage: its ky-major copy shares the scratch with the gathered taps.
    const Tensor w_view = Tensor::view(wd.raw(), wd.shape(), wd.dtype(), wd.device(), nullptr, "w (borrowed)");
    Tensor y7 = nan_output({c.n, c.o, oh, ow}, c.dt);
    cuda::conv2d_row_gemm(ctx().cuda(), xd, w_view, bd, y7, g, e);
    expect_close(y7, want, c.dt, "conv2d row-shifted GEMMs, borrowed weight");
  } else {
    try {
      cuda::conv2d_row_gemm(ctx().cuda(), xd, wd, bd, y6, g, e);
      ADD_FAILURE() << "row-shifted GEMMs accepted stride " << c.stride << ", KH " << c.kh;
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), ErrorCode::InvalidArgument) << err.what();
    }
  }
  if (c.dt != DType::F32 && c.kh == 3 && c.kw == 3 && c.stride == 1 && c.pad == 1 && c.c % 16 == 0) {
    for (int wm : {1, 2})
      for (int th : {8, 16}) {
        Tensor y4 = nan_output({c.n, c.o, oh, ow}, c.dt);
        cuda::conv2d_direct3x3(ctx().cuda(), xd, wd, bd, y4, e, wm, th);
        expect_close(y4, want, c.dt, "conv2d direct 3x3 " + std::to_string(32 * wm) + "x" + std::to_string(th));
      }
    // Split K over the 16-channel chunks (f32 partials, then the sum with bias and ReLU), where there are enough.
    for (int splits : {2, 4}) {
      Tensor y4 = nan_output({c.n, c.o, oh, ow}, c.dt);
      if (c.c / 16 < splits) {
        EXPECT_THROW(cuda::conv2d_direct3x3(ctx().cuda(), xd, wd, bd, y4, e, 1, 8, splits), Error);
        continue;
      }
      for (int wm : {1, 2}) {
        cuda::conv2d_direct3x3(ctx().cuda(), xd, wd, bd, y4, e, wm, 8, splits);
        expect_close(y4, want, c.dt,
                     "conv2d direct 3x3 " + std::to_string(32 * wm) + "x8 split-k " + std::to_string(splits));
      }
    }
  }
  // The Hopper wgmma implicit GEMM (3×3 s1 p1, C and O multiples of 64) where this GPU and build have it.
  const bool wgmma_shape = c.dt != DType::F32 && c.kh == 3 && c.kw == 3 && c.stride == 1 && c.pad == 1 &&
                           c.c % 64 == 0 && c.o % 64 == 0;
  // Elsewhere, and for a tiling it does not have, a typed error.
  const bool wgmma = cuda::conv2d_wgmma3x3_available(ctx().cuda());
  const auto expect_wgmma_error = [&](int wg, const char* what) {
    Tensor y8 = nan_output({c.n, c.o, oh, ow}, c.dt);
    try {
      cuda::conv2d_wgmma3x3(ctx().cuda(), xd, wd, bd, y8, e, wg);
      ADD_FAILURE() << "conv2d_wgmma3x3 accepted " << what;
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), wgmma ? ErrorCode::InvalidArgument : ErrorCode::Unsupported) << err.what();
    }
  };
  if (wgmma_shape && wgmma) {
    expect_wgmma_error(3, "3 warpgroups");
    if (c.o % 128 != 0) expect_wgmma_error(2, "2 warpgroups with O % 128 != 0");
    expect_wgmma_error(4, "4 warpgroups");
    using Feed = cuda::WgmmaFeed;
    for (Feed feed : {Feed::CpAsync, Feed::Tma, Feed::TmaSplitK, Feed::TmaRows, Feed::TmaRowsWide})
      for (int wg : {1, 2}) {
        if (wg == 2 && c.o % 128 != 0) continue;
        if (feed == Feed::TmaRowsWide && wg == 1) {  // 176-pixel tiles come with 2 warpgroups only
          Tensor y7 = nan_output({c.n, c.o, oh, ow}, c.dt);
          EXPECT_THROW(cuda::conv2d_wgmma3x3(ctx().cuda(), xd, wd, bd, y7, e, wg, feed), Error);
          continue;
        }
        Tensor y8 = nan_output({c.n, c.o, oh, ow}, c.dt);
        cuda::conv2d_wgmma3x3(ctx().cuda(), xd, wd, bd, y8, e, wg, feed);
        const char* how = feed == Feed::Tma           ? "tma "
                          : feed == Feed::TmaSplitK   ? "tma split-k "
                          : feed == Feed::TmaRows     ? "tma rows "
                          : feed == Feed::TmaRowsWide ? "tma rows 176 pixels "
                                                      : "";
        expect_close(y8, want, c.dt, std::string("conv2d wgmma 3x3 ") + how + std::to_string(64 * wg));
      }
  } else if (wgmma_shape) {
    expect_wgmma_error(1, "a GPU or build without sm_90a");
  }
  // Its stride-2 form (3×3 s2 p1: the TMA kernel on the phase copy): Tma and TmaSplitK, no other feed.
  const bool wgmma_s2_shape =
      c.dt != DType::F32 && c.kh == 3 && c.kw == 3 && c.stride == 2 && c.pad == 1 && c.c % 64 == 0 && c.o % 64 == 0;
  if (wgmma_s2_shape) {
    using Feed = cuda::WgmmaFeed;
    for (Feed feed : {Feed::Tma, Feed::TmaSplitK, Feed::CpAsync, Feed::TmaRows, Feed::TmaRowsWide})
      for (int wg : {1, 2}) {
        if (wg == 2 && c.o % 128 != 0) continue;
        const std::string what = std::string("conv2d wgmma 3x3 stride 2 ") +
                                 (feed == Feed::Tma         ? "tma "
                                  : feed == Feed::TmaSplitK ? "tma split-k "
                                                            : "other feed ") +
                                 std::to_string(64 * wg);
        Tensor y9 = nan_output({c.n, c.o, oh, ow}, c.dt);
        if (wgmma && (feed == Feed::Tma || feed == Feed::TmaSplitK)) {
          cuda::conv2d_wgmma3x3(ctx().cuda(), xd, wd, bd, y9, e, wg, feed, 2);
          expect_close(y9, want, c.dt, what);
          continue;
        }
        try {
          cuda::conv2d_wgmma3x3(ctx().cuda(), xd, wd, bd, y9, e, wg, feed, 2);
          ADD_FAILURE() << what << " was accepted";
        } catch (const Error& err) {
          EXPECT_EQ(err.code(), wgmma ? ErrorCode::InvalidArgument : ErrorCode::Unsupported) << err.what();
        }
      }
  }
  // The autotuned choice is cached per shape: a second call tunes nothing and gives the same result.
  const size_t tuned = cuda::conv2d_tuned_count(ctx().cuda());
  Tensor y5 = nan_output({c.n, c.o, oh, ow}, c.dt);
  ops::conv2d(ctx(), xd, wd, bd, y5, p, act);
  EXPECT_EQ(cuda::conv2d_tuned_count(ctx().cuda()), tuned);
  EXPECT_EQ(test::diff(to_host(y5), to_host(y)).max_abs, 0.0) << "the cached choice differs from the tuned one";
}

std::string conv_name(const ::testing::TestParamInfo<ConvCase>& i) {
  const ConvCase& c = i.param;
  return test::case_name(i.index, test::shape_tag({c.n, c.c, c.h, c.w, c.o, c.kh}) + "_s" +
                                      std::to_string(c.stride) + "p" + std::to_string(c.pad) +
                                      (c.bias ? "_b" : "") + (c.relu ? "_relu" : "") + "_" + nntest::tag(c.dt));
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> out;
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    out.push_back({1, 64, 37, 37, 64, 3, 3, 1, 1, true, true, dt});     // residual conv unit
    out.push_back({2, 32, 40, 30, 32, 3, 3, 1, 1, true, false, dt});    // batch 2, head conv
    out.push_back({1, 96, 19, 19, 64, 3, 3, 1, 1, false, false, dt});   // layer_rn (no bias)
    out.push_back({1, 48, 23, 17, 96, 1, 1, 1, 0, true, false, dt});    // projection 1×1
    out.push_back({2, 64, 19, 19, 64, 1, 1, 1, 0, true, true, dt});     // refinenet out_conv at 19², batch 2
    out.push_back({1, 64, 16, 16, 32, 1, 1, 1, 0, false, false, dt});   // 1×1 on 256 pixels (a multiple of 8)
    out.push_back({1, 32, 50, 50, 1, 1, 1, 1, 0, true, true, dt});      // final 1×1 to depth
    out.push_back({1, 40, 37, 37, 70, 3, 3, 2, 1, true, false, dt});    // resize layer 3×3 s2
    out.push_back({2, 3, 70, 56, 100, 14, 14, 14, 0, true, false, dt}); // patch embed 14×14 s14
    out.push_back({1, 5, 9, 11, 7, 5, 3, 2, 2, true, true, dt});        // odd everything
    // direct 3×3 kernel (bf16/f16): partial pixel tiles, partial channel tiles, 16-row and 8-row tiles
    out.push_back({3, 32, 130, 150, 32, 3, 3, 1, 1, true, true, dt});   // 32-channel, 16-row tiles
    out.push_back({2, 48, 33, 21, 80, 3, 3, 1, 1, true, false, dt});    // 3 chunks, O = 80 (partial 64 tile)
    out.push_back({4, 64, 90, 70, 64, 3, 3, 1, 1, false, true, dt});    // 64-channel, 8-row tiles, no bias
    out.push_back({8, 32, 100, 70, 64, 3, 3, 1, 1, true, false, dt});   // 64-channel, 8-row tiles, batch 8
    out.push_back({1, 16, 9, 5, 24, 3, 3, 1, 1, true, false, dt});      // tiny image, one chunk
    out.push_back({1, 5, 9, 11, 7, 5, 3, 1, 2, true, true, dt});        // 5×3 stride 1: row-shifted, KH = 5
    // stride-1 im2col: 100×45 (4500 pixels) takes the strided kernel, 101×45 (odd) the shared-memory one, in
    // several row runs, the last one partial ...
    out.push_back({1, 16, 100, 45, 24, 3, 3, 1, 1, true, false, dt});
    out.push_back({1, 16, 101, 45, 24, 3, 3, 1, 1, true, false, dt});
    // ... and a row too wide to stage, which takes the strided im2col kernel
    out.push_back({1, 2, 6, 12001, 3, 3, 3, 1, 1, true, false, dt});
  }
  // wgmma implicit GEMM (Hopper; cp.async and TMA-fed): 64 / 128 output channels per block, several K chunks,
  // partial pixel tiles (odd widths: the row pitch rounds up to 8), batch 2 (TMA: the second image's pixels follow
  // the first's in one tensor map), a strip 5 rows × 30 (TMA: the last tile's boxes run past the copy: zero fill),
  // one image whose shifted copies exceed 128 MiB (bf16: 3 × 256 × 302 × 304 × 2 bytes = 141 MB: row bands), and one
  // whose padded copy alone does (bf16: 256 × 522 × 522 × 2 bytes = 140 MB: the TMA kernel's bands)
  for (DType dt : {DType::BF16, DType::F16}) {
    out.push_back({1, 128, 37, 37, 128, 3, 3, 1, 1, true, true, dt});
    out.push_back({2, 64, 19, 23, 64, 3, 3, 1, 1, false, false, dt});
    out.push_back({1, 256, 40, 60, 256, 3, 3, 1, 1, true, false, dt});
    out.push_back({2, 128, 21, 27, 128, 3, 3, 1, 1, true, false, dt});
    out.push_back({1, 64, 5, 30, 128, 3, 3, 1, 1, true, true, dt});
    // an even width at batch 2: the padded copy's paired-column path (pad_row_nhwc_pairs), several runs per row
    out.push_back({2, 64, 9, 130, 128, 3, 3, 1, 1, true, false, dt});
  }
  // the stride-2 form (the reassemble stage-3 conv): odd and even sizes (the phases' last row and column partly
  // outside the image), batch 2, a map of several pixel tiles, 64 / 128 output channels, 1024 channels at 37²
  // (DA2-L's shape), one wider than high
  for (DType dt : {DType::BF16, DType::F16}) {
    out.push_back({1, 64, 37, 37, 64, 3, 3, 2, 1, true, false, dt});
    out.push_back({2, 128, 20, 26, 128, 3, 3, 2, 1, true, true, dt});
    out.push_back({1, 192, 61, 47, 128, 3, 3, 2, 1, false, false, dt});
    out.push_back({1, 1024, 37, 37, 1024, 3, 3, 2, 1, true, false, dt});
    out.push_back({3, 64, 7, 30, 192, 3, 3, 2, 1, true, true, dt});
  }
  out.push_back({1, 256, 300, 300, 128, 3, 3, 1, 1, true, true, DType::BF16});
  out.push_back({1, 256, 520, 520, 64, 3, 3, 1, 1, true, false, DType::BF16});
  // the row-shifted GEMMs' kx-tap matrix of one image over 128 MiB (bf16: 768 × 302 × 300 × 2 bytes = 139 MB): banded
  out.push_back({1, 256, 300, 300, 16, 3, 3, 1, 1, true, false, DType::BF16});
  // im2col of one image over 128 MiB (bf16: 1152 × 300² × 2 bytes = 207 MB): the GEMM path runs in row bands
  out.push_back({1, 128, 300, 300, 16, 3, 3, 1, 1, true, true, DType::BF16});
  out.push_back({2, 64, 260, 250, 8, 3, 3, 1, 1, true, false, DType::F32});  // f32: 576 × 65000 × 4 = 150 MB
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dCudaTest, ::testing::ValuesIn(conv_cases()), conv_name);

class Conv2dTuningTest : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }
  void TearDown() override { fault::configure(""); }
};

// Tuning a new shape on a fresh context: the im2col + GEMM candidate (tried first) needs a scratch buffer, and its
// allocation fails (injected device.alloc). That alternative is skipped, the others are timed, and the conv still
// returns the right result instead of an OutOfMemory error.
TEST_F(Conv2dTuningTest, AlternativeOutOfMemoryIsSkipped) {
  if (IsSkipped()) return;
  // A shape no other test tunes (the tuned table is per process).
  Tensor x = test::random_tensor({1, 48, 53, 47}, 61, 1.f, "x");
  Tensor w = test::random_tensor({32, 48, 3, 3}, 62, 0.3f, "w");
  Tensor b = test::random_tensor({32}, 63, 0.5f, "bias");
  Tensor xd = to_device(x, DType::BF16), wd = to_device(w, DType::BF16), bd = to_device(b, DType::F32);
  Tensor y = nan_output({1, 32, 53, 47}, DType::BF16);
  const cuda::ConvGeometry geom{1, 1, 1, 1};
  ASSERT_FALSE(cuda::conv2d_shape_tuned(ctx().cuda(), xd, wd, bd, y, geom, cuda::Epilogue::Relu));
  fault::configure("device.alloc");
  ops::conv2d(ctx(), xd, wd, bd, y, ops::Conv2dParams{1, 1, 1, 1}, ops::Activation::Relu);
  fault::configure("");
  // (Counting entries would not do: the row-shifted alternative tunes its own first GEMM's shape too.)
  EXPECT_TRUE(cuda::conv2d_shape_tuned(ctx().cuda(), xd, wd, bd, y, geom, cuda::Epilogue::Relu))
      << "the shape was not tuned";
  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({1, 32, 53, 47});
  ops::conv2d(cpu, x, w, b, want, ops::Conv2dParams{1, 1, 1, 1}, ops::Activation::Relu);
  expect_close(y, want, DType::BF16, "conv2d tuned past an out-of-memory alternative");
}

struct DeconvCase {
  int64_t n, c, h, w, o, k;
  int stride;
  bool bias;
  DType dt;
};

class ConvTranspose2dCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<DeconvCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(ConvTranspose2dCudaTest, MatchesCpu) {
  if (IsSkipped()) return;
  const DeconvCase& c = GetParam();
  const int64_t oh = (c.h - 1) * c.stride + c.k, ow = (c.w - 1) * c.stride + c.k;
  Tensor x = test::random_tensor({c.n, c.c, c.h, c.w}, 4, 1.f, "x");
  Tensor w = test::random_tensor({c.c, c.o, c.k, c.k}, 5, 0.3f, "w");
  Tensor b = c.bias ? test::random_tensor({c.o}, 6, 0.5f, "bias") : Tensor();
  Tensor xd = to_device(x, c.dt), wd = to_device(w, c.dt);
  Tensor bd = c.bias ? to_device(b, DType::F32) : Tensor();
  Tensor y = nan_output({c.n, c.o, oh, ow}, c.dt);
  ops::conv_transpose2d(ctx(), xd, wd, bd, y, c.stride);

  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({c.n, c.o, oh, ow});
  ops::conv_transpose2d(cpu, x, w, b, want, c.stride);
  expect_close(y, want, c.dt, "conv_transpose2d");
}

// The tokens form ([N, H·W, C] channels-last; the DPT reassemble's projected tokens) against the CPU op on planes.
// Odd H·W (37², 19 × 23) is the case it exists for: cuBLASLt's GEMM with Z's rows padded to 8 pixels.
TEST_P(ConvTranspose2dCudaTest, TokensMatchCpu) {
  if (IsSkipped()) return;
  const DeconvCase& c = GetParam();
  const int64_t oh = (c.h - 1) * c.stride + c.k, ow = (c.w - 1) * c.stride + c.k;
  ops::Context cpu(Device::cpu());
  Tensor x = test::random_tensor({c.n, c.c, c.h, c.w}, 4, 1.f, "x");
  Tensor tokens = test::output_tensor({c.n, c.h, c.w, c.c});
  ops::permute(cpu, x, {0, 2, 3, 1}, tokens);
  Tensor w = test::random_tensor({c.c, c.o, c.k, c.k}, 5, 0.3f, "w");
  Tensor b = c.bias ? test::random_tensor({c.o}, 6, 0.5f, "bias") : Tensor();
  Tensor rows = tokens.reshape({c.n, c.h * c.w, c.c});
  Tensor td = to_device(rows, c.dt), wd = to_device(w, c.dt);
  Tensor bd = c.bias ? to_device(b, DType::F32) : Tensor();
  Tensor y = nan_output({c.n, c.o, oh, ow}, c.dt);
  ops::conv_transpose2d_tokens(ctx(), td, c.h, c.w, wd, bd, y, c.stride);
  // A weight without owned storage: its rows share the scratch with the GEMM's result.
  const Tensor w_view = Tensor::view(wd.raw(), wd.shape(), wd.dtype(), wd.device(), nullptr, "w (borrowed)");
  Tensor y2 = nan_output({c.n, c.o, oh, ow}, c.dt);
  ops::conv_transpose2d_tokens(ctx(), td, c.h, c.w, w_view, bd, y2, c.stride);

  Tensor want = test::output_tensor({c.n, c.o, oh, ow});
  ops::conv_transpose2d(cpu, x, w, b, want, c.stride);
  expect_close(y, want, c.dt, "conv_transpose2d_tokens");
  expect_close(y2, want, c.dt, "conv_transpose2d_tokens, borrowed weight");
}

std::string deconv_name(const ::testing::TestParamInfo<DeconvCase>& i) {
  const DeconvCase& c = i.param;
  return test::case_name(i.index, test::shape_tag({c.n, c.c, c.h, c.w, c.o, c.k}) + "_s" +
                                      std::to_string(c.stride) + (c.bias ? "_b" : "") + "_" + nntest::tag(c.dt));
}

std::vector<DeconvCase> deconv_cases() {
  std::vector<DeconvCase> out;
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    out.push_back({1, 48, 37, 37, 48, 4, 4, true, dt});   // DPT resize layer 0
    out.push_back({2, 96, 19, 23, 96, 2, 2, true, dt});   // DPT resize layer 1, batch 2
    out.push_back({1, 16, 6, 10, 8, 4, 4, false, dt});    // scatter runs of 8 (bf16/f16) / 4 (f32) outputs
    out.push_back({1, 8, 5, 7, 6, 3, 3, true, dt});       // odd output width: one output per thread
    out.push_back({1, 8, 5, 7, 6, 3, 2, false, dt});      // overlapping windows (stride < K)
    out.push_back({1, 4, 6, 5, 3, 2, 3, true, dt});       // gaps (stride > K)
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTranspose2dCudaTest, ::testing::ValuesIn(deconv_cases()), deconv_name);

}  // namespace
}  // namespace dacpp

namespace dacpp {
namespace {

// ops::residual_conv_pair on CUDA: against the CPU's ops written out, and bit for bit against the CUDA ops one at a
// time (ReLU, conv, conv), which the chained path must reproduce: relu(x) is exact, and each conv's accumulators are
// rounded once, by the same kernel, whether stored to a map or to the next conv's padded copy. A second call with h
// filled with NaN shows which path ran: the chained one never writes h. DA2-L's 148² × 256 unit in bf16 is expected
// to chain (the tuner picks the TMA kernel there); the others take whatever their tuning gives, f32 never chains.
struct PairCase {
  int64_t n, f, h, w;
  bool bias;
  DType dt;
  bool expect_chained;
  bool cpu = true;  // also against the CPU (off for the large chunked case: the CUDA ops one at a time only)
};

class ResidualConvPairCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<PairCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(ResidualConvPairCudaTest, MatchesCpuAndTheOpsOneAtATime) {
  if (IsSkipped()) return;
  const PairCase& k = GetParam();
  const Shape shape{k.n, k.f, k.h, k.w};
  const float ws = 1.f / std::sqrt(9.f * static_cast<float>(k.f));
  Tensor x = test::random_tensor(shape, 1, 1.f, "x");
  Tensor w1 = test::random_tensor({k.f, k.f, 3, 3}, 2, ws, "w1");
  Tensor w2 = test::random_tensor({k.f, k.f, 3, 3}, 3, ws, "w2");
  Tensor b1 = k.bias ? test::random_tensor({k.f}, 4, 0.5f, "b1") : Tensor();
  Tensor b2 = k.bias ? test::random_tensor({k.f}, 5, 0.5f, "b2") : Tensor();
  Tensor xd = to_device(x, k.dt), w1d = to_device(w1, k.dt), w2d = to_device(w2, k.dt);
  Tensor b1d = k.bias ? to_device(b1, DType::F32) : Tensor(), b2d = k.bias ? to_device(b2, DType::F32) : Tensor();

  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor(shape, "want"), want_h = test::output_tensor(shape, "want_h");
  if (k.cpu) ops::residual_conv_pair(cpu, x, w1, b1, w2, b2, want_h, want);

  // The CUDA ops one at a time (these calls tune both convs' shapes first).
  const ops::Conv2dParams pad1{1, 1, 1, 1};
  Tensor r = nan_output(shape, k.dt, "relu"), hs = nan_output(shape, k.dt, "h1"), ys = nan_output(shape, k.dt, "y1");
  ops::unary(ctx(), ops::Unary::Relu, xd, r);
  ops::conv2d(ctx(), r, w1d, b1d, hs, pad1, ops::Activation::Relu);
  ops::conv2d(ctx(), hs, w2d, b2d, ys, pad1);
  const Tensor ys_host = to_host(ys);
  // With the residual x (a residual unit's form): the add after the second conv, one at a time.
  Tensor ysr = nan_output(shape, k.dt, "y1 + x");
  ops::add(ctx(), ys, xd, ysr);
  const Tensor ysr_host = to_host(ysr);
  Tensor want_r = test::output_tensor(shape, "want + x");
  if (k.cpu)
    for (int64_t i = 0; i < want.numel(); ++i) want_r.data<float>()[i] = want.data<float>()[i] + x.data<float>()[i];

  bool chained = true;
  for (int call = 0; call < 2; ++call) {
    Tensor h = nan_output(shape, k.dt, "h"), y = nan_output(shape, k.dt);
    ops::residual_conv_pair(ctx(), xd, w1d, b1d, w2d, b2d, h, y);
    const std::string what = str_cat("call ", call);
    if (k.cpu) expect_close(y, want, k.dt, what + " vs the CPU");
    EXPECT_EQ(test::diff(to_host(y), ys_host).max_abs, 0.0) << what << " vs the CUDA ops one at a time";
    const Tensor hh = to_host(h);
    for (int64_t i = 0; i < hh.numel(); ++i) chained = chained && std::isnan(hh.data<float>()[i]);
    // The residual added by the op.
    Tensor hr = nan_output(shape, k.dt, "h"), yr = nan_output(shape, k.dt);
    ops::residual_conv_pair(ctx(), xd, w1d, b1d, w2d, b2d, hr, yr, xd);
    if (k.cpu) expect_close(yr, want_r, k.dt, what + " with the residual vs the CPU");
    EXPECT_EQ(test::diff(to_host(yr), ysr_host).max_abs, 0.0)
        << what << " with the residual vs the CUDA ops one at a time";
  }
  std::printf("residual_conv_pair %s: %s\n", shape_str(shape).c_str(), chained ? "chained" : "one at a time");
  if (k.dt == DType::F32) {
    EXPECT_FALSE(chained) << "f32 has no TMA kernel to chain";
  }
  if (k.expect_chained) {
    EXPECT_TRUE(chained) << "the TMA kernel was expected to chain this unit";
  }
}

std::string pair_name(const ::testing::TestParamInfo<PairCase>& i) {
  const PairCase& k = i.param;
  return test::case_name(i.index,
                         test::shape_tag({k.n, k.f, k.h, k.w}) + (k.bias ? "_b" : "") + "_" + nntest::tag(k.dt));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ResidualConvPairCudaTest,
                         ::testing::Values(PairCase{1, 256, 148, 148, true, DType::BF16, true},  // DA2-L rn1
                                           PairCase{1, 256, 74, 74, true, DType::F16, false},
                                           PairCase{1, 256, 37, 37, true, DType::BF16, false},
                                           PairCase{2, 64, 48, 40, false, DType::BF16, false},
                                           PairCase{1, 128, 19, 19, true, DType::BF16, false},
                                           PairCase{1, 64, 20, 24, true, DType::F32, false},
                                           // three images whose two padded copies exceed the conv's 128 MiB: one
                                           // at a time
                                           PairCase{3, 64, 512, 512, true, DType::BF16, false, false}),
                         pair_name);

}  // namespace
}  // namespace dacpp
