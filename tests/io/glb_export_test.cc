// GLB export: the container read back byte by byte, the glTF JSON, the points in the aligned frame (glTF axes,
// centred on the median) and the camera frustums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/export_test_scene.h"
#include "io/glb_writer.h"
#include "io/point_cloud.h"
#include "util/npy_read.h"

namespace dacpp::io {
namespace {

using ExportGlb = testing::ExportTest;

struct Glb {
  nlohmann::json doc;
  std::vector<uint8_t> bin;
};

Glb read_glb(const std::string& path) {
  const std::vector<uint8_t> b = dacpp::testing::read_file_bytes(path);
  testing::ByteReader r(b);
  Glb g;
  EXPECT_EQ(r.get<uint32_t>(), 0x46546C67u);  // "glTF"
  EXPECT_EQ(r.get<uint32_t>(), 2u);
  EXPECT_EQ(r.get<uint32_t>(), b.size());
  const uint32_t json_len = r.get<uint32_t>();
  EXPECT_EQ(r.get<uint32_t>(), 0x4E4F534Au);  // "JSON"
  EXPECT_EQ(json_len % 4, 0u);
  if (20 + size_t{json_len} > b.size()) {
    ADD_FAILURE() << "JSON chunk overruns the file";
    return g;
  }
  g.doc = nlohmann::json::parse(b.begin() + 20, b.begin() + 20 + json_len);
  testing::ByteReader r2(b, 20 + json_len);
  const uint32_t bin_len = r2.get<uint32_t>();
  EXPECT_EQ(r2.get<uint32_t>(), 0x004E4942u);  // "BIN\0"
  EXPECT_EQ(bin_len % 4, 0u);
  EXPECT_EQ(r2.pos() + bin_len, b.size());
  g.bin.assign(b.begin() + r2.pos(), b.end());
  return g;
}

// The values of accessor `a` of type VEC3 float or VEC4 normalised ubyte, as doubles.
std::vector<double> accessor_values(const Glb& g, size_t a) {
  const auto& acc = g.doc["accessors"][a];
  const auto& view = g.doc["bufferViews"][acc["bufferView"].get<size_t>()];
  const size_t count = acc["count"], off = view["byteOffset"].get<size_t>() + acc.value("byteOffset", 0);
  const bool is_float = acc["componentType"] == 5126;
  const size_t comps = acc["type"] == "VEC3" ? 3 : 4, size = is_float ? 4 : 1;
  EXPECT_EQ(view["byteLength"].get<size_t>(), count * comps * size);
  EXPECT_LE(off + count * comps * size, g.bin.size());
  std::vector<double> out;
  testing::ByteReader r(g.bin, off);
  for (size_t i = 0; i < count * comps; ++i) out.push_back(is_float ? r.get<float>() : r.get<uint8_t>());
  return out;
}

const nlohmann::json& primitive_of(const Glb& g, const std::string& node_name) {
  for (const auto& n : g.doc["nodes"])
    if (n["name"] == node_name) return g.doc["meshes"][n["mesh"].get<size_t>()]["primitives"][0];
  ADD_FAILURE() << "no node " << node_name;
  static const nlohmann::json empty = nlohmann::json::object();
  return empty;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TEST_F(ExportGlb, PointsAreAlignedToGltfAxesAndCentred) {
  const auto views = testing::make_scene(2, 8, 6);
  PointCloudOptions opt;
  const GlbSummary s = write_scene_glb(path("scene.glb"), views, opt);
  const PointCloud world = unproject_scene(views, clamped_conf_threshold(views, opt));
  ASSERT_EQ(s.points, world.size());
  EXPECT_EQ(s.cameras, 2u);
  const Glb g = read_glb(path("scene.glb"));
  EXPECT_EQ(g.doc["asset"]["version"], "2.0");
  EXPECT_EQ(g.doc["buffers"][0]["byteLength"].get<size_t>(), g.bin.size());
  const auto& A = g.doc["scenes"][0]["extras"]["dacpp_alignment"];
  ASSERT_EQ(A.size(), 16u);
  // View 0 has the identity pose: A's linear part is the OpenCV → glTF flip diag(1, -1, -1).
  const double flip[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(A[4 * r + c].get<double>(), flip[3 * r + c]);
  const auto& prim = primitive_of(g, "points");
  EXPECT_EQ(prim["mode"], 0);
  const auto pos = accessor_values(g, prim["attributes"]["POSITION"].get<size_t>());
  const auto col = accessor_values(g, prim["attributes"]["COLOR_0"].get<size_t>());
  ASSERT_EQ(pos.size(), 3 * world.size());
  ASSERT_EQ(col.size(), 4 * world.size());
  std::vector<double> axis[3];
  for (size_t i = 0; i < world.size(); ++i) {
    const double w[3] = {world.xyz[3 * i], -world.xyz[3 * i + 1], -world.xyz[3 * i + 2]};
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(pos[3 * i + c], w[c] + A[4 * c + 3].get<double>(), 1e-5);
      axis[c].push_back(pos[3 * i + c]);
      EXPECT_EQ(col[4 * i + c], world.rgb[3 * i + c]);
    }
    EXPECT_EQ(col[4 * i + 3], 255);
  }
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(median(axis[c]), 0.0, 1e-5) << "axis " << c;
  const auto& acc = g.doc["accessors"][prim["attributes"]["POSITION"].get<size_t>()];
  EXPECT_EQ(acc["min"][2].get<double>(), *std::min_element(axis[2].begin(), axis[2].end()));
  EXPECT_EQ(acc["max"][0].get<double>(), *std::max_element(axis[0].begin(), axis[0].end()));
}

TEST_F(ExportGlb, FrustumsStartAtCameraCentresAndLookDownMinusZ) {
  const auto views = testing::make_scene(2, 8, 6);
  write_scene_glb(path("scene.glb"), views, {});
  const Glb g = read_glb(path("scene.glb"));
  const auto& A = g.doc["scenes"][0]["extras"]["dacpp_alignment"];
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& prim = primitive_of(g, "camera_view" + std::to_string(i));
    EXPECT_EQ(prim["mode"], 1);
    const auto p = accessor_values(g, prim["attributes"]["POSITION"].get<size_t>());
    ASSERT_EQ(p.size(), 16u * 3);
    // The camera centre −Rᵀt, mapped by A, is the apex of the first four segments.
    const auto& e = views[i].w2c;
    double c[3], a[3];
    for (int k = 0; k < 3; ++k) c[k] = -(e[k] * e[3] + e[4 + k] * e[7] + e[8 + k] * e[11]);
    for (int r = 0; r < 3; ++r) {
      a[r] = A[4 * r + 3].get<double>();
      for (int k = 0; k < 3; ++k) a[r] += A[4 * r + k].get<double>() * c[k];
    }
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[6 * s + k], a[k], 1e-5) << "camera " << i << " segment " << s;
    if (i == 0) {
      for (int s = 0; s < 4; ++s) EXPECT_LT(p[6 * s + 5], a[2]) << "the first camera must look down -Z";
    }
  }
}

TEST_F(ExportGlb, SubsamplesAndRefusesViewsWithoutPose) {
  auto views = testing::make_scene(2, 8, 6);
  PointCloudOptions opt;
  opt.max_points = 7;
  EXPECT_EQ(write_scene_glb(path("small.glb"), views, opt).points, 7u);
  const Glb g = read_glb(path("small.glb"));
  EXPECT_EQ(g.doc["accessors"][0]["count"], 7);
  views[1].has_pose = false;
  try {
    write_scene_glb(path("nopose.glb"), views, opt);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no camera pose"), std::string::npos) << e.what();
  }
}

TEST_F(ExportGlb, SceneWithoutValidDepthHasOnlyCameras) {
  auto views = testing::make_scene(2, 4, 3);
  for (auto& v : views)
    for (float& d : v.depth) d = std::numeric_limits<float>::quiet_NaN();
  const GlbSummary s = write_scene_glb(path("empty.glb"), views, {});
  EXPECT_EQ(s.points, 0u);
  const Glb g = read_glb(path("empty.glb"));
  ASSERT_EQ(g.doc["nodes"].size(), 2u);
  EXPECT_EQ(g.doc["nodes"][0]["name"], "camera_view0");
  // Without points the frustum depth falls back to camera_size × 1.
  const auto p = accessor_values(g, primitive_of(g, "camera_view0")["attributes"]["POSITION"].get<size_t>());
  EXPECT_NEAR(std::fabs(p[5] - p[2]), 0.03, 1e-6);
}

}  // namespace
}  // namespace dacpp::io
