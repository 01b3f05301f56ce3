// Load-time validation with synthetic in-memory models: config keys, tensor presence and shapes, and a forward
// that runs on what loaded.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/model.h"
#include "engine/runner.h"
#include "formats/tensor_names.h"
#include "io/image.h"
#include "models/model_config.h"
#include "models/model_test_util.h"
#include "util/random_input.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

using testing::SyntheticModel;

// Runs `fn`, expects an Error with `code` whose message contains every string of `parts`.
template <typename Fn>
void expect_error(Fn fn, ErrorCode code, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

Tensor random_input(int64_t h, int64_t w) {
  return testing::random_input(h, w, 3);
}

TEST(ModelConfig, ParsesSyntheticDa2) {
  SyntheticModel sm;
  const models::ModelConfig c = models::ModelConfig::from_file(*sm.build());
  EXPECT_EQ(c.kind, models::ModelKind::Da2);
  EXPECT_EQ(c.vit.embed_dim, SyntheticModel::kEmbed);
  EXPECT_EQ(c.vit.ffn_hidden, 4 * SyntheticModel::kEmbed);
  EXPECT_FLOAT_EQ(c.vit.final_norm_eps, 1e-6f);
  EXPECT_EQ(c.img.resize_mode, models::ResizeMode::LowerBound);
  EXPECT_EQ(c.img.resize_target, 518);
  EXPECT_FALSE(c.metric);
}

TEST(ModelConfig, Da3MonoUsesFinalNormEps1e5) {
  SyntheticModel sm(/*da3_mono=*/true);
  const models::ModelConfig c = models::ModelConfig::from_file(*sm.build());
  EXPECT_EQ(c.kind, models::ModelKind::Da3Mono);
  EXPECT_FLOAT_EQ(c.vit.final_norm_eps, 1e-5f);
  EXPECT_TRUE(c.head.has_sky);
  EXPECT_EQ(c.img.resize_target, 504);
}

TEST(ModelConfig, MissingKeyIsNamed) {
  SyntheticModel sm;
  sm.remove_key("vit.depth");
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel,
               {"depthanything3.vit.depth", "missing", "synthetic.gguf"});
}

TEST(ModelConfig, OutLayersNeedFourEntries) {
  SyntheticModel sm;
  sm.set_i32_array("vit.out_layers", {0, 1, 2});
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel,
               {"depthanything3.vit.out_layers", "[0,1,2]", "4 entries"});
}

TEST(ModelConfig, OutLayerBeyondDepthIsRejected) {
  SyntheticModel sm;
  sm.set_i32_array("vit.out_layers", {0, 1, 2, 4});
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel,
               {"depthanything3.vit.out_layers", "[0,1,2,4]", "vit.depth"});
}

TEST(ModelConfig, HeadDimMustDivideEmbed) {
  SyntheticModel sm;
  sm.set_u32("vit.num_heads", 3);
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel, {"depthanything3.vit.head_dim"});
}

TEST(ModelConfig, ZeroFeaturesRejected) {
  SyntheticModel sm;
  sm.set_u32("head.features", 0);
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel, {"depthanything3.head.features", "0"});
}

TEST(ModelConfig, UnknownArchRejected) {
  SyntheticModel sm;
  sm.set_string("arch", "depthanything9");
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel, {"depthanything3.arch", "depthanything9"});
}

TEST(ModelLoad, MissingTensorIsNamedAtLoad) {
  SyntheticModel sm;
  const std::string name = names::head_rn("head", 2, false, "rc1") + ".c1.weight";
  ASSERT_TRUE(sm.has_tensor(name));
  sm.remove_tensor(name);
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel, {name, "missing"});
}

TEST(ModelLoad, MissingBlockTensorIsNamedAtLoad) {
  SyntheticModel sm;
  const std::string name = names::vit_block("vit", 3, "mlp_fc2.bias");
  sm.remove_tensor(name);
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel, {name});
}

TEST(ModelLoad, MisshapenTensorNamesBothShapes) {
  SyntheticModel sm;
  const std::string name = "head.scratch.out1.weight";
  sm.reshape_tensor(name, {4, 8, 1, 1});
  expect_error([&] { Model::from_file(sm.build()); }, ErrorCode::InvalidModel, {name, "[4,8,1,1]", "[4,8,3,3]"});
}

TEST(ModelLoad, SyntheticDa2RunsAndShapesFollowInput) {
  SyntheticModel sm;
  auto model = Model::from_file(sm.build());
  Runner runner(model, ::dacpp::testing::runner_options(2, 2));
  for (auto [h, w] : {std::pair<int64_t, int64_t>{28, 42}, {56, 56}, {42, 28}}) {
    ForwardResult r = runner.forward(random_input(h, w));
    ASSERT_EQ(r.depth.shape(), (Shape{1, h, w}));
    const float* d = r.depth.data<float>();
    for (int64_t i = 0; i < r.depth.numel(); ++i) ASSERT_TRUE(std::isfinite(d[i]) && d[i] >= 0) << i;
  }
  EXPECT_EQ(runner.pos_cache_size(), 2u);  // 56×56 is the stored 4×4 grid: no entry
  ForwardResult again = runner.forward(random_input(28, 42));
  ForwardResult fresh = Runner(model, ::dacpp::testing::runner_options(2)).forward(random_input(28, 42));
  EXPECT_LE(testing::rel_l2(again.depth, fresh.depth), 1e-6);
}

TEST(ModelLoad, BadInputShapeIsInvalidArgument) {
  SyntheticModel sm;
  Runner runner(Model::from_file(sm.build()), ::dacpp::testing::runner_options(2));
  expect_error([&] { runner.forward(random_input(30, 42)); }, ErrorCode::InvalidArgument, {"[1,3,30,42]", "14"});
}

TEST(ModelLoad, SyntheticDa3MonoGivesSky) {
  SyntheticModel sm(/*da3_mono=*/true);
  Runner runner(Model::from_file(sm.build()), ::dacpp::testing::runner_options(2));
  ForwardResult r = runner.forward(random_input(28, 28));
  ASSERT_TRUE(r.sky.defined());
  EXPECT_EQ(r.sky.shape(), (Shape{1, 28, 28}));
  const float* d = r.depth.data<float>();
  for (int64_t i = 0; i < r.depth.numel(); ++i) ASSERT_GT(d[i], 0.f);  // exp
}

TEST(RunOptions, FocalOnlyForDa3MetricAndSizeBounded) {
  SyntheticModel sm;
  Runner runner(Model::from_file(sm.build()), ::dacpp::testing::runner_options(2));
  io::Image img(20, 30);
  RunOptions o;
  o.focal_px = 500.f;
  expect_error([&] { runner.run(img, o); }, ErrorCode::InvalidArgument, {"focal_px", "DA2"});
  o.focal_px = 0.f;
  o.size = 5;
  expect_error([&] { runner.run(img, o); }, ErrorCode::InvalidArgument, {"size 5"});
}

}  // namespace
}  // namespace dacpp
