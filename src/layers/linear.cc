#include "layers/linear.h"

#include <optional>
#include <utility>

#include "ops/linear.h"

namespace dacpp::layers {

Linear::Linear(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, Bias bias,
               WeightPrecision precision)
    : in_(in), out_(out), precision_(precision), b_(fetch_bias(mf, prefix, out, bias)) {
  // A CPU model in bf16 (the host placement): the weight rounded to bf16 straight into the layout oneDNN's matmul
  // reads, from its f32 pages, which are then given back; no plain bf16 copy is made.
  if (precision == WeightPrecision::Model && mf.placement() != nullptr && mf.placement()->on_host()) {
    const Tensor host = mf.host_f32(weight_name(prefix), {out, in});
    if (std::optional<ops::LinearWeight> packed = ops::pack_linear_weight(host, DType::BF16)) {
      w_ = std::move(*packed);
      mf.release_pages(host);
      return;
    }
  }
  w_ = ops::LinearWeight(precision == WeightPrecision::F32 ? fetch_keep_f32(mf, weight_name(prefix), {out, in})
                                                           : fetch(mf, weight_name(prefix), {out, in}));
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
