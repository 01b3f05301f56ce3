// DA3NESTED (models/da3_nested_model.h) against the official NestedDepthAnything3Net on the tiny fixture
// tests/fixtures/models/da3nested_tiny (any-view branch = da3small_tiny, metric branch = da3metric_tiny, f16 weights,
// three views at 210×154; made by scripts/parity/make_fixtures.py --only da3nested_tiny): depth in metres, conf
// (sky = 1), metric-scaled extrinsics, intrinsics. Loaded from the official checkpoint folder (both branches in one
// index) and from depth-anything.cpp's two-file GGUF layout; the documented errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/model.h"
#include "engine/model_nested.h"
#include "engine/runner.h"
#include "formats/import.h"
#include "io/image.h"
#include "models/model_test_util.h"
#include "util/scratch.h"

namespace dacpp {
namespace {

using testing::load_npy;
using testing::rel_l2;

constexpr double kTol = 1e-5;
const std::string kFx = std::string(DACPP_FIXTURES_DIR) + "/models/";
const std::string kDir = kFx + "da3nested_tiny";

Tensor views_input() {
  Tensor x = load_npy(kDir + "/input.npy");  // [1, S, 3, H, W]
  const Shape s = x.shape();
  return x.reshape({s[0] * s[1], s[2], s[3], s[4]});
}

void expect_close(const std::string& what, const Tensor& got, const std::string& ref_name) {
  testing::expect_close_to_npy("nested " + what, got, kDir + "/" + ref_name + ".npy", kTol);
}

void expect_matches_official(const Model& model) {
  Runner runner(std::shared_ptr<const Model>(&model, [](const Model*) {}), RunnerOptions{2, 8, 512, {}});
  ForwardResult r = runner.forward(views_input());
  expect_close("depth", r.depth, "depth");
  expect_close("depth_conf", r.conf, "depth_conf");
  expect_close("extrinsics", r.extrinsics, "extrinsics");
  expect_close("intrinsics", r.intrinsics, "intrinsics");
}

// Two GGUF files as depth-anything.cpp's converter writes them (dacpp convert [--nested-metric]), in a scratch
// folder removed with this object.
struct TwoFiles {
  std::string dir = ::dacpp::testing::scratch_path("nested", "two_files");
  std::string any = dir + "/anyview.gguf", metric = dir + "/metric.gguf";
  TwoFiles() {
    std::filesystem::create_directories(dir);
    ImportOptions o;
    o.nested_part = ImportOptions::NestedPart::AnyView;
    write_gguf(*import_checkpoint(kDir, o), any);
    o.nested_part = ImportOptions::NestedPart::Metric;
    write_gguf(*import_checkpoint(kDir, o), metric);
  }
  ~TwoFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TwoFiles(const TwoFiles&) = delete;
  TwoFiles& operator=(const TwoFiles&) = delete;
};

template <typename F>
void expect_error(F f, ErrorCode code, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error (expected '" << needle << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

class NestedParity : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kDir)) GTEST_SKIP() << "fixture da3nested_tiny absent";
  }
};

TEST_F(NestedParity, CheckpointFolderMatchesOfficialNestedNet) {
  std::shared_ptr<const Model> model = Model::load(kDir);
  EXPECT_EQ(model->config().kind, models::ModelKind::Da3Nested);
  const models::ModelCapabilities caps = model->config().capabilities();
  EXPECT_TRUE(caps.metric && caps.pose && caps.conf && caps.multiview);
  EXPECT_FALSE(caps.sky);
  expect_matches_official(*model);
}

TEST_F(NestedParity, ViewsFromImagesAreInMetres) {
  std::shared_ptr<const Model> model = Model::load(kDir);
  Runner runner(model, RunnerOptions{2, 8, 512, {}});
  std::vector<io::Image> images;
  for (int k = 0; k < 3; ++k)
    images.push_back(io::load_image(kFx + "da3small_tiny/view3/view" + std::to_string(k) + ".png"));
  RunOptions o;
  o.size = 210;
  const std::vector<DepthResult> res = runner.run_views(images, o);
  ASSERT_EQ(res.size(), 3u);
  const Tensor ref = load_npy(kDir + "/depth.npy");
  const Tensor ref_ext = load_npy(kDir + "/extrinsics.npy");
  for (int64_t v = 0; v < 3; ++v) {
    EXPECT_EQ(res[v].units, "metres");
    EXPECT_LE(rel_l2(res[v].depth, ref.slice0(v, v + 1)), kTol) << "view " << v;
    for (int i = 0; i < 12; ++i)
      EXPECT_NEAR(res[v].extrinsics[i], ref_ext.data<float>()[v * 12 + i], 1e-5) << "view " << v << " [" << i << "]";
  }
}

TEST_F(NestedParity, TwoGgufFilesMatchOfficialNestedNet) {
  const TwoFiles files;
  const std::string &any = files.any, &metric = files.metric;
  std::shared_ptr<const Model> model = load_nested_model(any, metric);
  EXPECT_EQ(model->config().kind, models::ModelKind::Da3Nested);
  expect_matches_official(*model);
  LoadOptions lo;
  lo.metric_model = metric;
  EXPECT_EQ(load_model(any, lo)->config().kind, models::ModelKind::Da3Nested);
  EXPECT_EQ(load_model(any)->config().kind, models::ModelKind::Da3AnyView);  // the any-view file alone
}

TEST_F(NestedParity, Errors) {
  const TwoFiles files;
  const std::string &any = files.any, &metric = files.metric;
  expect_error([&] { Model::load(metric); }, ErrorCode::Unsupported, "--metric-model");
  expect_error([&] { load_nested_model(metric, any); }, ErrorCode::InvalidModel, "metric-branch file");
  expect_error([&] { load_nested_model(any, kFx + "da3metric_tiny"); }, ErrorCode::InvalidModel,
               "not the metric branch");
  expect_error([&] { load_nested_model(any, any); }, ErrorCode::InvalidModel, "not the metric branch");
  expect_error([&] { load_nested_model(any, kDir + "/nope.gguf"); }, ErrorCode::NotFound, "nope.gguf");
}

}  // namespace
}  // namespace dacpp
