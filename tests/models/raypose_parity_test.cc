// `--ray-pose` (RunOptions::ray_pose): the DA3 any-view model's poses from its ray map, against the official code's
// use_ray_pose=True output on the tiny fixture (tests/fixtures/models/da3small_tiny/raypose, made by
// scripts/parity/make_raypose_fixture.py with the official RANSAC sample table saved as sample_idx.npy).
//  - Parity: the engine's rays match, and pipeline::ray_pose on them with the official table reproduces the
//    official extrinsics and intrinsics (96×72 rays: below 8000 points, so the official refit draws nothing).
//  - Integration: the model's ray-pose path equals pipeline::ray_pose(rays, seed) exactly, and differs from cam_dec.
//  - Errors: Unsupported naming the model when it has no ray head.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/arena.h"
#include "engine/model.h"
#include "engine/ray_pose_options.h"
#include "layers/exec.h"
#include "models/camera_decoder.h"
#include "models/model_test_util.h"
#include "models/pos_embed_cache.h"
#include "models/run_state.h"
#include "ops/context.h"
#include "pipeline/ray_pose.h"

namespace dacpp {
namespace {

using testing::load_npy;
using testing::rel_l2;

const std::string kDir = std::string(DACPP_FIXTURES_DIR) + "/models/da3small_tiny";
const std::string kRef = kDir + "/raypose/";

// One forward of the model on the fixture input, as Runner::forward_raw runs it.
struct Forward {
  ops::Context ctx{Device::cpu(), 2};
  HostArena arena;
  models::PosEmbedCache cache;
  models::ModelOutputs run(const Model& m, const Tensor& x, bool want_rays, bool ray_pose, uint64_t seed) {
    layers::Exec ex{ctx, arena};
    models::RunState rs{ex, cache, nullptr};
    rs.want_rays = want_rays;
    rs.ray_pose = ray_pose;
    rs.ray_pose_seed = seed;
    models::ModelOutputs out = m.net().forward(rs, x);
    models::finish_cameras(ctx, out);  // as Runner does after the forward
    return out;
  }
};

Tensor input() {
  Tensor x = load_npy(kRef + "input.npy");  // [1, 1, 3, H, W]
  const Shape s = x.shape();
  return x.reshape({s[0] * s[1], s[2], s[3], s[4]});
}

std::shared_ptr<const Model> load(bool with_aux) {
  LoadOptions lo;
  lo.import.with_aux = with_aux;
  return Model::load(kDir, lo);
}

class RayPoseParity : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kRef + "sample_idx.npy")) GTEST_SKIP() << "fixture da3small_tiny/raypose absent";
  }
};

TEST_F(RayPoseParity, RaysAndSolverWithOfficialTableMatchOfficialUseRayPose) {
  std::shared_ptr<const Model> model = load(true);
  const Tensor x = input();
  Forward f;
  models::ModelOutputs out = f.run(*model, x, /*want_rays=*/true, /*ray_pose=*/false, 0);
  EXPECT_LE(rel_l2(out.rays, load_npy(kRef + "ray.npy")), 1e-5);
  EXPECT_LE(rel_l2(out.ray_conf, load_npy(kRef + "ray_conf.npy")), 1e-5);
  const Tensor table = load_npy(kRef + "sample_idx.npy");
  pipeline::RayPoseOptions po;
  for (int64_t i = 0; i < table.numel(); ++i) po.sample_table.push_back(static_cast<int32_t>(table.data<float>()[i]));
  const int h = static_cast<int>(x.dim(2)), w = static_cast<int>(x.dim(3));
  pipeline::RayPoseResult rp = pipeline::ray_pose(out.rays.clone(), out.ray_conf.clone(), h, w, po);
  const double e_ext = rel_l2(rp.extrinsics, load_npy(kRef + "extrinsics.npy"));
  const double e_int = rel_l2(rp.intrinsics, load_npy(kRef + "intrinsics.npy"));
  EXPECT_LE(e_ext, 1e-5);
  EXPECT_LE(e_int, 1e-5);
  if (std::getenv("DACPP_PARITY_VERBOSE") != nullptr)
    std::printf("  ray-pose parity: extrinsics rel L2 %.3g, intrinsics %.3g\n", e_ext, e_int);
}

TEST_F(RayPoseParity, ModelRayPoseIsTheSeededSolverOnItsRays) {
  std::shared_ptr<const Model> model = load(true);
  const Tensor x = input();
  Forward f;
  models::ModelOutputs cam = f.run(*model, x, true, false, 0);
  const Tensor rays = cam.rays.clone(), conf = cam.ray_conf.clone(), cam_ext = cam.extrinsics.clone();
  pipeline::RayPoseOptions po;
  po.seed = 7;
  pipeline::RayPoseResult want = pipeline::ray_pose(rays, conf, static_cast<int>(x.dim(2)),
                                                    static_cast<int>(x.dim(3)), po);
  models::ModelOutputs got = f.run(*model, x, /*want_rays=*/false, /*ray_pose=*/true, 7);
  EXPECT_FALSE(got.rays.defined());  // not asked for
  ASSERT_TRUE(got.extrinsics.defined() && got.intrinsics.defined());
  EXPECT_EQ(rel_l2(got.extrinsics, want.extrinsics), 0.0);
  EXPECT_EQ(rel_l2(got.intrinsics, want.intrinsics), 0.0);
  EXPECT_GT(rel_l2(got.extrinsics, cam_ext), 1e-3);  // not the camera decoder's pose
  // The principal point is estimated, not the image centre (cam_dec's).
  const float cx = got.intrinsics.data<float>()[2];
  EXPECT_NE(cx, static_cast<float>(x.dim(3)) / 2);
}

TEST_F(RayPoseParity, ModelWithoutRayHeadIsUnsupported) {
  std::shared_ptr<const Model> model = load(false);
  Forward f;
  try {
    f.run(*model, input(), false, true, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(e.what()).find("ray head"), std::string::npos) << e.what();
  }
  RunOptions o;
  o.ray_pose = true;
  try {
    validate_ray_pose(model->config(), o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(e.what()).find(model->config().checkpoint_name), std::string::npos) << e.what();
  }
  o.ray_pose = false;
  EXPECT_NO_THROW(validate_ray_pose(model->config(), o));
}

}  // namespace
}  // namespace dacpp
