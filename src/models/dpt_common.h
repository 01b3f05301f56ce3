// Helpers shared by the DPT heads (dpt_head.cc, dual_dpt_head.cc).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "layers/conv2d.h"
#include "layers/feature_fusion_block.h"
#include "models/run_state.h"
#include "ops/lanes.h"

namespace dacpp::models::detail {

// A k×k convolution with "same" padding (k / 2), as the DPT heads declare them upstream.
inline layers::ConvSpec dpt_conv(int64_t in, int64_t out, int k, int stride,
                                 layers::Bias bias = layers::Bias::Required) {
  layers::ConvSpec s;
  s.in = in;
  s.out = out;
  s.kernel = k;
  s.stride = stride;
  s.pad = k / 2;
  s.bias = bias;
  return s;
}

// Spatial size after resize stage s for a g-patch grid side: ×4, ×2, ×1, conv 3×3 s2 p1.
inline int64_t dpt_stage_size(int s, int64_t g) {
  switch (s) {
    case 0: return 4 * g;
    case 1: return 2 * g;
    case 2: return g;
    default: return (g - 1) / 2 + 1;
  }
}

// Reassemble stages 0-2 of a DPT head with their refinenets' lateral units (rcu1 of refinenet s + 1), which
// depend neither on each other nor on the fusion chain from stage 3: on a GPU each runs on a lane of its own
// (ops::Lanes: lane 3 − s, activations from RunState::lane_arenas) beside stage 3 and the chain on lane 0.
struct StageBranches {
  std::optional<ops::Lanes> lanes;
  std::array<Tensor, 3> rn, lateral;  // rn_{s+1} and rcu1(rn_{s+1}) of refinenet s + 1
  // Lane 0's later work waits for stage s's lane.
  void join(int s) { lanes->join(3 - s); }
};

// Lanes pay while the largest map (rn1) is at most this big: small maps leave most of a GPU idle when run one after
// another. Larger ones fill it alone, and the side lanes' arenas keep their stage's maps until the next forward.
constexpr int64_t kLaneMapBytes = int64_t{64} << 20;

// The four reassemble stages of a DPT head: rn1..rn4 (each dumped as "rn<k>"), stages 0-2 with refine[s]'s lateral
// units on lanes (`branches`) where they apply — a GPU, lane arenas, no dumps (read as the maps are made, in
// order), rn1 of b × features maps on the gh × gw grid within kLaneMapBytes, DACPP_LANES unset — else one after the
// other on the caller's lane (`branches` null). stage(rs, s) → rn_{s+1}, from the RunState it is given.
// lane0_first: the head's chain on lane 0 is its critical path (ops::Lanes).
struct Reassembled {
  std::vector<Tensor> rn;
  std::unique_ptr<StageBranches> branches;
};
Reassembled reassemble(RunState& rs, int64_t b, int64_t features, int64_t gh, int64_t gw,
                       const std::function<Tensor(RunState&, int)>& stage,
                       const std::vector<layers::FeatureFusionBlock>& refine, bool lane0_first);

// refinenet4 .. refinenet2 of `chain` on rn1..rn4 → the map refinenet1's units take, [N, F, h1, w1]: each block's
// upsample adds its out_conv's bias and the next block's lateral branch (rcu1 of rn_s: from `br`'s lane, joined just
// before, or run here without lanes) in one pass, so refinenet1 is given no lateral input, and neither are the
// blocks before it. A block without a lateral unit after the first takes the plain path.
Tensor fuse_chain(RunState& rs, const std::vector<layers::FeatureFusionBlock>& chain, const std::vector<Tensor>& rn,
                  StageBranches* br);

// refinenet1 (`refine1` on fuse_chain's `path`, which holds its lateral branch already) into the head's out1 conv →
// o1 [N, F/2, 2·h1, 2·w1]. Where the backend folds it, refinenet1's out_conv goes into out1's taps-first GEMM; else
// where conv2d_upsampled takes the operands, refinenet1 stops before its ×2 upsample and out1's conv does it (the
// 2× map is never stored); else refinenet1 upsamples and out1 convolves. dump: the name the 2× map is dumped under
// (RunState::dump), or null for none.
void refine1_into_out1(RunState& rs, const layers::FeatureFusionBlock& refine1, const Tensor& path,
                       const layers::Conv2d& out1, Tensor& o1, const char* dump);

}  // namespace dacpp::models::detail
