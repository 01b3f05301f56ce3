// DepthResult: what Runner::run returns for one image.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace dacpp {

struct StageTiming {
  std::string stage;  // "preprocess", "forward", "postprocess"
  double ms = 0;
};

struct DepthResult {
  Tensor depth;  // [H, W] f32 host, owning
  Tensor sky;    // [H, W] f32 host (DA3 mono/metric: ReLU sky score, ≥ 0.3 counts as sky), or undefined
  // What depth means:
  //   "relative-disparity"  DA2 relative: affine-invariant inverse depth (≥ 0)
  //   "metres"              DA2 metric, or DA3 metric with focal_px given
  //   "relative-depth"      DA3 mono: depth up to scale
  //   "focal-normalised"    DA3 metric without focal: metres = depth · f_px / 300 (f in processed-image pixels)
  std::string units;
  // DA3 any-view (spec/models.md §5); all in processed-image pixels and the frame of the reference view:
  Tensor conf;  // [H, W] f32 host: depth confidence exp(x) + 1 (> 1, higher is better), or undefined
  bool has_pose = false;
  std::array<double, 12> extrinsics{};  // world-to-camera [R | t], row-major 3×4, OpenCV axes (x right, y down)
  std::array<double, 9> intrinsics{};   // K, row-major 3×3, pixels of the processed image
  // [h, w, 6] f32 host at 8× the patch grid (RunOptions::want_rays): ray direction (world frame, not normalised)
  // then ray origin (camera centre); undefined unless asked. ray_conf: [h, w] (exp + 1).
  Tensor rays;
  Tensor ray_conf;
  int processed_height = 0, processed_width = 0;  // the network input size
  int source_height = 0, source_width = 0;        // the image as given
  std::vector<StageTiming> timings;
};

}  // namespace dacpp
