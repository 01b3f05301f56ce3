// <stem>.pose.json: one view's camera as JSON. Keys:
//   extrinsics      3×4 world-to-camera [R | t] (rows), OpenCV axes: x right, y down, z forward
//   intrinsics      3×3 K in pixels of the processed image (image_size), pixel (u, v) centred at integer (u, v)
//   intrinsics_source  K rescaled to the source image (fx, cx · source_w / w; fy, cy · source_h / h)
//   camera_center   the camera's position in the world, −Rᵀ t
//   image_size, source_size  {"width", "height"}
//   convention      the above in words, so a reader need not guess
// The view must have a pose (InvalidArgument otherwise). Written atomically; failures are Io naming the path.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "io/scene.h"

namespace dacpp::io {

nlohmann::json pose_json(const SceneView& view);
void write_pose_json(const SceneView& view, const std::string& path);

}  // namespace dacpp::io
