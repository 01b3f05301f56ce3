// Writes a synthetic posed scene with every 3D exporter, plus truth.json (the raw views), for the independent
// readers of tests/io/export_readers_test.sh (meshio, the Khronos glTF validator, COLMAP). The folder is
// $DACPP_EXPORT_SAMPLE_DIR when set (the script sets it and keeps the files), else a scratch folder.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "io/colmap_writer.h"
#include "io/export_test_scene.h"
#include "io/glb_writer.h"
#include "io/ply_writer.h"
#include "io/pose_json.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

using ExportSample = testing::ExportTest;

nlohmann::json truth_of(const std::vector<SceneView>& views, const PointCloudOptions& opt) {
  nlohmann::json t;
  t["options"] = {{"conf_percentile", opt.conf_percentile},
                  {"ensure_percentile", opt.ensure_percentile},
                  {"conf_base", opt.conf_base},
                  {"camera_size", opt.camera_size}};
  for (const SceneView& v : views)
    t["views"].push_back({{"stem", v.stem},
                          {"image_name", v.image_name},
                          {"width", v.width},
                          {"height", v.height},
                          {"source_width", v.source_width},
                          {"source_height", v.source_height},
                          {"K", v.K},
                          {"w2c", v.w2c},
                          {"depth", v.depth},
                          {"conf", v.conf},
                          {"rgb", v.rgb}});
  return t;
}

TEST_F(ExportSample, WritesSceneForIndependentReaders) {
  const char* env = std::getenv("DACPP_EXPORT_SAMPLE_DIR");
  const std::string dir = env && *env ? std::string(env) : dir_;
  std::filesystem::create_directories(dir);
  std::vector<SceneView> views = testing::make_scene(3, 24, 16);
  views[1].depth[5] = -1.f;  // invalid pixels the exporters must skip
  views[2].depth[40] = 0.f;
  PointCloudOptions opt;
  const size_t ply = write_scene_ply(dir + "/scene.ply", views, opt);
  const GlbSummary glb = write_scene_glb(dir + "/scene.glb", views, opt);
  const ColmapSummary colmap = write_scene_colmap(dir + "/colmap", views, opt);
  for (const SceneView& v : views) write_pose_json(v, dir + "/" + v.stem + ".pose.json");
  const std::string truth = truth_of(views, opt).dump() + "\n";
  write_file_atomic(dir + "/truth.json", truth.data(), truth.size());
  EXPECT_EQ(ply, glb.points);
  EXPECT_GT(ply, 3u * 24 * 16 / 3);
  EXPECT_LT(ply, 3u * 24 * 16);
  EXPECT_GE(colmap.points, ply);  // the COLMAP rule has no 1.05 floor, so it keeps at least as many
  EXPECT_EQ(colmap.images, 3u);
  for (const char* f : {"scene.ply", "scene.glb", "colmap/cameras.bin", "colmap/images.txt", "view2.pose.json"})
    EXPECT_GT(std::filesystem::file_size(dir + "/" + f), 0u) << f;
}

}  // namespace
}  // namespace dacpp::io
