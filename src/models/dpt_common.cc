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

Tensor fuse_chain(RunState& rs, const std::vector<layers::FeatureFusionBlock>& chain, const std::vector<Tensor>& rn,
                  StageBranches* br) {
  layers::Exec& ex = rs.ex;
  Tensor path = rn[3];
  for (int s = 3; s >= 1; --s) {
    const layers::FeatureFusionBlock& next = chain[static_cast<size_t>(s) - 1];
    const Tensor& lateral_rn = rn[static_cast<size_t>(s) - 1];
    if (!next.has_lateral_unit()) {  // nothing to merge: the block's own upsample
      path = chain[static_cast<size_t>(s)].forward(ex, path, Tensor(), lateral_rn.dim(2), lateral_rn.dim(3));
      continue;
    }
    const Tensor mixed = chain[static_cast<size_t>(s)].mix(ex, path, Tensor());
    // rcu1(rn_s) of the next block, which its upsample is added into (in place: the lane's map, its lane joined
    // first, or a new one here).
    if (br != nullptr) br->join(s - 1);
    Tensor merged = br != nullptr ? br->lateral[static_cast<size_t>(s) - 1] : next.lateral_unit(ex, lateral_rn);
    chain[static_cast<size_t>(s)].upsample_into(ex, mixed, merged, /*accumulate=*/true);
    path = merged;
  }
  return path;
}

void refine1_into_out1(RunState& rs, const layers::FeatureFusionBlock& refine1, const Tensor& path,
                       const layers::Conv2d& out1, Tensor& o1, const char* dump) {
  layers::Exec& ex = rs.ex;
  const bool dumping = dump != nullptr && rs.dumps != nullptr;
  // The 2× map for a dump, from refinenet1's output before its upsample (the paths below never store it).
  const auto dump_upsampled = [&](const Tensor& small) {
    layers::ArenaScope dump_scope(ex.arena);
    Tensor up = ex.alloc({small.dim(0), small.dim(1), o1.dim(2), o1.dim(3)}, "dpt.path1");
    ops::resize_bilinear(ex.ctx, small, up, /*align_corners=*/true);
    rs.dump(dump, up);
  };
  // Where the backend folds refinenet1's out_conv (1×1) into out1's taps-first GEMM, neither the 1×1 conv's output
  // nor the 2× map is stored.
  const layers::Conv2d& out_conv = refine1.out_conv();
  const ops::Pointwise pre{out_conv.weight(), out_conv.bias()};
  if (ops::conv2d_upsampled_folds(ex.ctx, path, pre, out1.weight(), o1)) {
    const Tensor units = refine1.forward_units(ex, path, Tensor());
    if (dumping) {
      layers::ArenaScope dump_scope(ex.arena);
      dump_upsampled(out_conv.forward(ex, units));
    }
    ops::conv2d_upsampled(ex.ctx, units, pre, out1.weight(), out1.bias(), o1);
    return;
  }
  if (!ops::conv2d_upsampled_fused(ex.ctx, path, out1.weight(), o1)) {
    const Tensor up = refine1.forward(ex, path, Tensor());
    if (dump != nullptr) rs.dump(dump, up);
    out1.forward_into(ex, up, o1);
    return;
  }
  const Tensor small = refine1.forward_unresized(ex, path, Tensor());
  if (dumping) dump_upsampled(small);
  ops::conv2d_upsampled(ex.ctx, small, out1.weight(), out1.bias(), o1);
}

}  // namespace dacpp::models::detail
