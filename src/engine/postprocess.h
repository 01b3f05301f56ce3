// Engine-side postprocessing of one image's raw network outputs into a DepthResult (spec/models.md §5):
//   DA2: bilinear, align_corners=True, back to the source size (upstream infer_image); units per max_depth.
//   DA3 mono/metric: sky fill as upstream `_process_mono_sky_estimation` (pixels with sky ≥ 0.3 get the 99th
//     percentile, linear interpolation, of the non-sky depth, when both sets have more than 10 pixels; upstream
//     samples 100k pixels at random for larger sets, we use all of them), then for metric with focal_px:
//     depth · f/300 with f the focal in processed-image pixels; outputs stay at the processed size unless
//     resize_to_input (then bilinear, align_corners=True).
#pragma once

#include "engine/depth_result.h"
#include "engine/runner.h"
#include "models/depth_model.h"
#include "ops/context.h"

namespace dacpp {

// out.depth / out.sky: [1, h, w] (processed size). Fills res.depth, res.sky, res.units; reads
// res.source_height/width and res.processed_height/width.
void postprocess(ops::Context& ctx, const models::ModelConfig& cfg, const models::ModelOutputs& out,
                 const RunOptions& options, DepthResult& res);

// DA3 any-view: view `view` of a cross-view pass (out.depth/conf [S, h, w], poses [S, ...], rays) → res.depth,
// res.conf (processed size, or the source size with resize_to_input), pose, rays. Reads res.source_* sizes.
void postprocess_view(ops::Context& ctx, const models::ModelOutputs& out, int64_t view, const RunOptions& options,
                      DepthResult& res);

}  // namespace dacpp
