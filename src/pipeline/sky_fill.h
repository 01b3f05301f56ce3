// The DA3 sky fill (upstream _process_mono_sky_estimation; spec/models.md): pixels whose sky score is ≥ 0.3 get
// the 99th percentile (torch.quantile, linear interpolation) of the other pixels' depth, unless the sky or the
// non-sky set has ≤ 10 pixels. Used by DA3 mono/metric postprocessing ([h, w]) and by the nested model's metric
// branch over its whole [S, H, W] batch (upstream takes the quantile over the batch as one set).
// Deviation, deliberate: upstream estimates the quantile from ≤ 100k random samples when there are more pixels; we
// use all of them (deterministic).
#pragma once

#include "core/tensor.h"

namespace dacpp::pipeline {

// depth, sky: host f32 of one shape; depth is modified in place. Returns whether the fill applied.
// Throws InvalidArgument when the shapes or dtypes differ.
bool fill_sky_depth(Tensor& depth, const Tensor& sky);

}  // namespace dacpp::pipeline
