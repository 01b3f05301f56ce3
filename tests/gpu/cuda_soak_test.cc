// Issue "CUDA backend" item 5: nothing grows across 1000 forwards of mixed sizes on a GPU. Every per-shape cache a
// CUDA Runner owns is bounded (CUDA graphs, cuBLASLt plans, pos-embed / RoPE / UV tables), the activation arena and
// the op scratch only grow to the largest geometry, and converted biases are per weight: after a warm-up round
// over all sizes, the runner's live device bytes and the GPU's used memory stay flat.
// Run from the repository root (DA2: tests/fixtures/tiny-da2.gguf; DA3 any-view: the da3small_tiny fixture), with
// no other process on the GPU: the used memory is the device's (cudaMemGetInfo), so a co-tenant's growth fails it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/runner.h"
#include "gpu/gpu_model_util.h"

namespace dacpp {
namespace {



struct Round {
  size_t live = 0, gpu_used = 0;
};

// 50 rounds over 20 sizes (more than the graph cache's capacity, so graphs are evicted and re-captured).
void soak(const std::string& path, int64_t patch) {
  LoadOptions lo;
  lo.device = Device::cuda(0);
  lo.precision = DType::BF16;
  auto model = Model::load(path, lo);
  Runner runner(model, RunnerOptions{});
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int i = 0; i < 20; ++i) sizes.push_back({patch * (2 + i % 5), patch * (2 + (i * 3) % 7)});
  std::vector<Round> rounds;
  for (int r = 0; r < 50; ++r) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const Tensor x = gputest::random_input(sizes[i].first, sizes[i].second, static_cast<unsigned>(i));
      const ForwardResult out = runner.forward(x);
      ASSERT_TRUE(out.depth.defined());
    }
    const Runner::DeviceMemory m = runner.device_memory();
    rounds.push_back(Round{m.live_bytes, m.gpu_used_bytes});
  }
  const Round& warm = rounds[1];  // after one round every geometry has been seen (eager) and captured
  const Round& last = rounds.back();
  std::printf("  %s: live %.2f -> %.2f MiB, GPU used %.1f -> %.1f MiB over %zu forwards\n", path.c_str(),
              warm.live / 1048576.0, last.live / 1048576.0, warm.gpu_used / 1048576.0, last.gpu_used / 1048576.0,
              rounds.size() * sizes.size());
  EXPECT_LE(last.live, warm.live + (size_t{1} << 20)) << "the runner's device memory grows";
  EXPECT_LE(last.gpu_used, warm.gpu_used + (size_t{64} << 20)) << "the GPU's used memory grows";
}

TEST(CudaSoak, MixedSizesKeepDeviceMemoryFlatDa2) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  soak("tests/fixtures/tiny-da2.gguf", 14);
}

TEST(CudaSoak, MixedSizesKeepDeviceMemoryFlatDa3AnyView) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  soak("tests/fixtures/models/da3small_tiny", 14);
}

}  // namespace
}  // namespace dacpp
