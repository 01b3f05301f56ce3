// bf16 against f32 on the CPU at full size: DA2-S / B / L metric (SyntheticDims::full_size: the published widths,
// weights drawn like the official initialisation) at 518², one forward timed per run on all hardware threads, and the
// bf16 model's error against the f32 one at every stage. A benchmark, not a check: disabled, run on demand with
//   dacpp_tests --gtest_also_run_disabled_tests --gtest_filter='Bf16CpuBench.*'
// DACPP_BENCH_VARIANTS (default "sbl") picks the variants, DACPP_BENCH_RUNS (default 3) the timed runs per precision;
// DACPP_BENCH_GGUF_DIR=dir also writes each model there as synthetic-da2-<v>.gguf (for `dacpp bench`, profilers).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "formats/import.h"
#include "models/model_test_util.h"
#include "util/random_input.h"

namespace dacpp {
namespace {

using testing::rel_l2;

// The median over `runs` timed forwards (after one warm-up: plans, arenas, first touch), then one forward with its
// stage dumps into *last.
double median_forward_ms(Runner& runner, const Tensor& input, int runs, ForwardResult* last) {
  runner.forward(input);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    runner.forward(input);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  *last = runner.forward(input, /*dump_stages=*/true);
  return ms[ms.size() / 2];
}

TEST(Bf16CpuBench, DISABLED_Da2FullSize) {
  const cpu::Bf16Support& s = cpu::bf16_support();
  if (!s.refusal.empty()) GTEST_SKIP() << s.refusal;
  const char* v = std::getenv("DACPP_BENCH_VARIANTS");
  const char* r = std::getenv("DACPP_BENCH_RUNS");
  const std::string variants = v != nullptr ? v : "sbl";
  const int runs = r != nullptr ? std::max(1, std::atoi(r)) : 3;
  std::printf("CPU %s (bf16 %s), %d threads, 518x518, median of %d\n", s.isa.c_str(), s.native ? "native" : "emulated",
              ThreadPool::hardware_threads(), runs);
  const Tensor input = testing::random_input(518, 518, 11);
  for (char variant : variants) {
    // Metric (sigmoid · max_depth): the relative model's ReLU leaves a random network's depth mostly 0; the work is
    // the same.
    testing::SyntheticModel synth(testing::SyntheticDims::full_size(variant), /*da3_mono=*/false);
    synth.set_f32("head.max_depth", 20.f);
    const std::shared_ptr<const ModelFile> file = synth.build();
    if (const char* dir = std::getenv("DACPP_BENCH_GGUF_DIR"))
      write_gguf(*file, std::string(dir) + "/synthetic-da2-" + variant + ".gguf");
    LoadOptions lo;
    ForwardResult f32, bf16;
    double ms32 = 0, ms16 = 0;
    {
      Runner runner(Model::from_file(file, lo), RunnerOptions{});
      ms32 = median_forward_ms(runner, input, runs, &f32);
    }
    lo.precision = DType::BF16;
    {
      Runner runner(Model::from_file(file, lo), RunnerOptions{});
      ms16 = median_forward_ms(runner, input, runs, &bf16);
    }
    std::printf("DA2-%c  f32 %.1f ms  bf16 %.1f ms  (%.2fx)\n", static_cast<char>(std::toupper(variant)), ms32, ms16,
                ms32 / ms16);
    std::printf("  bf16 vs f32 rel L2:");
    for (int k = 0; k < 4; ++k) {
      const std::string f = "feat" + std::to_string(k), rn = "rn" + std::to_string(k + 1);
      std::printf(" %s %.2e, %s %.2e;", f.c_str(), rel_l2(bf16.dumps.tensors[f], f32.dumps.tensors[f]), rn.c_str(),
                  rel_l2(bf16.dumps.tensors[rn], f32.dumps.tensors[rn]));
    }
    std::printf(" depth %.2e\n", rel_l2(bf16.depth, f32.depth));
    EXPECT_LE(rel_l2(bf16.depth, f32.depth), 1e-2) << "DA2-" << variant;
  }
}

}  // namespace
}  // namespace dacpp
