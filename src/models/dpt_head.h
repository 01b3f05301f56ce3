// DptHead: the single-output DPT head of DA2 and of DA3 mono/metric.
// Upstream: DepthAnything/Depth-Anything-V2 depth_anything_v2/dpt.py (DPTHead), metric_depth/depth_anything_v2/
// dpt.py (Sigmoid · max_depth), util/blocks.py; ByteDance-Seed/Depth-Anything-3 src/depth_anything_3/model/dpt.py
// (DPT, output_dim 1, exp activation, sky head with ReLU).
//
// tokens [B, P, C] per stage → (optional LayerNorm(C), eps 1e-5) → [B, C, gh, gw] → projects (1×1 C → oc_s) →
// resize (ConvT k4s4 | ConvT k2s2 | identity | conv 3×3 s2) → layer{1..4}_rn (3×3, no bias) → refinenet4..1 →
// output_conv1 (3×3 F → F/2) → bilinear (align_corners) to (P·gh, P·gw) → output_conv2 (3×3 F/2 → 32, ReLU, 1×1
// 32 → 1) → ReLU (DA2 relative) | Sigmoid · max_depth (DA2 metric) | exp (DA3). The DA3 sky branch
// (sky_out2a/sky_out2b, then ReLU) shares the upsampled output_conv1 features.
// DA2's refinenet4 carries resConfUnit1 weights that upstream never runs; they are not loaded.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layers/conv2d.h"
#include "layers/feature_fusion_block.h"
#include "layers/layer_norm.h"
#include "layers/resize_fold.h"
#include "models/model_config.h"
#include "models/run_state.h"

namespace dacpp::models {

enum class DepthActivation { Relu, SigmoidMax, Exp };

struct DptHeadSpec {
  int64_t in_dim = 0;  // token width C
  int patch_size = 14;
  HeadConfig head;
  DepthActivation activation = DepthActivation::Relu;
};

struct HeadOutputs {
  Tensor depth;  // [B, 1, H, W] (arena)
  Tensor sky;    // [B, 1, H, W] (arena) or undefined
};

class DptHead {
 public:
  DptHead(const ModelFile& mf, const DptHeadSpec& spec, const std::string& prefix = "head");

  // feats: 4 × [B, gh·gw, C] → depth (and sky) at [B, 1, patch·gh, patch·gw].
  HeadOutputs forward(RunState& rs, const std::vector<Tensor>& feats, int64_t gh, int64_t gw) const;

 private:
  Tensor stage(RunState& rs, int s, const Tensor& tokens, int64_t gh, int64_t gw) const;
  // Output rows [r0, r1) of depth (and sky) from out1's map o1: [B, F/2, 8·gh, 8·gw].
  void band(RunState& rs, const Tensor& o1, int64_t r0, int64_t r1, HeadOutputs& out) const;
  // The whole output stage through ops::upsample_conv_head (one fused kernel per branch), where
  // ops::upsample_conv_head_fused says the backend runs it fused; false (nothing done) otherwise.
  bool fused_output(RunState& rs, const Tensor& o1, HeadOutputs& out) const;
  // The depth (or sky: ReLU) activation of logits into y (may alias).
  void activate(RunState& rs, const Tensor& logits, Tensor& y, bool sky) const;

  DptHeadSpec spec_;
  std::optional<layers::LayerNorm> norm_;
  std::vector<layers::Conv2d> projects_;
  std::optional<layers::ConvTranspose2d> resize0_, resize1_;  // where stages 0-1 are not folded
  // Stages 0 and 1's transposed conv and layer_rn folded into one operator where that is on (resize_fold_on).
  std::optional<layers::ResizeConvFold> fold_[2];
  std::optional<layers::Conv2d> resize3_;
  std::optional<layers::Conv2d> layer_rn_[4];       // [0], [1] only where stages 0-1 are not folded
  std::vector<layers::FeatureFusionBlock> refine_;  // refinenet1..4 at [0..3]
  std::optional<layers::Conv2d> out1_, out2a_, out2b_, sky2a_, sky2b_;
  Tensor max_depth_;  // [1], for SigmoidMax
};

}  // namespace dacpp::models
