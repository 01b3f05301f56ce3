// Parity of the whole network against the official PyTorch code on the tiny fixtures (tests/fixtures/models,
// see its README): checkpoints imported from the official formats, per-stage dumps compared at relative L2.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/model.h"
#include "engine/postprocess.h"
#include "pipeline/sky_fill.h"
#include "engine/runner.h"
#include "io/image.h"
#include "models/model_test_util.h"
#include "ops/resize.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

using testing::load_npy;
using testing::rel_l2;

constexpr double kTol = 1e-5;
const std::string kDir = std::string(DACPP_FIXTURES_DIR) + "/models/";

struct Case {
  const char* dir;
  const char* checkpoint;  // file inside dir, or "" for the folder itself
  bool da3;
};

std::string checkpoint_path(const Case& c) {
  return kDir + c.dir + (c.checkpoint[0] ? std::string("/") + c.checkpoint : std::string());
}

class ModelParity : public ::testing::TestWithParam<Case> {};

void expect_close(const std::string& what, const Tensor& got, const std::string& ref_path) {
  testing::expect_close_to_npy(what, got, ref_path, kTol);
}

// Every stage's dump and the outputs against the official code's, the transformer blocks run in `row_chunks` row
// chunks (RunnerOptions::row_chunks; on the CPU one after another, through the same views and row-range attention).
void expect_stages_match(const Case& c, int row_chunks) {
  std::shared_ptr<const Model> model = Model::load(checkpoint_path(c));
  RunnerOptions options = ::dacpp::testing::runner_options(2);
  options.row_chunks = row_chunks;
  Runner runner(model, options);
  Tensor input = load_npy(kDir + c.dir + "/input.npy");
  ASSERT_TRUE(input.defined());
  const Shape s = input.shape();
  if (s.size() == 5) input = input.reshape({s[0] * s[1], s[2], s[3], s[4]});  // DA3: [1, S, 3, H, W]
  ForwardResult r = runner.forward(input, /*dump_stages=*/true);
  for (int k = 0; k < 4; ++k) {
    const std::string f = "feat" + std::to_string(k), rn = "rn" + std::to_string(k + 1);
    expect_close(f, r.dumps.tensors[f], kDir + c.dir + "/" + f + ".npy");
    expect_close(rn, r.dumps.tensors[rn], kDir + c.dir + "/" + rn + ".npy");
  }
  expect_close("depth", r.depth, kDir + c.dir + "/depth.npy");
  if (c.da3) {
    expect_close("sky", r.sky, kDir + c.dir + "/sky.npy");
    Tensor depth = r.depth.reshape({r.depth.dim(1), r.depth.dim(2)}).clone();
    EXPECT_TRUE(pipeline::fill_sky_depth(depth, r.sky.reshape(depth.shape())));
    expect_close("depth_final", depth, kDir + c.dir + "/depth_final.npy");
  } else {
    EXPECT_FALSE(r.sky.defined());
  }
}

TEST_P(ModelParity, StagesMatchOfficialCode) {
  const Case c = GetParam();
  if (!std::filesystem::exists(kDir + c.dir)) GTEST_SKIP() << "fixture " << c.dir << " absent";
  expect_stages_match(c, 1);
}

// The fixtures' 131 (DA2) / 166 (DA3) tokens in 2-4 chunks (Dinov2::row_cuts; BackboneRows checks which apply).
TEST_P(ModelParity, StagesMatchOfficialCodeInRowChunks) {
  const Case c = GetParam();
  if (!std::filesystem::exists(kDir + c.dir)) GTEST_SKIP() << "fixture " << c.dir << " absent";
  for (int chunks = 2; chunks <= 4; ++chunks) {
    SCOPED_TRACE(std::to_string(chunks) + " row chunks");
    expect_stages_match(c, chunks);
  }
}

TEST_P(ModelParity, RunMatchesOfficialEndToEnd) {
  // The image through the engine's preprocessing, forward and postprocessing, at the fixtures' resolution
  // (DA2 input_size 140; DA3 process_res 210, upper_bound_resize).
  const Case c = GetParam();
  if (!std::filesystem::exists(kDir + c.dir)) GTEST_SKIP() << "fixture " << c.dir << " absent";
  std::shared_ptr<const Model> model = Model::load(checkpoint_path(c));
  Runner runner(model, ::dacpp::testing::runner_options(2));
  io::ImageLimits lim;
  lim.apply_exif_orientation = false;
  io::Image img = io::load_image(kDir + "input.png", lim);
  RunOptions o;
  o.size = c.da3 ? 210 : 140;
  DepthResult res = runner.run(img, o);
  EXPECT_EQ(res.processed_height, c.da3 ? 154 : 140);
  EXPECT_EQ(res.processed_width, c.da3 ? 210 : 182);
  if (!c.da3) {
    EXPECT_EQ(res.units, model->config().metric ? "metres" : "relative-disparity");
    ASSERT_EQ(res.depth.shape(), (Shape{73, 97}));
    expect_close("depth_full", res.depth, kDir + c.dir + "/depth_full.npy");
    return;
  }
  EXPECT_EQ(res.units, model->config().metric ? "focal-normalised" : "relative-depth");
  ASSERT_EQ(res.depth.shape(), (Shape{154, 210}));
  expect_close("depth_final", res.depth, kDir + c.dir + "/depth_final.npy");
  expect_close("sky", res.sky, kDir + c.dir + "/sky.npy");
  o.resize_to_input = true;
  DepthResult back = runner.run(img, o);
  EXPECT_EQ(back.depth.shape(), (Shape{73, 97}));
  if (model->config().metric) {
    o.resize_to_input = false;
    o.focal_px = 100.f;  // input pixels; processed focal = 100 · (154/73 + 210/97) / 2
    DepthResult m = runner.run(img, o);
    EXPECT_EQ(m.units, "metres");
    const double f = 100.0 * 0.5 * (210.0 / 97.0 + 154.0 / 73.0);
    EXPECT_NEAR(m.depth.data<float>()[0], res.depth.data<float>()[0] * f / 300.0, 1e-4 * f);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelParity,
                         ::testing::Values(Case{"da2_tiny_rel", "da2_tiny_rel.pth", false},
                                           Case{"da2_tiny_metric", "da2_tiny_metric_hypersim.pth", false},
                                           Case{"da3mono_tiny", "", true}, Case{"da3metric_tiny", "", true}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.dir); });

TEST(ModelLoad, Da3MetricIsDetectedAndAnyViewLoads) {
  if (!std::filesystem::exists(kDir + "da3metric_tiny")) GTEST_SKIP();
  EXPECT_TRUE(Model::load(kDir + "da3metric_tiny")->config().metric);
  EXPECT_FALSE(Model::load(kDir + "da3mono_tiny")->config().metric);
  if (!std::filesystem::exists(kDir + "da3small_tiny")) return;
  EXPECT_EQ(Model::load(kDir + "da3small_tiny")->config().kind, models::ModelKind::Da3AnyView);
}

}  // namespace
}  // namespace dacpp
