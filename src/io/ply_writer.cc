#include "io/ply_writer.h"

#include <string>

#include "core/error.h"
#include "io/le_bytes.h"
#include "io/writers.h"

namespace dacpp::io {

void write_ply(const std::string& path, const PointCloud& cloud) {
  DACPP_CHECK(cloud.xyz.size() == 3 * cloud.size() && cloud.rgb.size() == 3 * cloud.size(), ErrorCode::Internal,
              "write_ply '", path, "': point cloud arrays disagree (", cloud.xyz.size(), " coordinates, ",
              cloud.rgb.size(), " colour bytes, ", cloud.size(), " points)");
  const std::string header = "ply\nformat binary_little_endian 1.0\ncomment written by dacpp\nelement vertex " +
                             std::to_string(cloud.size()) +
                             "\nproperty float x\nproperty float y\nproperty float z\n"
                             "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n";
  LeBytes out;
  out.reserve(header.size() + 15 * cloud.size());
  out.str(header);
  for (size_t i = 0; i < cloud.size(); ++i) {
    for (int c = 0; c < 3; ++c) out.f32(cloud.xyz[3 * i + c]);
    for (int c = 0; c < 3; ++c) out.u8(cloud.rgb[3 * i + c]);
  }
  write_file_atomic(path, out.data(), out.size());
}

size_t write_scene_ply(const std::string& path, const std::vector<SceneView>& views, const PointCloudOptions& opt) {
  validate_scene(views, "PLY export", /*need_pose=*/views.size() > 1);
  PointCloud cloud = unproject_scene(views, clamped_conf_threshold(views, opt));
  subsample(cloud, opt.max_points);
  write_ply(path, cloud);
  return cloud.size();
}

}  // namespace dacpp::io
