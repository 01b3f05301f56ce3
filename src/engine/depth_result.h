// DepthResult: what Runner::run returns for one image.
#pragma once

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
  int processed_height = 0, processed_width = 0;  // the network input size
  int source_height = 0, source_width = 0;        // the image as given
  std::vector<StageTiming> timings;
};

}  // namespace dacpp
