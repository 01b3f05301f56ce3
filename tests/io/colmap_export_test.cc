// COLMAP export: the three .bin files parsed byte by byte (cameras rescaled to the source size, world-to-camera
// quaternions, 2D points that reproject, consistent tracks), the .txt twins, and the quaternion conversion.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "io/colmap_writer.h"
#include "io/export_test_scene.h"
#include "io/point_cloud.h"
#include "util/npy_read.h"

namespace dacpp::io {
namespace {

using ExportColmap = testing::ExportTest;

std::array<double, 9> quaternion_to_matrix(double w, double x, double y, double z) {
  return {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
          2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
          2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
}

struct Image2D {
  double q[4], t[3];
  uint32_t camera;
  std::string name;
  std::vector<double> xy;
  std::vector<uint64_t> ids;
};

std::vector<Image2D> read_images(const std::string& path) {
  const auto b = dacpp::testing::read_file_bytes(path);
  testing::ByteReader r(b);
  std::vector<Image2D> out(r.get<uint64_t>());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(r.get<uint32_t>(), i + 1);
    for (double& q : out[i].q) q = r.get<double>();
    for (double& t : out[i].t) t = r.get<double>();
    out[i].camera = r.get<uint32_t>();
    out[i].name = r.cstr();
    const uint64_t n = r.get<uint64_t>();
    for (uint64_t k = 0; k < n && !r.at_end(); ++k) {
      out[i].xy.push_back(r.get<double>());
      out[i].xy.push_back(r.get<double>());
      out[i].ids.push_back(r.get<uint64_t>());
    }
  }
  EXPECT_TRUE(r.at_end());
  return out;
}

TEST_F(ExportColmap, BinaryModelIsConsistentAndReprojects) {
  const auto views = testing::make_scene(3, 8, 6);
  PointCloudOptions opt;
  const ColmapSummary s = write_scene_colmap(path("colmap"), views, opt);
  const PointCloud want = unproject_scene(views, percentile_conf_threshold(views, opt));
  ASSERT_EQ(s.points, want.size());
  EXPECT_EQ(s.images, 3u);
  // cameras.bin: PINHOLE, source size, intrinsics scaled by source / processed.
  const auto cb = dacpp::testing::read_file_bytes(path("colmap/cameras.bin"));
  testing::ByteReader rc(cb);
  ASSERT_EQ(rc.get<uint64_t>(), 3u);
  std::vector<std::array<double, 4>> cams;
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rc.get<uint32_t>(), i + 1);
    EXPECT_EQ(rc.get<int32_t>(), 1);    // PINHOLE
    EXPECT_EQ(rc.get<uint64_t>(), 17u);  // 2·8 + 1
    EXPECT_EQ(rc.get<uint64_t>(), 12u);
    std::array<double, 4> p;
    for (double& x : p) x = rc.get<double>();
    const auto& K = views[i].K;
    EXPECT_DOUBLE_EQ(p[0], K[0] * 17 / 8);
    EXPECT_DOUBLE_EQ(p[1], K[4] * 12 / 6);
    EXPECT_DOUBLE_EQ(p[2], K[2] * 17 / 8);
    EXPECT_DOUBLE_EQ(p[3], K[5] * 12 / 6);
    cams.push_back(p);
  }
  EXPECT_TRUE(rc.at_end());
  const std::vector<Image2D> ims = read_images(path("colmap/images.bin"));
  ASSERT_EQ(ims.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ims[i].name, "view" + std::to_string(i) + ".jpg");
    EXPECT_EQ(ims[i].camera, i + 1);
    EXPECT_GE(ims[i].q[0], 0.0);
    const auto R = quaternion_to_matrix(ims[i].q[0], ims[i].q[1], ims[i].q[2], ims[i].q[3]);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(R[3 * r + c], views[i].w2c[4 * r + c], 1e-12);
      EXPECT_EQ(ims[i].t[r], views[i].w2c[4 * r + 3]);
    }
  }
  // points3D.bin: each point's track points at a 2D point that refers back to it and onto which it projects.
  const auto pb = dacpp::testing::read_file_bytes(path("colmap/points3D.bin"));
  testing::ByteReader rp(pb);
  ASSERT_EQ(rp.get<uint64_t>(), want.size());
  for (size_t p = 0; p < want.size(); ++p) {
    EXPECT_EQ(rp.get<uint64_t>(), p + 1);
    double X[3];
    for (int c = 0; c < 3; ++c) {
      X[c] = rp.get<double>();
      EXPECT_EQ(X[c], want.xyz[3 * p + c]);
    }
    for (int c = 0; c < 3; ++c) EXPECT_EQ(rp.get<uint8_t>(), want.rgb[3 * p + c]);
    EXPECT_EQ(rp.get<double>(), 0.0);
    ASSERT_EQ(rp.get<uint64_t>(), 1u);
    const uint32_t image = rp.get<uint32_t>(), idx = rp.get<uint32_t>();
    ASSERT_TRUE(image >= 1 && image <= 3 && idx < ims[image - 1].ids.size()) << image << " " << idx;
    const Image2D& im = ims[image - 1];
    EXPECT_EQ(im.ids[idx], p + 1);
    const auto& e = views[image - 1].w2c;
    double cam[3];
    for (int r = 0; r < 3; ++r) cam[r] = e[4 * r] * X[0] + e[4 * r + 1] * X[1] + e[4 * r + 2] * X[2] + e[4 * r + 3];
    const auto& k = cams[image - 1];
    EXPECT_NEAR(k[0] * cam[0] / cam[2] + k[2], im.xy[2 * idx], 1e-4);
    EXPECT_NEAR(k[1] * cam[1] / cam[2] + k[3], im.xy[2 * idx + 1], 1e-4);
  }
  EXPECT_TRUE(rp.at_end());
}

std::vector<std::string> data_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);)
    if (line.empty() || line[0] != '#') out.push_back(line);
  return out;
}

TEST_F(ExportColmap, TextModelMatchesBinary) {
  const auto views = testing::make_scene(2, 5, 4);
  const ColmapSummary s = write_scene_colmap(path("m"), views, {});
  const auto cams = data_lines(path("m/cameras.txt"));
  ASSERT_EQ(cams.size(), 2u);
  std::istringstream c0(cams[1]);
  std::string model;
  int id, w, h;
  double fx, fy, cx, cy;
  c0 >> id >> model >> w >> h >> fx >> fy >> cx >> cy;
  EXPECT_EQ(id, 2);
  EXPECT_EQ(model, "PINHOLE");
  EXPECT_EQ(w, 11);
  EXPECT_EQ(h, 8);
  EXPECT_DOUBLE_EQ(fx, views[1].K[0] * 11 / 5);
  EXPECT_DOUBLE_EQ(cy, views[1].K[5] * 8 / 4);
  const auto ims_bin = read_images(path("m/images.bin"));
  const auto ims = data_lines(path("m/images.txt"));
  ASSERT_EQ(ims.size(), 4u);  // two lines per image (the points line may be empty)
  for (size_t i = 0; i < 2; ++i) {
    std::istringstream l(ims[2 * i]);
    double q[4], t[3];
    std::string name;
    uint32_t camera;
    l >> id >> q[0] >> q[1] >> q[2] >> q[3] >> t[0] >> t[1] >> t[2] >> camera >> name;
    for (int k = 0; k < 4; ++k) EXPECT_EQ(q[k], ims_bin[i].q[k]);
    EXPECT_EQ(name, ims_bin[i].name);
    std::istringstream pts(ims[2 * i + 1]);
    std::vector<double> xy;
    double x, y;
    uint64_t pid;
    size_t n = 0;
    while (pts >> x >> y >> pid) {
      ASSERT_LT(n, ims_bin[i].ids.size());
      EXPECT_EQ(x, ims_bin[i].xy[2 * n]);
      EXPECT_EQ(y, ims_bin[i].xy[2 * n + 1]);
      EXPECT_EQ(pid, ims_bin[i].ids[n]);
      ++n;
    }
    EXPECT_EQ(n, ims_bin[i].ids.size());
  }
  EXPECT_EQ(data_lines(path("m/points3D.txt")).size(), s.points);
}

TEST_F(ExportColmap, RefusesMissingPoseAndNonRotation) {
  auto views = testing::make_scene(2, 4, 3);
  views[0].has_pose = false;
  EXPECT_THROW(write_scene_colmap(path("a"), views, {}), Error);
  views = testing::make_scene(2, 4, 3);
  views[1].w2c[0] = 2.0;  // scaled, not a rotation
  try {
    write_scene_colmap(path("b"), views, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not a rotation"), std::string::npos) << e.what();
  }
}

TEST(ExportQuaternion, RoundTripsEveryBranch) {
  std::vector<std::array<double, 9>> rs = {
      {1, 0, 0, 0, 1, 0, 0, 0, 1},    {1, 0, 0, 0, -1, 0, 0, 0, -1},  // 180° about x
      {-1, 0, 0, 0, 1, 0, 0, 0, -1},  {-1, 0, 0, 0, -1, 0, 0, 0, 1},  // about y, about z
  };
  for (int i = 1; i < 12; ++i) rs.push_back(testing::rotation_yx(0.55 * i, -0.8 * i));
  for (const auto& r : rs) {
    const auto q = rotation_to_quaternion(r);
    EXPECT_GE(q[0], 0.0);
    EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12);
    const auto back = quaternion_to_matrix(q[0], q[1], q[2], q[3]);
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(back[k], r[k], 1e-12) << k;
  }
  EXPECT_THROW(rotation_to_quaternion({1, 0, 0, 0, 1, 0, 0, 0, -1}), Error);  // a reflection
}

}  // namespace
}  // namespace dacpp::io
