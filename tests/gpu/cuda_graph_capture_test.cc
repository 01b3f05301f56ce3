// Every model class's batch-1 forward is captured as a CUDA graph (a host synchronisation inside the forward would
// make it run eagerly every time, which is what made DA3 host-bound in 0.4), and the replays give exactly the
// eager result. Any-view with >= 3 views picks its reference view on the host inside the forward and is expected to
// stay eager. (The nested model's metric alignment is host work too, but it runs after the forward: finish().)
// Run from the repository root (the fixtures are tests/fixtures/...).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>

#include "core/error.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "gpu/gpu_model_util.h"

namespace dacpp {
namespace {

struct CaptureCase {
  const char* path;
  int64_t views, h, w;
  bool capturable;
};

// Every output `want` has is in `got` too, equal bit for bit.
void expect_same_outputs(const ForwardResult& want, const ForwardResult& got, const std::string& what) {
  for (auto [w, g, name] : {std::tuple{&want.depth, &got.depth, "depth"},
                            {&want.sky, &got.sky, "sky"},
                            {&want.conf, &got.conf, "conf"},
                            {&want.rays, &got.rays, "rays"},
                            {&want.ray_conf, &got.ray_conf, "ray_conf"},
                            {&want.extrinsics, &got.extrinsics, "extrinsics"}}) {
    if (!w->defined()) continue;
    ASSERT_TRUE(g->defined()) << name << ", " << what;
    ASSERT_EQ(g->shape(), w->shape()) << name << ", " << what;
    EXPECT_EQ(std::memcmp(g->data<float>(), w->data<float>(), w->nbytes()), 0) << name << ", " << what;
  }
}

class CudaGraphCapture : public ::testing::TestWithParam<CaptureCase> {
 protected:
  static std::shared_ptr<const Model> load_bf16(const char* path) {
    LoadOptions lo;
    lo.device = Device::cuda(0);
    lo.precision = DType::BF16;
    return Model::load(path, lo);
  }
  static RunnerOptions eager_only() {
    RunnerOptions o;
    o.cuda_graphs = false;
    return o;
  }
};

TEST_P(CudaGraphCapture, ForwardIsCapturedAndReplaysMatchEager) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const CaptureCase& c = GetParam();
  auto model = load_bf16(c.path);
  Runner eager(model, eager_only()), graphed(model);
  const Tensor x = gputest::random_input(c.h, c.w, 11, c.views);
  const ForwardResult want = eager.forward(x);
  for (int i = 0; i < 4; ++i) {
    const ForwardResult got = graphed.forward(x);
    ASSERT_EQ(got.depth.shape(), want.depth.shape());
    EXPECT_EQ(std::memcmp(got.depth.data<float>(), want.depth.data<float>(), want.depth.nbytes()), 0)
        << "run " << i;
    if (want.extrinsics.defined()) {
      EXPECT_EQ(std::memcmp(got.extrinsics.data<float>(), want.extrinsics.data<float>(), want.extrinsics.nbytes()), 0)
          << "run " << i;
    }
  }
  EXPECT_EQ(graphed.captured_graphs(), c.capturable ? 1u : 0u)
      << (c.capturable ? "the forward was not captured (DACPP_LOG=info names the reason)"
                       : "a forward expected to stay eager was captured");
}

// Programmatic dependent launch (cuda_common.cuh: launch_kernel) lets a kernel's blocks start while the one before it
// finishes; each waits for its predecessor before touching memory. A kernel that read or wrote too early would show
// here as a difference from the same forward with it off (DACPP_PDL=0 when the context is made), eager and
// replayed, on every model class.
TEST_P(CudaGraphCapture, ProgrammaticLaunchGivesThePlainLaunchResult) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const CaptureCase& c = GetParam();
  auto model = load_bf16(c.path);
  ASSERT_EQ(setenv("DACPP_PDL", "0", 1), 0);
  Runner plain(model, eager_only());
  ASSERT_EQ(unsetenv("DACPP_PDL"), 0);
  Runner pdl_eager(model, eager_only()), pdl_graphed(model);
  const Tensor x = gputest::random_input(c.h, c.w, 12, c.views);
  const ForwardResult want = plain.forward(x);
  for (Runner* r : {&pdl_eager, &pdl_graphed}) {
    for (int i = 0; i < 3; ++i) {
      const ForwardResult got = r->forward(x);
      ASSERT_EQ(got.depth.shape(), want.depth.shape());
      EXPECT_EQ(std::memcmp(got.depth.data<float>(), want.depth.data<float>(), want.depth.nbytes()), 0)
          << (r == &pdl_eager ? "eager" : "graphed") << " run " << i;
      if (want.conf.defined()) {
        ASSERT_TRUE(got.conf.defined());
        EXPECT_EQ(std::memcmp(got.conf.data<float>(), want.conf.data<float>(), want.conf.nbytes()), 0)
            << (r == &pdl_eager ? "eager" : "graphed") << " run " << i;
      }
      if (want.extrinsics.defined()) {
        ASSERT_TRUE(got.extrinsics.defined());
        EXPECT_EQ(std::memcmp(got.extrinsics.data<float>(), want.extrinsics.data<float>(), want.extrinsics.nbytes()),
                  0)
            << (r == &pdl_eager ? "eager" : "graphed") << " run " << i;
      }
    }
  }
}

// Lanes (ops::Lanes: the DPT head's reassemble stages 0-2 and their refinenets' lateral units on streams of their
// own in a captured graph) give the result of the same forward on one stream (DACPP_LANES=0).
TEST_P(CudaGraphCapture, LanesGiveTheOneStreamResult) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const CaptureCase& c = GetParam();
  auto model = load_bf16(c.path);
  ASSERT_EQ(setenv("DACPP_LANES", "0", 1), 0);
  Runner one_stream(model);
  ASSERT_EQ(unsetenv("DACPP_LANES"), 0);
  Runner lanes(model);
  const Tensor x = gputest::random_input(c.h, c.w, 13, c.views);
  for (int i = 0; i < 3; ++i) {  // eager, captured, replayed
    expect_same_outputs(one_stream.forward(x), lanes.forward(x), str_cat("run ", i));
  }
  EXPECT_EQ(lanes.captured_graphs(), c.capturable ? 1u : 0u);
}

// The transformer blocks in row chunks (RunnerOptions::row_chunks), the chunks on lanes of their own in a captured
// graph, give the same chunked forward on one stream bit for bit, and the whole rows' result up to the chunks' own
// GEMM choices (bf16 rounding). Models whose blocks rotate q / k (RoPE) run whole rows either way.
TEST_P(CudaGraphCapture, RowChunksOnLanesGiveTheOneStreamResult) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const CaptureCase& c = GetParam();
  auto model = load_bf16(c.path);
  const Tensor x = gputest::random_input(c.h, c.w, 15, c.views);
  const ForwardResult whole = Runner(model).forward(x);
  const auto rel_l2 = [](const Tensor& a, const Tensor& b) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < b.numel(); ++i) {
      const double d = double{a.data<float>()[i]} - b.data<float>()[i];
      num += d * d;
      den += double{b.data<float>()[i]} * b.data<float>()[i];
    }
    return std::sqrt(num / std::max(den, 1e-30));
  };
  for (int chunks = 2; chunks <= 4; ++chunks) {
    RunnerOptions o;
    o.row_chunks = chunks;
    ASSERT_EQ(setenv("DACPP_LANES", "0", 1), 0);
    Runner one_stream(model, o);
    ASSERT_EQ(unsetenv("DACPP_LANES"), 0);
    Runner lanes(model, o);
    for (int i = 0; i < 3; ++i) {  // eager, captured, replayed
      const ForwardResult want = one_stream.forward(x);
      expect_same_outputs(want, lanes.forward(x), str_cat(chunks, " chunks, run ", i));
      ASSERT_EQ(want.depth.shape(), whole.depth.shape());
      EXPECT_LT(rel_l2(want.depth, whole.depth), 1e-2) << chunks << " chunks";
    }
    EXPECT_EQ(lanes.captured_graphs(), c.capturable ? 1u : 0u);
  }
}

// The same with DA3's ray branch (RunOptions::want_rays: a second fusion chain over the maps the lanes made): depth,
// confidence, rays and ray confidence equal bit for bit to the one-stream forward, 1 and 2 views.
TEST(CudaLanes, RayBranchGivesTheOneStreamResult) {
  if (!gputest::have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  LoadOptions lo;
  lo.device = Device::cuda(0);
  lo.precision = DType::BF16;
  lo.import.with_aux = true;
  auto model = Model::load("tests/fixtures/models/da3small_tiny", lo);
  ASSERT_TRUE(model->config().capabilities().rays);
  ASSERT_EQ(setenv("DACPP_LANES", "0", 1), 0);
  Runner one_stream(model);
  ASSERT_EQ(unsetenv("DACPP_LANES"), 0);
  Runner lanes(model);
  RunOptions o;
  o.want_rays = true;
  for (int64_t views : {1, 2}) {
    const Tensor x = gputest::random_input(98, 140, 14, views);
    for (int i = 0; i < 3; ++i) {  // eager, captured, replayed
      const ForwardResult want = one_stream.forward(x, false, o);
      ASSERT_TRUE(want.rays.defined() && want.ray_conf.defined());
      expect_same_outputs(want, lanes.forward(x, false, o), str_cat(views, " views, run ", i));
    }
  }
  EXPECT_EQ(lanes.captured_graphs(), 2u);
}

std::string capture_name(const ::testing::TestParamInfo<CaptureCase>& i) {
  std::string p = i.param.path;
  p = p.substr(p.find_last_of('/') + 1);
  for (char& ch : p)
    if (ch == '.' || ch == '-') ch = '_';
  return p + "_" + std::to_string(i.param.views) + "v";
}

INSTANTIATE_TEST_SUITE_P(
    Models, CudaGraphCapture,
    ::testing::Values(CaptureCase{"tests/fixtures/tiny-da2.gguf", 1, 140, 182, true},
                      CaptureCase{"tests/fixtures/models/da3mono_tiny", 1, 98, 140, true},
                      CaptureCase{"tests/fixtures/models/da3metric_tiny", 1, 98, 140, true},
                      CaptureCase{"tests/fixtures/models/da3small_tiny", 1, 98, 140, true},
                      CaptureCase{"tests/fixtures/models/da3small_tiny", 2, 98, 140, true},
                      CaptureCase{"tests/fixtures/models/da3small_tiny", 3, 98, 140, false},
                      // both branches captured; the metric alignment runs on the host after (finish)
                      CaptureCase{"tests/fixtures/models/da3nested_tiny", 2, 98, 140, true},
                      CaptureCase{"tests/fixtures/models/da3giant_tiny", 1, 98, 140, true}),
    capture_name);

}  // namespace
}  // namespace dacpp
