// Point clouds and 3D exports of a Depth request (include_points, exports "glb" / "colmap"), through the io scene
// exporters (io/point_cloud.h, io/glb_writer.h, io/colmap_writer.h) so the server and the CLI write the same files.
#pragma once

#include <string>
#include <vector>

#include "backend.pb.h"
#include "engine/depth_result.h"
#include "io/image.h"
#include "io/scene.h"

namespace dacpp::server {

// One posed view of `result`: its depth, confidence and camera, and the image's colours sampled (nearest) at the
// depth map's size. Throws Unsupported when the result has no pose.
io::SceneView scene_view(const DepthResult& result, const io::Image& image);

// Fills num_points / points / point_colors: every pixel with depth > 0 and (when the model gives confidence)
// confidence >= conf_thresh, in the world frame of the camera pose (io::unproject_scene).
void fill_points(const io::SceneView& view, float conf_thresh, backend::DepthResponse* out);

// Writes each export under `dst` (created when missing; a new temporary folder when empty): "glb" →
// dst/pointcloud.glb, "colmap" → dst/colmap/. Returns the paths written. Errors: InvalidArgument for another
// name, Io for the files.
std::vector<std::string> write_exports(const io::SceneView& view, const std::vector<std::string>& exports,
                                       const std::string& dst);

}  // namespace dacpp::server
