// FeatureFusionBlock (DPT refinenet; model/dpt.py, DA2 util/blocks.py), no BatchNorm, expand=False:
//   y = top [+ rcu1(lateral)];  y = rcu2(y);  y = bilinear(y, size or ×2, align_corners=True);  y = out_conv(y)
// out_conv is 1×1 F → F with bias. Both it and the upsample are linear per pixel and the bilinear weights sum to 1,
// so out_conv runs first, on the smaller map, and its bias is added with the upsample (equal up to rounding). Weights
// under the refinenet prefix (e.g. head_rn("head", 3, false, "") without the trailing leaf): "<p>.rc1.*" (when
// `lateral_unit`), "<p>.rc2.*", "<p>.out.*".
#pragma once

#include <optional>
#include <string>

#include "layers/conv2d.h"
#include "layers/residual_conv_unit.h"

namespace dacpp::layers {

class FeatureFusionBlock {
 public:
  // rc1_name / rc2_name / out_name: full name prefixes of the two residual units and the 1×1 conv.
  // lateral_unit: whether rc1 exists and is applied to the lateral input (false for DA3 refinenet4; DA2
  // refinenet4 has rc1 weights that upstream never uses: build with lateral_unit=false and they are ignored).
  FeatureFusionBlock(const ModelFile& mf, const std::string& rc1_name, const std::string& rc2_name,
                     const std::string& out_name, int64_t features, bool lateral_unit);

  // top: [N, F, h, w]; lateral: [N, F, h, w] or undefined; out_h/out_w: the upsampled size (0 = ×2).
  // Returns a new [N, F, out_h, out_w] activation. lateral_done: `lateral` is lateral_unit()'s result already
  // (the block then adds top into it in place).
  Tensor forward(Exec& ex, const Tensor& top, const Tensor& lateral, int64_t out_h = 0, int64_t out_w = 0,
                 bool lateral_done = false) const;
  // The same block without its final upsample: a new [N, F, h, w] activation whose bilinear (align_corners)
  // resampling to the wanted size is forward()'s result, for a consumer that upsamples on the fly
  // (ops::conv2d_upsampled).
  Tensor forward_unresized(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done = false) const;
  // The block before its out_conv (no upsample either): a new [N, F, h, w] activation whose out_conv() then bilinear
  // resampling is forward()'s result, for a consumer that applies the 1×1 conv itself (folded into its own
  // weights: ops::conv2d_upsampled with an ops::Pointwise). The lateral unit's output, when made here, stays
  // allocated until the caller's arena scope ends.
  Tensor forward_units(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done = false) const;
  const Conv2d& out_conv() const { return out_conv_; }
  // forward() in two steps, for a chain that merges the next block's lateral branch into this block's upsample (that
  // block then takes no lateral input): mix() runs the units and out_conv without its bias → a new [N, F, h, w]
  // activation; upsample_into() resamples it bilinearly (align_corners) to y's size and adds out_conv's bias and,
  // with `accumulate`, y's own values (the next block's rcu1 output), in one pass (ops::resize_bilinear_add).
  Tensor mix(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done = false) const;
  void upsample_into(Exec& ex, const Tensor& mixed, Tensor& y, bool accumulate) const;
  // rcu1(lateral) alone (needs has_lateral_unit()): a new [N, F, h, w] activation, for a caller that runs the
  // lateral branch apart from the top path (on another lane, ops::Lanes) and passes it on with lateral_done.
  Tensor lateral_unit(Exec& ex, const Tensor& lateral) const;

  bool has_lateral_unit() const { return rcu1_.has_value(); }

 private:
  void check_top(const Tensor& top) const;
  // The residual units: rcu2(top + rcu1(lateral)) (rcu2(top) without a lateral input), before out_conv.
  Tensor units(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done) const;

  std::optional<ResidualConvUnit> rcu1_;
  ResidualConvUnit rcu2_;
  Conv2d out_conv_;
  int64_t features_;
};

}  // namespace dacpp::layers
