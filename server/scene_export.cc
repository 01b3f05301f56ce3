#include "server/scene_export.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "io/colmap_writer.h"
#include "io/glb_writer.h"
#include "io/point_cloud.h"

namespace dacpp::server {
namespace {

std::vector<float> copy_map(const Tensor& t) {
  if (!t.defined()) return {};
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

std::string export_dir(const std::string& dst) {
  if (dst.empty()) {
    char tmpl[] = "/tmp/dacpp-export-XXXXXX";
    DACPP_CHECK(::mkdtemp(tmpl) != nullptr, ErrorCode::Io, "Depth: cannot create a temporary export folder: ",
                std::strerror(errno));
    return tmpl;
  }
  std::error_code ec;
  std::filesystem::create_directories(dst, ec);
  DACPP_CHECK(!ec, ErrorCode::Io, "Depth: cannot create the export folder '", dst, "': ", ec.message());
  return dst;
}

}  // namespace

io::SceneView scene_view(const DepthResult& result, const io::Image& image) {
  DACPP_CHECK(result.has_pose, ErrorCode::Unsupported, "Depth: points and exports need a camera pose");
  io::SceneView v;
  v.stem = "view";
  v.height = static_cast<int>(result.depth.dim(0));
  v.width = static_cast<int>(result.depth.dim(1));
  v.source_width = image.width();
  v.source_height = image.height();
  v.depth = copy_map(result.depth);
  v.conf = copy_map(result.conf);
  v.has_pose = true;
  v.w2c = result.extrinsics;
  // K is in processed-image pixels; rescale it when the map was resized to another size.
  const double sx = result.processed_width > 0 ? double(v.width) / result.processed_width : 1.0;
  const double sy = result.processed_height > 0 ? double(v.height) / result.processed_height : 1.0;
  v.K = result.intrinsics;
  v.K[0] *= sx, v.K[1] *= sx, v.K[2] *= sx, v.K[4] *= sy, v.K[5] *= sy;
  v.rgb.resize(static_cast<size_t>(v.width) * v.height * 3);
  for (int y = 0; y < v.height; ++y) {
    const int iy = std::min(image.height() - 1, static_cast<int>((y + 0.5) * image.height() / v.height));
    for (int x = 0; x < v.width; ++x) {
      const int ix = std::min(image.width() - 1, static_cast<int>((x + 0.5) * image.width() / v.width));
      std::copy_n(image.row(iy) + static_cast<size_t>(ix) * 3, 3, v.rgb.data() + (static_cast<size_t>(y) * v.width + x) * 3);
    }
  }
  return v;
}

void fill_points(const io::SceneView& view, float conf_thresh, backend::DepthResponse* out) {
  io::validate_scene({view}, "points", true);
  const io::PointCloud pc = io::unproject_scene({view}, conf_thresh);
  out->set_num_points(static_cast<int32_t>(pc.size()));
  out->mutable_points()->Add(pc.xyz.begin(), pc.xyz.end());
  out->set_point_colors(pc.rgb.data(), pc.rgb.size());
}

std::vector<std::string> write_exports(const io::SceneView& view, const std::vector<std::string>& exports,
                                       const std::string& dst) {
  std::vector<std::string> paths;
  if (exports.empty()) return paths;
  const std::string dir = export_dir(dst);
  const io::PointCloudOptions options;
  for (const std::string& e : exports) {
    if (e == "glb") {
      paths.push_back(dir + "/pointcloud.glb");
      io::write_scene_glb(paths.back(), {view}, options);
    } else if (e == "colmap") {
      paths.push_back(dir + "/colmap");
      io::write_scene_colmap(paths.back(), {view}, options);
    } else {
      DACPP_THROW(ErrorCode::InvalidArgument, "Depth: unknown export '", e, "' (expected \"glb\" or \"colmap\")");
    }
  }
  return paths;
}

}  // namespace dacpp::server
