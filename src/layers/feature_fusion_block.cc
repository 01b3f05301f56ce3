#include "layers/feature_fusion_block.h"

#include "ops/conv2d.h"
#include "ops/elementwise.h"
#include "ops/resize.h"

namespace dacpp::layers {
namespace {

ConvSpec conv1x1(int64_t f) {
  ConvSpec s;
  s.in = s.out = f;
  return s;
}

}  // namespace

FeatureFusionBlock::FeatureFusionBlock(const ModelFile& mf, const std::string& rc1_name, const std::string& rc2_name,
                                       const std::string& out_name, int64_t features, bool lateral_unit)
    : rcu2_(mf, rc2_name, features), out_conv_(mf, out_name, conv1x1(features)), features_(features) {
  if (lateral_unit) rcu1_.emplace(mf, rc1_name, features);
}

Tensor FeatureFusionBlock::forward(Exec& ex, const Tensor& top, const Tensor& lateral, int64_t out_h, int64_t out_w,
                                   bool lateral_done) const {
  // top, lateral: [N, F, h, w] → y: [N, F, out_h, out_w]
  check_top(top);
  if (out_h <= 0 || out_w <= 0) {
    out_h = 2 * top.dim(2);
    out_w = 2 * top.dim(3);
  }
  Tensor y = ex.alloc({top.dim(0), features_, out_h, out_w}, "fusion.out");
  ArenaScope scope(ex.arena);
  upsample_into(ex, mix(ex, top, lateral, lateral_done), y, /*accumulate=*/false);
  return y;
}

Tensor FeatureFusionBlock::mix(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done) const {
  check_top(top);
  Tensor c = ex.alloc(top.shape(), "fusion.mixed");
  ArenaScope scope(ex.arena);
  ops::conv2d(ex.ctx, units(ex, top, lateral, lateral_done), out_conv_.weight(), Tensor(), c);
  return c;
}

void FeatureFusionBlock::upsample_into(Exec& ex, const Tensor& mixed, Tensor& y, bool accumulate) const {
  check_top(mixed);
  ops::resize_bilinear_add(ex.ctx, mixed, out_conv_.bias(), y, /*align_corners=*/true, accumulate);
}

Tensor FeatureFusionBlock::forward_unresized(Exec& ex, const Tensor& top, const Tensor& lateral,
                                             bool lateral_done) const {
  check_top(top);
  Tensor y = ex.alloc(top.shape(), "fusion.out_unresized");
  ArenaScope scope(ex.arena);
  out_conv_.forward_into(ex, units(ex, top, lateral, lateral_done), y);
  return y;
}

Tensor FeatureFusionBlock::forward_units(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done) const {
  check_top(top);
  return units(ex, top, lateral, lateral_done);
}

void FeatureFusionBlock::check_top(const Tensor& top) const {
  DACPP_CHECK(top.rank() == 4 && top.dim(1) == features_, ErrorCode::InvalidArgument, "fusion block: input '",
              top.name(), "' has shape ", shape_str(top.shape()), ", expected [N, ", features_, ", h, w]");
}

Tensor FeatureFusionBlock::lateral_unit(Exec& ex, const Tensor& lateral) const {
  DACPP_CHECK(rcu1_.has_value(), ErrorCode::Internal, "fusion block: no lateral unit to run on '", lateral.name(), "'");
  return rcu1_->forward(ex, lateral);
}

Tensor FeatureFusionBlock::units(Exec& ex, const Tensor& top, const Tensor& lateral, bool lateral_done) const {
  Tensor merged = top;
  if (rcu1_ && lateral.defined()) {
    DACPP_CHECK(lateral.shape() == top.shape(), ErrorCode::InvalidArgument, "fusion block: lateral ",
                shape_str(lateral.shape()), " does not match top ", shape_str(top.shape()));
    merged = lateral_done ? lateral : rcu1_->forward(ex, lateral);
    ops::add(ex.ctx, merged, top, merged);
  }
  return rcu2_.forward(ex, merged);
}

}  // namespace dacpp::layers
