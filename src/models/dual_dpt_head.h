// DualDptHead: the DA3 any-view head (model/dualdpt.py), spec/models.md §4.3–4.4.
//
// tokens [S, P, 2E] per stage → LayerNorm(2E, eps 1e-5) → [S, 2E, gh, gw] → projects (1×1) → + UV embedding →
// resize (ConvT k4s4 | ConvT k2s2 | identity | conv 3×3 s2) → layer{1..4}_rn (3×3, no bias). Two independent
// fusion chains over the same rn maps:
//   main: refinenet4..1 → output_conv1 (3×3 F → F/2) at 8gh×8gw → bilinear (align_corners) to (P·gh, P·gw) → + UV
//         → output_conv2 (3×3 F/2 → 32, ReLU, 1×1 32 → 2) → depth = exp(ch0), conf = exp(ch1) + 1.
//   aux (rays; only when asked and the model has it): refinenet4_aux..1_aux → output_conv1_aux (5 plain 3×3 convs
//         F → F/2 → F → F/2 → F → F/2) at 8gh×8gw → + UV → output_conv2_aux (3×3 F/2 → 32, LayerNorm(32) over
//         channels, ReLU, 1×1 32 → 7) → ray = ch0..5 (linear), ray_conf = exp(ch6) + 1. Upstream computes the
//         coarser aux levels and drops them; they are never run here. Skipping the branch leaves depth and conf
//         unchanged (the chains share no state).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "layers/conv2d.h"
#include "layers/feature_fusion_block.h"
#include "layers/layer_norm.h"
#include "models/model_config.h"
#include "models/run_state.h"

namespace dacpp::models {

namespace detail {
struct StageBranches;
}

struct DualHeadOutputs {
  Tensor depth;     // [S, H, W] (arena)
  Tensor conf;      // [S, H, W] (arena)
  Tensor rays;      // [S, 8gh, 8gw, 6] (arena) or undefined
  Tensor ray_conf;  // [S, 8gh, 8gw] (arena) or undefined
};

class DualDptHead {
 public:
  // in_dim: the token width 2E. Fetches every main-path tensor, and the aux tensors when cfg.has_aux.
  DualDptHead(const ModelFile& mf, const HeadConfig& cfg, int64_t in_dim, int patch_size,
              const std::string& prefix = "head");

  // feats: 4 × [S, gh·gw, 2E]. want_rays requires has_aux() (Internal otherwise: callers check first).
  DualHeadOutputs forward(RunState& rs, const std::vector<Tensor>& feats, int64_t gh, int64_t gw,
                          bool want_rays) const;

  bool has_aux() const { return !refine_aux_.empty(); }

 private:
  Tensor stage(RunState& rs, int s, const Tensor& tokens, int64_t gh, int64_t gw) const;
  void band(RunState& rs, const Tensor& o1, int64_t r0, int64_t r1, DualHeadOutputs& out) const;
  // The whole main output stage through ops::upsample_conv_head (two output channels, the UV embedding as its
  // separable added map) where the backend runs it so (the CPU); false (nothing done) otherwise.
  bool fused_output(RunState& rs, const Tensor& o1, DualHeadOutputs& out) const;
  void rays(RunState& rs, Tensor& aux1, DualHeadOutputs& out) const;

  HeadConfig cfg_;
  int64_t in_dim_;
  int patch_;
  layers::LayerNorm norm_;
  std::vector<layers::Conv2d> projects_, layer_rn_;
  std::optional<layers::ConvTranspose2d> resize0_, resize1_;
  std::optional<layers::Conv2d> resize3_;
  std::vector<layers::FeatureFusionBlock> refine_, refine_aux_;  // refinenet1..4 at [0..3]
  std::optional<layers::Conv2d> out1_, out2a_, out2b_;
  std::vector<layers::Conv2d> out1_aux_;  // the 5-conv stack of the finest level
  std::optional<layers::Conv2d> out2a_aux_, out2b_aux_;
  std::optional<layers::LayerNorm> aux_ln_;
  Tensor one_;  // [1] = 1, for exp + 1
};

}  // namespace dacpp::models
