// Export core: back-projection against a direct formula, the official percentile/threshold rules, subsampling,
// input validation, the PLY bytes and the pose JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fault.h"
#include "io/export_test_scene.h"
#include "io/ply_writer.h"
#include "io/point_cloud.h"
#include "io/pose_json.h"
#include "util/npy_read.h"

namespace dacpp::io {
namespace {

using testing::ExportTest;
using testing::make_scene;

const double kNoThreshold = -std::numeric_limits<double>::infinity();

TEST(ExportPointCloud, UnprojectMatchesDirectFormulaAndReprojects) {
  const auto views = make_scene(2, 7, 5);
  const PointCloud pc = unproject_scene(views, kNoThreshold);
  ASSERT_EQ(pc.size(), 2u * 7 * 5);
  for (size_t p = 0; p < pc.size(); ++p) {
    const SceneView& v = views[pc.view[p]];
    const int x = pc.pixel[p] % v.width, y = pc.pixel[p] / v.width;
    const auto want = testing::expected_world_point(v, x, y);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(pc.xyz[3 * p + c], want[c], 1e-5) << p << " " << c;
    // Reprojection through w2c and K lands on the pixel at the pixel's depth.
    double cam[3];
    for (int r = 0; r < 3; ++r)
      cam[r] = v.w2c[4 * r] * pc.xyz[3 * p] + v.w2c[4 * r + 1] * pc.xyz[3 * p + 1] +
               v.w2c[4 * r + 2] * pc.xyz[3 * p + 2] + v.w2c[4 * r + 3];
    EXPECT_NEAR(cam[2], v.depth[pc.pixel[p]], 1e-5);
    EXPECT_NEAR(v.K[0] * cam[0] / cam[2] + v.K[2], x, 1e-4);
    EXPECT_NEAR(v.K[4] * cam[1] / cam[2] + v.K[5], y, 1e-4);
    EXPECT_EQ(pc.rgb[3 * p], v.rgb[3 * pc.pixel[p]]);
    EXPECT_EQ(pc.rgb[3 * p + 2], v.rgb[3 * pc.pixel[p] + 2]);
  }
}

TEST(ExportPointCloud, SkipsInvalidDepthAndLowConfidence) {
  auto views = make_scene(1, 4, 3);
  views[0].depth[0] = std::numeric_limits<float>::quiet_NaN();
  views[0].depth[1] = 0.f;
  views[0].depth[2] = -1.f;
  views[0].depth[3] = std::numeric_limits<float>::infinity();
  views[0].conf[5] = 0.5f;
  views[0].conf[6] = std::numeric_limits<float>::quiet_NaN();
  const PointCloud pc = unproject_scene(views, 1.0);
  ASSERT_EQ(pc.size(), 12u - 6u);
  for (int32_t px : pc.pixel) EXPECT_TRUE(px >= 4 && px != 5 && px != 6) << px;
  views[0].conf.clear();  // no confidence: no confidence filter
  EXPECT_EQ(unproject_scene(views, 100.0).size(), 12u - 4u);
}

TEST(ExportPointCloud, PercentileIsNumpyLinear) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 40), 2.2);  // numpy.percentile([1,2,3,4], 40)
  EXPECT_DOUBLE_EQ(percentile({5, 1, 3}, 50), 3.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 3}, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 3}, 100), 5.0);
  EXPECT_DOUBLE_EQ(percentile({10, 20, std::numeric_limits<float>::quiet_NaN(), 30, 40, 50}, 90), 46.0);
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(ExportPointCloud, ConfidenceThresholdRules) {
  auto views = make_scene(2, 5, 4);
  std::vector<float> all;
  for (auto& v : views) all.insert(all.end(), v.conf.begin(), v.conf.end());
  PointCloudOptions opt;
  const double p40 = percentile(all, 40), p90 = percentile(all, 90);
  ASSERT_GT(p40, 1.05);
  EXPECT_DOUBLE_EQ(clamped_conf_threshold(views, opt), p40);
  EXPECT_DOUBLE_EQ(percentile_conf_threshold(views, opt), p40);
  opt.conf_base = 100;  // clamped down to the 90th percentile
  EXPECT_DOUBLE_EQ(clamped_conf_threshold(views, opt), p90);
  opt.conf_base = 1.05;
  opt.conf_percentile = 0;  // P0 = 1.0 < base: the base wins in the GLB rule only
  EXPECT_DOUBLE_EQ(clamped_conf_threshold(views, opt), 1.05);
  EXPECT_DOUBLE_EQ(percentile_conf_threshold(views, opt), 1.0);
  for (auto& v : views) v.conf.clear();
  EXPECT_EQ(clamped_conf_threshold(views, opt), kNoThreshold);
}

TEST(ExportPointCloud, SubsampleKeepsExactCountInOrderAndRepeats) {
  const auto views = make_scene(3, 16, 9);
  PointCloud a = unproject_scene(views, kNoThreshold), b = a;
  subsample(a, 100);
  subsample(b, 100);
  ASSERT_EQ(a.size(), 100u);
  ASSERT_EQ(a.xyz.size(), 300u);
  EXPECT_EQ(a.pixel, b.pixel);
  EXPECT_EQ(a.xyz, b.xyz);
  int64_t last = -1;
  bool spread = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t key = int64_t{a.view[i]} * 1000 + a.pixel[i];
    EXPECT_GT(key, last);
    last = key;
    spread |= a.view[i] == 2;
  }
  EXPECT_TRUE(spread) << "the sample never reached the last view";
  PointCloud c = unproject_scene(views, kNoThreshold);
  subsample(c, 0);
  EXPECT_EQ(c.size(), 3u * 16 * 9);
}

void expect_invalid(const std::vector<SceneView>& views, bool need_pose, const std::string& needle) {
  try {
    validate_scene(views, "TEST export", need_pose);
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ExportPointCloud, ValidationNamesTheProblem) {
  expect_invalid({}, false, "no views");
  auto v = make_scene(2, 4, 3);
  v[1].depth.pop_back();
  expect_invalid(v, false, "depth has 11 values");
  v = make_scene(2, 4, 3);
  v[1].rgb.resize(5);
  expect_invalid(v, false, "rgb has 5 bytes");
  v = make_scene(2, 4, 3);
  v[1].conf.clear();
  expect_invalid(v, false, "lacks confidence");
  v = make_scene(1, 4, 3);
  v[0].K[0] = 0;
  expect_invalid(v, false, "intrinsics");
  v = make_scene(1, 4, 3);
  v[0].has_pose = false;
  expect_invalid(v, true, "no camera pose");
  v = make_scene(1, 4, 3);
  v[0].w2c[5] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(v, false, "non-finite");
  v = make_scene(1, 4, 3);
  v[0].w2c = {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  expect_invalid(v, false, "singular");
}

using ExportPly = ExportTest;

TEST_F(ExportPly, BinaryLayoutHoldsTheCloud) {
  const auto views = make_scene(2, 6, 4);
  PointCloudOptions opt;
  const size_t n = write_scene_ply(path("scene.ply"), views, opt);
  PointCloud want = unproject_scene(views, clamped_conf_threshold(views, opt));
  ASSERT_EQ(n, want.size());
  ASSERT_GT(n, 10u);
  ASSERT_LT(n, 48u);  // the confidence filter removed some
  const std::vector<uint8_t> b = dacpp::testing::read_file_bytes(path("scene.ply"));
  const std::string head(b.begin(), b.begin() + std::min<size_t>(b.size(), 400));
  const size_t end = head.find("end_header\n");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(head.rfind("ply\nformat binary_little_endian 1.0\n", 0), 0u);
  EXPECT_NE(head.find("element vertex " + std::to_string(n) + "\n"), std::string::npos);
  EXPECT_NE(head.find("property float x\nproperty float y\nproperty float z\nproperty uchar red\n"
                      "property uchar green\nproperty uchar blue\nend_header"),
            std::string::npos);
  testing::ByteReader r(b, end + 11);
  for (size_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(r.get<float>(), want.xyz[3 * i + c]);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(r.get<uint8_t>(), want.rgb[3 * i + c]);
  }
  EXPECT_TRUE(r.at_end());
}

TEST_F(ExportPly, SingleViewWithoutPoseIsCameraFrameSeveralAreRefused) {
  auto views = make_scene(2, 4, 3);
  for (auto& v : views) v.has_pose = false;
  EXPECT_THROW(write_scene_ply(path("a.ply"), views, {}), Error);
  views.pop_back();
  views[0].conf.clear();
  EXPECT_EQ(write_scene_ply(path("a.ply"), views, {}), 12u);
}

TEST_F(ExportPly, WriteFailureIsIoNamingThePathAndLeavesNothing) {
  const auto views = make_scene(1, 4, 3);
  fault::configure("output.write");
  try {
    write_scene_ply(path("f.ply"), views, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("f.ply"), std::string::npos) << e.what();
  }
  fault::configure("");
  EXPECT_FALSE(std::filesystem::exists(path("f.ply")));
  try {
    write_scene_ply(path("missing/f.ply"), views, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("missing/f.ply"), std::string::npos) << e.what();
  }
}

using ExportPoseJson = ExportTest;

TEST_F(ExportPoseJson, HoldsPoseIntrinsicsSizesAndConventions) {
  const SceneView v = testing::make_view(1, 8, 6);
  write_pose_json(v, path("view1.pose.json"));
  const std::vector<uint8_t> b = dacpp::testing::read_file_bytes(path("view1.pose.json"));
  const nlohmann::json j = nlohmann::json::parse(b.begin(), b.end());
  EXPECT_EQ(j["image_size"]["width"], 8);
  EXPECT_EQ(j["image_size"]["height"], 6);
  EXPECT_EQ(j["source_size"]["width"], 17);
  EXPECT_EQ(j["source_size"]["height"], 12);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(j["extrinsics"][r][c].get<double>(), v.w2c[4 * r + c]);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(j["intrinsics"][r][c].get<double>(), v.K[3 * r + c]);
  }
  EXPECT_DOUBLE_EQ(j["intrinsics_source"][0][0].get<double>(), v.K[0] * 17 / 8);
  EXPECT_DOUBLE_EQ(j["intrinsics_source"][1][2].get<double>(), v.K[5] * 12 / 6);
  // The camera centre maps to the camera origin.
  double cam[3];
  for (int r = 0; r < 3; ++r) {
    cam[r] = v.w2c[4 * r + 3];
    for (int c = 0; c < 3; ++c) cam[r] += v.w2c[4 * r + c] * j["camera_center"][c].get<double>();
    EXPECT_NEAR(cam[r], 0.0, 1e-12);
  }
  EXPECT_NE(j["convention"]["extrinsics"].get<std::string>().find("world_to_camera"), std::string::npos);
  EXPECT_NE(j["convention"]["camera_axes"].get<std::string>().find("opencv"), std::string::npos);
  SceneView none = v;
  none.has_pose = false;
  EXPECT_THROW(write_pose_json(none, path("none.pose.json")), Error);
  EXPECT_FALSE(std::filesystem::exists(path("none.pose.json")));
}

}  // namespace
}  // namespace dacpp::io
