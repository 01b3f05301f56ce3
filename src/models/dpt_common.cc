#include "models/dpt_common.h"

#include <algorithm>
#include <string>

#include "ops/conv2d.h"
#include "ops/resize.h"

namespace dacpp::models::detail {
namespace {

// Stages 0-2 (stage(lane_rs, s) from the lane's own RunState) and refine[s]'s lateral unit on lanes 3, 2, 1, or
// null where lanes do not apply (reassemble says when).
std::unique_ptr<StageBranches> branch_stages(RunState& rs, int64_t rn1_bytes,
                                             const std::function<Tensor(RunState&, int)>& stage,
                                             const std::vector<layers::FeatureFusionBlock>& refine, bool lane0_first) {
  ops::Context& ctx = rs.ex.ctx;
  if (ctx.device().is_cpu() || rs.dumps != nullptr || rs.lane_arenas == nullptr || rs.lane_arenas->size() < 3 ||
      rn1_bytes > kLaneMapBytes)
    return nullptr;
  auto br = std::make_unique<StageBranches>();
  br->lanes.emplace(ctx, 4, lane0_first);
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

}  // namespace

Reassembled reassemble(RunState& rs, int64_t b, int64_t features, int64_t gh, int64_t gw,
                       const std::function<Tensor(RunState&, int)>& stage,
                       const std::vector<layers::FeatureFusionBlock>& refine, bool lane0_first) {
  const int64_t rn1_bytes = b * features * dpt_stage_size(0, gh) * dpt_stage_size(0, gw) *
                            static_cast<int64_t>(dtype_nbytes(rs.ex.ctx.act_dtype(), 1));
  Reassembled r;
  r.branches = branch_stages(rs, rn1_bytes, stage, refine, lane0_first);
  r.rn.resize(4);
  if (r.branches) std::copy(r.branches->rn.begin(), r.branches->rn.end(), r.rn.begin());
  for (int s = r.branches ? 3 : 0; s < 4; ++s) {
    r.rn[static_cast<size_t>(s)] = stage(rs, s);
    rs.dump("rn" + std::to_string(s + 1), r.rn[static_cast<size_t>(s)]);
  }
  return r;
}

void refine1_into_out1(RunState& rs, const layers::FeatureFusionBlock& refine1, const Tensor& path,
                       const Tensor& lateral, bool lateral_done, const layers::Conv2d& out1, Tensor& o1,
                       const char* dump) {
  layers::Exec& ex = rs.ex;
  if (!ops::conv2d_upsampled_fused(ex.ctx, path, out1.weight(), o1)) {
    const Tensor up = refine1.forward(ex, path, lateral, 0, 0, lateral_done);
    if (dump != nullptr) rs.dump(dump, up);
    out1.forward_into(ex, up, o1);
    return;
  }
  const Tensor small = refine1.forward_unresized(ex, path, lateral, lateral_done);
  if (dump != nullptr && rs.dumps != nullptr) {
    layers::ArenaScope dump_scope(ex.arena);
    Tensor up = ex.alloc({small.dim(0), small.dim(1), o1.dim(2), o1.dim(3)}, "dpt.path1");
    ops::resize_bilinear(ex.ctx, small, up, /*align_corners=*/true);
    rs.dump(dump, up);
  }
  ops::conv2d_upsampled(ex.ctx, small, out1.weight(), out1.bias(), o1);
}

}  // namespace dacpp::models::detail
