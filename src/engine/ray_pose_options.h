// The `--ray-pose` request (RunOptions::ray_pose) on its way into a forward: validated against the model and copied
// into the RunState. Runner::forward_raw calls apply_ray_pose_options before the model's forward.
#pragma once

#include "engine/runner.h"
#include "models/model_config.h"
#include "models/run_state.h"

namespace dacpp {

// Throws Unsupported naming the model when ray_pose is asked of a model without the ray head (any model other than
// a DA3 any-view or nested one converted with the aux head).
void validate_ray_pose(const models::ModelConfig& cfg, const RunOptions& options);

// validate_ray_pose, then rs.ray_pose / rs.ray_pose_seed from the options.
void apply_ray_pose_options(const models::ModelConfig& cfg, const RunOptions& options, models::RunState& rs);

}  // namespace dacpp
