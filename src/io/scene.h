// SceneView: one view of a reconstructed scene as the 3D exporters (PLY, GLB, COLMAP, pose JSON) consume it.
// Conventions (those of the official DA3 exporters):
//   - depth is z-depth along the optical axis, in the same units as the camera translation;
//   - the camera is OpenCV's: x right, y down, z forward;
//   - K maps camera coordinates to pixels of the width×height image, pixel (u, v) being column u, row v with its
//     centre at integer coordinates (the official back-projection uses u = 0..W-1 unshifted);
//   - w2c is the 3×4 world-to-camera rigid transform [R | t], row-major: x_cam = R · x_world + t.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dacpp::io {

struct SceneView {
  std::string stem;        // output file stem, e.g. "frame_0001"
  std::string image_name;  // the source file name for COLMAP's images list; empty: stem
  int width = 0, height = 0;                // size of depth / conf / rgb (the processed image)
  int source_width = 0, source_height = 0;  // the image as given (COLMAP intrinsics are rescaled to it)
  std::vector<float> depth;                 // height*width, row-major
  std::vector<float> conf;                  // height*width, or empty (no confidence filtering)
  std::vector<uint8_t> rgb;                 // height*width*3, or empty (points are grey)
  bool has_pose = false;
  std::array<double, 12> w2c = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  std::array<double, 9> K = {0, 0, 0, 0, 0, 0, 0, 0, 1};
};

// Knobs of the point exporters; the defaults are those of the official DA3 GLB exporter.
struct PointCloudOptions {
  double conf_percentile = 40.0;    // lower percentile of confidence that a point must reach
  double ensure_percentile = 90.0;  // the threshold never exceeds this percentile (GLB/PLY rule)
  double conf_base = 1.05;          // base threshold, clamped into [lower, upper] percentiles (GLB/PLY rule)
  int64_t max_points = 1000000;     // uniform random subsample (fixed seed) above this many points; 0: no limit
  double camera_size = 0.03;        // GLB frustum depth as a fraction of the scene's 5–95 % diagonal
};

}  // namespace dacpp::io
