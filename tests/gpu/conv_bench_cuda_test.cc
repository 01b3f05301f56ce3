// Timing of conv2d (bf16) on the DPT head / fusion shapes of DA2-S at 518²: the dispatching cuda::conv2d against
// the implicit-GEMM cuda::conv2d_generic (median over 7 batches of 20 back-to-back launches, host clock around a
// stream synchronize, per launch), and the two outputs compared. Prints one line per shape; fails only when the
// two kernels disagree.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/conv2d_variants.cuh"
#include "gpu/nn_cuda_test_util.h"

namespace dacpp {
namespace {

struct BenchShape {
  int64_t n, c, hw, o, k;
  bool relu;
  const char* what;
};

class Conv2dCudaBench : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }

  // Median over 7 batches of 20 launches (after 3 warm-up launches) of the mean time per launch, microseconds.
  double median_us(const std::function<void()>& fn) {
    for (int i = 0; i < 3; ++i) fn();
    cuda::synchronize(ctx().cuda(), "bench warm-up");
    std::vector<double> us;
    for (int r = 0; r < 7; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20; ++i) fn();
      cuda::synchronize(ctx().cuda(), "bench");
      const auto t1 = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 20);
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }

  // About half a second of heavy launches, so the timed launches run at the clock the GPU holds under load.
  void warm_up_clocks() {
    Tensor x = test::random_tensor({8, 64, 256, 256}, 21, 1.f, "x");
    Tensor w = test::random_tensor({64, 64, 3, 3}, 22, 0.1f, "w");
    Tensor xd = to_device(x, DType::BF16), wd = to_device(w, DType::BF16);
    Tensor y = cuda::empty(ctx().cuda(), {8, 64, 256, 256}, DType::BF16, "y");
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500)) {
      for (int i = 0; i < 10; ++i) cuda::conv2d_generic(ctx().cuda(), xd, wd, Tensor(), y, {1, 1, 1, 1}, {});
      cuda::synchronize(ctx().cuda(), "bench clock warm-up");
    }
  }
};

TEST_F(Conv2dCudaBench, HeadShapesBf16) {
  if (IsSkipped()) return;
  const std::vector<BenchShape> shapes = {
      {1, 64, 148, 64, 3, false, "head conv1-like 64->64 @148"}, {1, 64, 296, 32, 3, false, "head conv1 64->32 @296"},
      {1, 32, 518, 32, 3, true, "head out2a 32->32 @518 relu"},  {1, 32, 518, 1, 1, true, "head out2b 32->1 1x1"},
      {1, 64, 37, 64, 3, true, "rcu 64 @37"},                    {1, 64, 74, 64, 3, true, "rcu 64 @74"},
      {1, 64, 148, 64, 3, true, "rcu 64 @148"},                  {1, 64, 296, 64, 3, true, "rcu 64 @296"},
      {1, 384, 37, 64, 3, false, "layer_rn 384->64 @37"},        {16, 64, 148, 64, 3, true, "rcu 64 @148 b16"},
      {16, 32, 518, 32, 3, true, "out2a @518 b16"},
      // DA2-L (features 256, out_channels 256/512/1024/1024) at 518²: the fusion RCUs, layer_rn, the head.
      {1, 256, 148, 256, 3, true, "L rcu 256 @148"},             {1, 256, 74, 256, 3, true, "L rcu 256 @74"},
      {1, 256, 37, 256, 3, true, "L rcu 256 @37"},               {1, 256, 19, 256, 3, true, "L rcu 256 @19"},
      {1, 512, 74, 256, 3, false, "L layer2_rn 512->256 @74"},
      {1, 1024, 37, 256, 3, false, "L layer3_rn 1024->256 @37"},
      {1, 256, 296, 128, 3, false, "L head conv1 256->128 @296"},
      {1, 128, 518, 32, 3, true, "L head conv2 128->32 @518"},
      {16, 256, 148, 256, 3, true, "L rcu 256 @148 b16"},
  };
  cuda::CudaContext& cc = ctx().cuda();
  warm_up_clocks();
  for (const BenchShape& s : shapes) {
    const int pad = s.k / 2;
    Tensor x = test::random_tensor({s.n, s.c, s.hw, s.hw}, 11, 1.f, "x");
    Tensor w = test::random_tensor({s.o, s.c, s.k, s.k}, 12, 0.1f, "w");
    Tensor b = test::random_tensor({s.o}, 13, 0.5f, "bias");
    Tensor xd = to_device(x, DType::BF16), wd = to_device(w, DType::BF16), bd = to_device(b, DType::F32);
    Tensor y_new = cuda::empty(cc, {s.n, s.o, s.hw, s.hw}, DType::BF16, "y_new");
    Tensor y_old = cuda::empty(cc, {s.n, s.o, s.hw, s.hw}, DType::BF16, "y_old");
    const cuda::ConvGeometry g{1, 1, pad, pad};
    const cuda::Epilogue act = s.relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
    const double t_new = median_us([&] { cuda::conv2d(cc, xd, wd, bd, y_new, g, act); });
    const double t_old = median_us([&] { cuda::conv2d_generic(cc, xd, wd, bd, y_old, g, act); });
    const double gflop = 2.0 * s.n * s.o * s.c * s.k * s.k * s.hw * s.hw * 1e-9;
    std::printf("[conv bench] %-30s generic %8.1f us  dispatch %8.1f us  (%.2fx, %.0f TFLOP/s)\n", s.what, t_old,
                t_new, t_old / t_new, gflop / t_new * 1e3);
    const Tensor ref = to_host(y_old);
    expect_close(y_new, ref, DType::BF16, s.what);
    const double t_gemm = median_us([&] { cuda::conv2d_im2col_gemm(cc, xd, wd, bd, y_new, g, act); });
    std::printf("[conv bench]   im2col+gemm %.1f us (%.0f TFLOP/s)\n", t_gemm, gflop / t_gemm * 1e3);
    expect_close(y_new, ref, DType::BF16, std::string(s.what) + " im2col+gemm");
    if (s.k != 3) continue;
    std::printf("[conv bench]   variants (32*wm x th):");
    for (int wm : {1, 2})
      for (int th : {8, 16}) {
        const double t = median_us([&] { cuda::conv2d_direct3x3(cc, xd, wd, bd, y_new, act, wm, th); });
        std::printf("  %dx%d %.1f us", 32 * wm, th, t);
        expect_close(y_new, ref, DType::BF16, std::string(s.what) + " variant " + std::to_string(wm) + "x" +
                                                  std::to_string(th));
      }
    if (cuda::conv2d_wgmma3x3_available(cc) && s.c % 64 == 0 && s.o % 64 == 0) {
      using Feed = cuda::WgmmaFeed;
      for (Feed feed : {Feed::CpAsync, Feed::Tma, Feed::TmaSplitK, Feed::TmaRows})
        for (int wg : {1, 2}) {
          if (wg == 2 && s.o % 128 != 0) continue;
          const double t = median_us([&] { cuda::conv2d_wgmma3x3(cc, xd, wd, bd, y_new, act, wg, feed); });
          const char* how = feed == Feed::Tma         ? " tma "
                            : feed == Feed::TmaSplitK ? " tma split-k "
                            : feed == Feed::TmaRows   ? " tma rows "
                                                      : " ";
          std::printf("  wgmma%s%d %.1f us (%.0f TFLOP/s)", how, 64 * wg, t, gflop / t * 1e3);
          expect_close(y_new, ref, DType::BF16, std::string(s.what) + " wgmma" + how + std::to_string(64 * wg));
        }
    }
    std::printf("\n");
  }
}

// One launch of the direct kernel on the head's out2a shape (a target for `ncu -k regex:conv3x3`).
TEST_F(Conv2dCudaBench, Out2aOnce) {
  if (IsSkipped()) return;
  Tensor x = test::random_tensor({1, 32, 518, 518}, 31, 1.f, "x");
  Tensor w = test::random_tensor({32, 32, 3, 3}, 32, 0.1f, "w");
  Tensor xd = to_device(x, DType::BF16), wd = to_device(w, DType::BF16);
  Tensor y = cuda::empty(ctx().cuda(), {1, 32, 518, 518}, DType::BF16, "y");
  cuda::conv2d(ctx().cuda(), xd, wd, Tensor(), y, {1, 1, 1, 1}, cuda::Epilogue::Relu);
  const Tensor got = to_host(y);
  EXPECT_GT(test::diff(got, Tensor::zeros(got.shape(), DType::F32)).max_abs, 0.0);
}

}  // namespace
}  // namespace dacpp
