// DA3NESTED metric alignment, as the official `NestedDepthAnything3Net` runs `_apply_metric_scaling`,
// `_apply_depth_alignment` and `_handle_sky_regions` (model/da3.py, utils/alignment.py; spec/models.md §4.9):
//  1. metric = metric_depth · f/300 per view, f = (fx + fy)/2 of the ANY-VIEW model's intrinsics (model-input px).
//  2. non-sky = metric_sky < 0.3; more than 10 non-sky pixels are required.
//  3. m = median (torch.quantile, linear interpolation) of depth_conf over non-sky pixels.
//  4. align = depth_conf ≥ m ∧ non-sky ∧ metric > 0.01 ∧ depth > 0.001.
//  5. s = ⟨metric, depth⟩ / max(⟨depth, depth⟩, 1e-12) over `align` (one scalar for all views, no shift).
//  6. depth ← s·depth; the translation column of every w2c extrinsic ← s·t.
//  7. sky_depth = min(99th percentile of the scaled non-sky depth, 200); sky pixels get depth = sky_depth and
//     depth_conf = 1.0.
// metric_depth is the metric model's output after its own mono sky fill (pipeline/sky_fill.h), as upstream.
//
// Deviations, both deliberate: upstream estimates the two quantiles from ≤100k random samples when there are more
// pixels; we use all of them (deterministic; the same choice as the engine's mono sky fill). An empty alignment
// set (upstream: s = 0, all depth 0) is an error here.
//
// Errors (InvalidArgument, naming the tensor and numbers): tensors not host f32, mismatched shapes, non-finite
// values, ≤ 10 non-sky pixels, an empty alignment set.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace dacpp::pipeline {

struct NestedAlignOptions {
  double sky_threshold = 0.3;       // sky score ≥ this is sky
  double focal_divisor = 300.0;     // metric = raw · f / focal_divisor
  double sky_depth_cap = 200.0;     // metres
  double min_depth = 1e-3;          // any-view depth must exceed this to be aligned
  double min_metric_depth = 1e-2;   // metric depth must exceed this to be aligned
  int64_t min_non_sky_pixels = 10;  // more than this many are required
};

struct NestedAlignResult {
  double scale_factor = 0;     // s (upstream `scale_factor`)
  double sky_depth = 0;        // the depth given to sky pixels
  int64_t aligned_pixels = 0;  // |align|
  int64_t sky_pixels = 0;
};

// depth, depth_conf: [S, H, W] (updated in place); extrinsics: [S, 3, 4] w2c (translations scaled in place);
// intrinsics: [S, 3, 3]; metric_depth, metric_sky: [S, H, W]. All host f32.
NestedAlignResult nested_metric_align(Tensor& depth, Tensor& depth_conf, Tensor& extrinsics,
                                      const Tensor& intrinsics, const Tensor& metric_depth,
                                      const Tensor& metric_sky, const NestedAlignOptions& options = {});

// torch.quantile(values, q) with its default linear interpolation (q in [0, 1]; values non-empty, reordered).
double quantile_linear(std::vector<float>& values, double q);

}  // namespace dacpp::pipeline
