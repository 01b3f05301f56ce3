#include "engine/ray_pose_options.h"

#include "core/error.h"

namespace dacpp {

void validate_ray_pose(const models::ModelConfig& cfg, const RunOptions& options) {
  if (!options.ray_pose) return;
  DACPP_CHECK(cfg.capabilities().rays, ErrorCode::Unsupported, "ray pose: model '", cfg.checkpoint_name, "' (",
              models::model_kind_name(cfg.kind), ") has no ray head (head.scratch.rn1_aux.*; only DA3 any-view ",
              "models converted with the aux head have one, e.g. `dacpp convert --with-aux`)");
}

void apply_ray_pose_options(const models::ModelConfig& cfg, const RunOptions& options, models::RunState& rs) {
  validate_ray_pose(cfg, options);
  rs.ray_pose = options.ray_pose;
  rs.ray_pose_seed = options.ray_pose_seed;
}

}  // namespace dacpp
