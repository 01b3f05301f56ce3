// Runner::run / run_views on CUDA, from a decoded photo to depth at the photo's own size: the path of `dacpp depth
// --device cuda`, the server and the C API. Postprocessing resizes the outputs once they are on the host; a GPU
// runner must do that on a CPU context (its own context's ops refuse host tensors: every DA2 photo whose size
// differed from the processed size failed with "resize_bilinear: tensor x 'depth' ... is on cpu but the op runs on
// cuda:0" until session 40). The depth equals the CPU runner's to f32 rounding. Run from the repository root.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/runner.h"
#include "gpu/gpu_model_util.h"
#include "io/image.h"

namespace dacpp {
namespace {

double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    num += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    den += static_cast<double>(y[i]) * y[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

struct Case {
  const char* model;
  bool views;  // DA3 any-view: run_views over two views
};

class RunnerImageCuda : public ::testing::TestWithParam<Case> {};

TEST_P(RunnerImageCuda, DepthAtThePhotosSizeEqualsTheCpuRunners) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const Case c = GetParam();
  LoadOptions on_gpu;
  on_gpu.device = Device::cuda(0);
  on_gpu.precision = DType::F32;
  Runner gpu(Model::load(c.model, on_gpu), RunnerOptions{});
  Runner cpu(Model::load(c.model), RunnerOptions{});
  io::Image photo = io::load_image("tests/fixtures/models/input.png");  // 97×73: not the processed size
  RunOptions o;
  o.resize_to_input = true;  // DA3's outputs back at the photo's size; DA2's always are
  std::vector<DepthResult> got, want;
  for (int round = 0; round < 2; ++round) {  // the second request through the same runner (a captured graph)
    SCOPED_TRACE(round);
    if (c.views) {
      got = gpu.run_views({photo, photo}, o);
      want = cpu.run_views({photo, photo}, o);
    } else {
      got = {gpu.run(photo, o)};
      want = {cpu.run(photo, o)};
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t v = 0; v < got.size(); ++v) {
      ASSERT_EQ(got[v].depth.shape(), (Shape{73, 97}));
      ASSERT_EQ(want[v].depth.shape(), (Shape{73, 97}));
      EXPECT_LE(rel_l2(got[v].depth, want[v].depth), 1e-4) << c.model << " view " << v;
      ASSERT_EQ(got[v].sky.defined(), want[v].sky.defined());
      if (got[v].sky.defined()) EXPECT_LE(rel_l2(got[v].sky, want[v].sky), 1e-4) << c.model << " sky";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RunnerImageCuda,
                         ::testing::Values(Case{"tests/fixtures/tiny-da2.gguf", false},
                                           Case{"tests/fixtures/models/da3mono_tiny", false},
                                           Case{"tests/fixtures/models/da3metric_tiny", false},
                                           Case{"tests/fixtures/models/da3small_tiny", true},
                                           Case{"tests/fixtures/models/da3nested_tiny", true}));

}  // namespace
}  // namespace dacpp
