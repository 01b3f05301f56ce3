#include "models/dpt_common.h"

namespace dacpp::models::detail {

std::unique_ptr<StageBranches> branch_stages(RunState& rs, int64_t rn1_bytes,
                                             const std::function<Tensor(RunState&, int)>& stage,
                                             const std::vector<layers::FeatureFusionBlock>& refine) {
  ops::Context& ctx = rs.ex.ctx;
  if (ctx.device().is_cpu() || rs.dumps != nullptr || rs.lane_arenas == nullptr || rs.lane_arenas->size() < 3 ||
      rn1_bytes > kLaneMapBytes)
    return nullptr;
  auto br = std::make_unique<StageBranches>();
  br->lanes.emplace(ctx, 4);
  if (br->lanes->count() < 4) return nullptr;
  for (int s = 0; s < 3; ++s) {
    const size_t i = static_cast<size_t>(s);
    const int lane = 3 - s;
    const auto on = br->lanes->on(lane);
    layers::Exec ex{ctx, (*rs.lane_arenas)[static_cast<size_t>(lane - 1)]};
    RunState lane_rs{ex, rs.pos_cache};
    br->rn[i] = stage(lane_rs, s);
    br->lateral[i] = refine[i].lateral_unit(ex, br->rn[i]);
  }
  return br;
}

}  // namespace dacpp::models::detail
