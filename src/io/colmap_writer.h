// A COLMAP sparse model of a posed scene, as the official DA3 exporter builds it, in both of COLMAP's formats:
// DIR/{cameras,images,points3D}.bin and DIR/{cameras,images,points3D}.txt (COLMAP reads the .bin when both exist).
//   - one PINHOLE camera per view (ids 1..N), sized to the source image, with fx, cx scaled by
//     source_width / width and fy, cy by source_height / height (the processed image was resized, not cropped);
//   - one image per view (ids 1..N): qw qx qy qz and tx ty tz of the world-to-camera pose (COLMAP's convention,
//     qw ≥ 0), named image_name (or stem);
//   - one 3D point per pixel that passes depth > 0 and confidence ≥ P[conf_percentile] of all confidences (no
//     subsampling, as the official), with a one-element track to its pixel's 2D point (u, v) scaled to the
//     source size; reprojection error 0 (the point lies exactly on its pixel's ray).
// Needs poses whose rotation is orthonormal (InvalidArgument otherwise). The folder is created when missing; every
// file is written atomically; failures are Io naming the path.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "io/scene.h"

namespace dacpp::io {

struct ColmapSummary {
  size_t points = 0;
  size_t images = 0;
};

ColmapSummary write_scene_colmap(const std::string& dir, const std::vector<SceneView>& views,
                                 const PointCloudOptions& opt);

// The unit quaternion (w, x, y, z), w ≥ 0, of a 3×3 row-major rotation matrix. InvalidArgument when r is not a
// rotation (‖RᵀR − I‖∞ > 1e-3 or det ≤ 0).
std::array<double, 4> rotation_to_quaternion(const std::array<double, 9>& r);

}  // namespace dacpp::io
