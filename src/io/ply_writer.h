// Binary PLY (little-endian) of a coloured point cloud: one "vertex" element with float x, y, z and uchar red,
// green, blue. Written atomically (write_file_atomic); failures are Io naming the path (fault site "output.write").
#pragma once

#include <string>
#include <vector>

#include "io/point_cloud.h"
#include "io/scene.h"

namespace dacpp::io {

void write_ply(const std::string& path, const PointCloud& cloud);

// The scene's points in the world frame of the poses (OpenCV axes; a view without a pose is taken as the world
// camera, which only makes sense for a single view, so several views without poses are InvalidArgument),
// confidence-filtered by the GLB rule (clamped_conf_threshold) and subsampled to opt.max_points.
// Returns the number of points written.
size_t write_scene_ply(const std::string& path, const std::vector<SceneView>& views, const PointCloudOptions& opt);

}  // namespace dacpp::io
