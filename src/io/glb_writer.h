// glTF 2.0 binary (.glb) of a posed scene: the confidence-filtered point cloud (one POINTS primitive, COLOR_0 as
// normalised RGBA bytes) and one wireframe frustum per camera (LINES), as the official DA3 GLB exporter draws them.
//
// Frame: the official alignment A = T_center · diag(1, -1, -1) · w2c[0]: the world is moved into the first camera's
// frame, flipped from OpenCV axes (x right, y down, z forward) to glTF's (x right, y up, z backward, i.e. the first
// camera looks down -Z), then translated so the per-axis median of the points is the origin. A (4×4, row-major) is
// stored in scenes[0].extras.dacpp_alignment so that a reader can map back to the pose frame.
// Frustums: apex at the camera centre, base at the image corners (0,0), (W-1,0), (W-1,H-1), (0,H-1) on the plane
// z = camera_size · (5–95 % diagonal of the points), each camera coloured by its index on an HSV wheel.
//
// Needs poses (InvalidArgument otherwise). Written atomically; failures are Io naming the path.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "io/scene.h"

namespace dacpp::io {

struct GlbSummary {
  size_t points = 0;
  size_t cameras = 0;
  std::array<double, 16> alignment{};  // A, row-major 4×4
};

GlbSummary write_scene_glb(const std::string& path, const std::vector<SceneView>& views,
                           const PointCloudOptions& opt, bool show_cameras = true);

}  // namespace dacpp::io
