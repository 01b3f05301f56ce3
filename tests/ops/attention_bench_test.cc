// One transformer layer's attention on the CPU, the fused kernel against oneDNN's path, both precisions, at a DA2
// shape: heads × 1370 tokens × d 64 from a fused qkv projection (cpu::attention_qkv, as a forward calls it), median of
// 10 calls after 2 warm-ups, on all hardware threads. A benchmark, not a check: disabled, run on demand with
//   dacpp_tests --gtest_also_run_disabled_tests --gtest_filter='AttentionBench.*'
// DACPP_BENCH_HEADS (default 6: DA2-S; 12 B, 16 L) picks the head count.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/attention_fused_cpu.h"
#include "backends/cpu/cpu_ops.h"
#include "ops/context.h"
#include "ops/op_test_util.h"

namespace dacpp {
namespace {

TEST(AttentionBench, DISABLED_Da2Layer) {
  const char* env = std::getenv("DACPP_BENCH_HEADS");
  const int64_t h = env ? std::atoi(env) : 6, n = 1370, d = 64;
  ASSERT_GT(h, 0);
  const Tensor qkv = test::random_tensor({1, n, 3 * h * d}, 1, 1.f, "qkv");
  const double gflop = 4.0 * h * n * n * d * 1e-9;
  for (const bool bf16 : {false, true}) {
    if (bf16 && !cpu::bf16_support().refusal.empty()) continue;
    for (const bool fused : {true, false}) {
      if (fused && !cpu::fused_attention_fits(d, bf16)) continue;
      ops::Context ctx;
      ctx.cpu().set_bf16_products(bf16);
      ctx.cpu().set_fused_attention(fused);
      Tensor out = test::output_tensor({1, n, h, d});
      std::vector<double> ms;
      for (int i = 0; i < 12; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        cpu::attention_qkv(ctx.cpu(), qkv, h, 0.125f, 0, out);
        if (i >= 2)
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      std::printf("attention h%ld n%ld d%ld %s %s: median %.2f ms (min %.2f) = %.0f GFLOP/s\n", static_cast<long>(h),
                  static_cast<long>(n), static_cast<long>(d), bf16 ? "bf16" : "f32 ", fused ? "fused " : "oneDNN", med,
                  ms.front(), gflop / med * 1e3);
    }
  }
}

}  // namespace
}  // namespace dacpp
