// A GPU runner's forward input and outputs above 256 KiB travel through the context's page-locked staging buffer
// (engine/device_io.cc): a 518² forward of the tiny DA2 model on CUDA in f32 must give the CPU runner's depth, and
// a result handed to the caller must not change when the runner (and its staging buffer) runs again.
// Run from the repository root (the fixtures are tests/fixtures/...).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "engine/model.h"
#include "engine/runner.h"
#include "gpu/gpu_model_util.h"

namespace dacpp {
namespace {

double relative_l2(const Tensor& got, const Tensor& want) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double d = double(got.data<float>()[i]) - want.data<float>()[i];
    num += d * d;
    den += double(want.data<float>()[i]) * want.data<float>()[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

TEST(CudaDeviceIo, StagedInputAndOutputMatchCpu) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const char* path = "tests/fixtures/tiny-da2.gguf";
  LoadOptions gpu_lo;
  gpu_lo.device = Device::cuda(0);
  gpu_lo.precision = DType::F32;
  Runner gpu(Model::load(path, gpu_lo));
  Runner cpu(Model::load(path, LoadOptions{}));
  const Tensor x = gputest::random_input(518, 518, 5);  // 3.2 MB in, 1 MB of depth out: both staged
  const Tensor y = gputest::random_input(518, 518, 6);
  const ForwardResult want_x = cpu.forward(x), want_y = cpu.forward(y);
  const ForwardResult got_x = gpu.forward(x);
  const std::vector<float> first(got_x.depth.data<float>(), got_x.depth.data<float>() + got_x.depth.numel());
  const ForwardResult got_y = gpu.forward(y);
  ASSERT_EQ(got_x.depth.shape(), want_x.depth.shape());
  EXPECT_LT(relative_l2(got_x.depth, want_x.depth), 1e-4);
  EXPECT_LT(relative_l2(got_y.depth, want_y.depth), 1e-4);
  // The first result is the caller's: the second forward reused the staging buffer, not that tensor.
  EXPECT_EQ(std::vector<float>(got_x.depth.data<float>(), got_x.depth.data<float>() + got_x.depth.numel()), first);
  EXPECT_NE(got_x.depth.raw(), got_y.depth.raw());
}

// A bf16 runner does not wait for the input's upload (the device cast and the forward follow it on the stream): the
// graphed runner (upload, replay, readback on one stream) must equal an eager runner bit for bit, and stay near the
// CPU (5e-2: a tiny random model in bf16; a mis-staged input — wrong bits or a copy not yet landed — is off by O(1)).
TEST(CudaDeviceIo, UnwaitedBf16InputGraphedEqualsEagerAndCpu) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const char* path = "tests/fixtures/tiny-da2.gguf";
  LoadOptions lo;
  lo.device = Device::cuda(0);
  lo.precision = DType::BF16;
  const auto model = Model::load(path, lo);
  RunnerOptions eager_options;
  eager_options.cuda_graphs = false;
  Runner graphed(model), eager(model, eager_options);
  Runner cpu(Model::load(path, LoadOptions{}));
  const Tensor x = gputest::random_input(518, 518, 7);
  const ForwardResult want = cpu.forward(x);
  const ForwardResult ref = eager.forward(x);
  EXPECT_LT(relative_l2(ref.depth, want.depth), 5e-2);
  for (int i = 0; i < 3; ++i) {
    const ForwardResult got = graphed.forward(x);
    ASSERT_EQ(got.depth.shape(), ref.depth.shape());
    EXPECT_EQ(std::vector<float>(got.depth.data<float>(), got.depth.data<float>() + got.depth.numel()),
              std::vector<float>(ref.depth.data<float>(), ref.depth.data<float>() + ref.depth.numel()))
        << "run " << i;
  }
  EXPECT_EQ(graphed.captured_graphs(), 1u);
}

TEST(CudaDeviceIo, GraphReplayTimeIsReportedForACapturedForward) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  LoadOptions lo;
  lo.device = Device::cuda(0);
  const auto model = Model::load("tests/fixtures/tiny-da2.gguf", lo);
  Runner graphed(model);
  EXPECT_FALSE(graphed.graph_replay_ms(3).has_value()) << "no forward has run yet";
  const Tensor x = gputest::random_input(140, 182, 3);
  for (int i = 0; i < 3; ++i) graphed.forward(x);
  ASSERT_EQ(graphed.captured_graphs(), 1u);
  const std::optional<double> ms = graphed.graph_replay_ms(5);
  ASSERT_TRUE(ms.has_value());
  EXPECT_GT(*ms, 0.0);
  RunnerOptions eager_options;
  eager_options.cuda_graphs = false;
  Runner eager(model, eager_options);
  eager.forward(x);
  EXPECT_FALSE(eager.graph_replay_ms(3).has_value()) << "an eager runner has no graph to time";
}

}  // namespace
}  // namespace dacpp
