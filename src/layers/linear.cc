#include "layers/linear.h"

#include "ops/linear.h"

namespace dacpp::layers {

Linear::Linear(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, Bias bias,
               WeightPrecision precision)
    : in_(in), out_(out), precision_(precision), b_(fetch_bias(mf, prefix, out, bias)) {
  const Tensor w = precision == WeightPrecision::F32 ? fetch_keep_f32(mf, weight_name(prefix), {out, in})
                                                     : fetch(mf, weight_name(prefix), {out, in});
  w_ = ops::prepare_linear_weight(w);
  // Packed, the plain weight is no longer read: a bf16 copy is freed with `w`, mapped f32 pages are given back.
  if (w_.packed() != nullptr) mf.release_pages(w);
}

Tensor Linear::forward(Exec& ex, const Tensor& x, ops::Activation act) const {
  // x: [..., in] → y: [..., out]
  Shape s = x.shape();
  DACPP_CHECK(!s.empty(), ErrorCode::InvalidArgument, "linear '", w_.name(), "': input '", x.name(),
              "' is a scalar");
  s.back() = out_;
  Tensor y = precision_ == WeightPrecision::F32 ? ex.alloc_f32(s, "linear.out") : ex.alloc(s, "linear.out");
  forward_into(ex, x, y, act);
  return y;
}

void Linear::forward_into(Exec& ex, const Tensor& x, Tensor& y, ops::Activation act) const {
  ops::linear(ex.ctx, x, w_, b_, y, act);
}

}  // namespace dacpp::layers
