// Two CPU changes timed against what they replaced, in one process, the two arms alternated call by call (so a
// shared machine's drift hits both alike): medians of 10 pairs after 2 warm-up pairs, on all hardware threads.
// Benchmarks, not checks: disabled, run on demand with
//   dacpp_tests --gtest_also_run_disabled_tests --gtest_filter='CpuBench.*'
// - OutputStage: ops::upsample_conv_head (bands upsampled channels-last, nhwc conv, the 1×1 conv as a dot) against
//   the planar bands it replaced (resize_bilinear_rows, conv2d 3×3 + ReLU, conv2d 1×1, per band of 63 rows with a
//   halo row each side), at DA2-S (32 channels) or, with DACPP_BENCH_HEAD_CHANNELS=128, DA2-L's shape: o1 at 296²
//   to 518². f32 and bf16 weights. DACPP_BENCH_HEAD_DUAL=1: DualDPT's form at DA3's 504 × 336 (two outputs, the
//   separable UV add against adding the band's table), 32 / 64 / 128 channels for DA3-SMALL / BASE / LARGE.
// - PackedLinear: DA2-L's fc1 (1370 × 1024 → 4096) in bf16 over 24 weights in turn (as 24 layers read them: from
//   memory, not cache), packed at load against the plain weight.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "formats/half.h"
#include "ops/conv2d.h"
#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/op_test_util.h"
#include "ops/resize_rows.h"
#include "ops/upsample_conv_head.h"

namespace dacpp {
namespace {

using Clock = std::chrono::steady_clock;

// Median milliseconds of a and b, called alternately.
void alternate(const char* what, const std::function<void()>& a, const char* a_name, const std::function<void()>& b,
               const char* b_name) {
  std::vector<double> ta, tb;
  for (int i = 0; i < 12; ++i) {
    for (int arm = 0; arm < 2; ++arm) {
      const auto t0 = Clock::now();
      (arm == 0 ? a : b)();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (i >= 2) (arm == 0 ? ta : tb).push_back(ms);
    }
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  std::printf("%s: %s median %.2f ms (min %.2f) | %s median %.2f ms (min %.2f) | ratio %.2f\n", what, a_name,
              ta[ta.size() / 2], ta.front(), b_name, tb[tb.size() / 2], tb.front(),
              tb[tb.size() / 2] / ta[ta.size() / 2]);
}

TEST(CpuBench, DISABLED_OutputStage) {
  const char* env = std::getenv("DACPP_BENCH_HEAD_CHANNELS");
  const bool dual = std::getenv("DACPP_BENCH_HEAD_DUAL") != nullptr;
  const int64_t c = env ? std::atoi(env) : 32, m = 32, outs = dual ? 2 : 1;
  // DA2 at 518²: o1 296² → 518². DualDPT (DA3) at 504 × 336: o1 288 × 192 → 504 × 336, two outputs, the UV add.
  const int64_t h = dual ? 192 : 296, w = dual ? 288 : 296, oh = dual ? 336 : 518, ow = dual ? 504 : 518;
  ASSERT_GT(c, 0);
  const Tensor x = test::random_tensor({1, c, h, w}, 1, 1.f, "o1");
  const Tensor w3f = test::random_tensor({m, c, 3, 3}, 2, 0.1f, "w3"), w1f = test::random_tensor({outs, m, 1, 1}, 3);
  const Tensor b3 = test::random_tensor({m}, 4), b1 = test::random_tensor({outs}, 5);
  // A separable add (DualDPT's UV embedding: half the channels along a row, half down a column) and the same as the
  // full map the old path added per band.
  ops::UpsampledAdd add{Tensor::zeros({c, ow}, DType::F32, "cols"), Tensor::zeros({c, oh}, DType::F32, "rows")};
  Tensor full = Tensor::empty({1, c, oh, ow}, DType::F32, "uv");
  if (dual) {
    const Tensor rc = test::random_tensor({c, ow}, 6, 0.1f), rr = test::random_tensor({c, oh}, 7, 0.1f);
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          const float v = k < c / 2 ? rc.data<float>()[k * ow + j] : rr.data<float>()[k * oh + i];
          (k < c / 2 ? add.cols.data<float>()[k * ow + j] : add.rows.data<float>()[k * oh + i]) = v;
          full.data<float>()[(k * oh + i) * ow + j] = v;
        }
  }
  for (const bool bf16 : {false, true}) {
    if (bf16 && !cpu::bf16_support().refusal.empty()) continue;
    const Tensor w3 = bf16 ? test::to_bf16(w3f) : w3f, w1 = bf16 ? test::to_bf16(w1f) : w1f;
    ops::Context ctx;
    Tensor y = test::output_tensor({1, outs, oh, ow}), yb = test::output_tensor({1, outs, oh, ow});
    // The old paths' band: 4 MiB of upsampled rows (DptHead: 64 channels' worth, 63 rows at 518 wide; DualDptHead:
    // the map's own channels).
    const int64_t rows = dual ? (int64_t{4} << 20) / (c * ow * 4) : 63;
    // The band buffers allocated once, as the model's arena had them.
    const Tensor up_buf = Tensor::empty({c * (rows + 2) * ow}, DType::F32, "up");
    const Tensor hid_buf = Tensor::empty({m * (rows + 2) * ow}, DType::F32, "hid");
    const Tensor logits_buf = Tensor::empty({outs * (rows + 2) * ow}, DType::F32, "logits");
    // The old DualDPT path added each band's [c, rows, ow] table from the runner's cache: made here beforehand.
    std::vector<Tensor> band_pe;
    for (int64_t r0 = 0; dual && r0 < oh; r0 += rows) {
      const int64_t a = std::max<int64_t>(r0 - 1, 0), e = std::min(std::min(oh, r0 + rows) + 1, oh);
      Tensor pe = Tensor::empty({1, c, e - a, ow}, DType::F32, "pe");
      for (int64_t k = 0; k < c; ++k)
        std::copy(full.data<float>() + (k * oh + a) * ow, full.data<float>() + (k * oh + e) * ow,
                  pe.data<float>() + k * (e - a) * ow);
      band_pe.push_back(pe);
    }
    const auto planar = [&] {
      for (int64_t r0 = 0; r0 < oh; r0 += rows) {
        const int64_t r1 = std::min(oh, r0 + rows), a = std::max<int64_t>(r0 - 1, 0), e = std::min(r1 + 1, oh);
        Tensor up = up_buf.offset_view(0, {1, c, e - a, ow});
        ops::resize_bilinear_rows(ctx, x, up, a, oh, /*align_corners=*/true);
        if (dual) ops::add(ctx, up, band_pe[static_cast<size_t>(r0 / rows)], up);
        Tensor hid = hid_buf.offset_view(0, {1, m, e - a, ow});
        ops::conv2d(ctx, up, w3, b3, hid, ops::Conv2dParams{1, 1, 1, 1}, ops::Activation::Relu);
        Tensor logits = logits_buf.offset_view(0, {1, outs, e - a, ow});
        ops::conv2d(ctx, hid, w1, b1, logits);
        for (int64_t o = 0; o < outs; ++o)
          std::copy(logits.data<float>() + (o * (e - a) + r0 - a) * ow,
                    logits.data<float>() + (o * (e - a) + r1 - a) * ow, yb.data<float>() + (o * oh + r0) * ow);
      }
    };
    alternate(
        bf16 ? "output stage bf16" : "output stage f32 ",
        [&] { ops::upsample_conv_head(ctx, x, w3, b3, w1, b1, y, ops::HeadFinal::None, dual ? &add : nullptr); },
        "upsample_conv_head", planar, "planar bands");
    EXPECT_LE(test::diff(y, yb).rel_l2, bf16 ? 1e-2 : 1e-5);
  }
}

TEST(CpuBench, DISABLED_PackedLinear) {
  if (!cpu::bf16_support().refusal.empty()) GTEST_SKIP() << cpu::bf16_support().refusal;
  const int64_t mrows = 1370, k = 1024, n = 4096, layers = 24;
  std::vector<Tensor> plain;
  std::vector<ops::LinearWeight> packed;
  for (int64_t l = 0; l < layers; ++l) {
    plain.push_back(test::to_bf16(test::random_tensor({n, k}, 10 + static_cast<unsigned>(l), 0.03f, "fc1")));
    packed.push_back(*ops::pack_linear_weight(plain.back(), DType::BF16));
  }
  const Tensor x = test::random_tensor({1, mrows, k}, 2, 1.f, "x");
  const Tensor b = test::random_tensor({n}, 3);
  ops::Context ctx;
  Tensor y = test::output_tensor({1, mrows, n});
  const double gflop = 2.0 * mrows * k * n * layers * 1e-9;
  alternate(
      "fc1 bf16 x24",
      [&] {
        for (const auto& w : packed) ops::linear(ctx, x, w, b, y, ops::Activation::Gelu);
      },
      "packed",
      [&] {
        for (const auto& w : plain) ops::linear(ctx, x, w, b, y, ops::Activation::Gelu);
      },
      "plain");
  std::printf("(%.1f GFLOP a pass)\n", gflop);
}

}  // namespace
}  // namespace dacpp
