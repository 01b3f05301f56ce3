#include "layers/layer_norm.h"

#include "layers/weights.h"
#include "ops/layer_norm.h"

namespace dacpp::layers {

LayerNorm::LayerNorm(const ModelFile& mf, const std::string& prefix, int64_t dim, float eps)
    : dim_(dim),
      eps_(eps),
      gamma_(fetch(mf, weight_name(prefix), {dim})),
      beta_(fetch(mf, bias_name(prefix), {dim})) {}

Tensor LayerNorm::forward(Exec& ex, const Tensor& x) const {
  // x: [..., dim]
  Tensor y = ex.alloc(x.shape(), "layer_norm.out");
  forward_into(ex, x, y);
  return y;
}

void LayerNorm::forward_into(Exec& ex, const Tensor& x, Tensor& y) const {
  ops::layer_norm(ex.ctx, x, gamma_, beta_, eps_, y);
}

void LayerNorm::forward_drop_leading_into(Exec& ex, const Tensor& x, int64_t skip, Tensor& y) const {
  ops::layer_norm_drop_leading(ex.ctx, x, skip, gamma_, beta_, eps_, y);
}

void LayerNorm::add_scaled_forward_into(Exec& ex, Tensor& x, const Tensor& a, const Tensor& ls, Tensor& y,
                                        const ops::DropLeadingNorm* also) const {
  ops::add_scaled_layer_norm(ex.ctx, x, a, ls, gamma_, beta_, eps_, y, also);
}

void LayerNorm::stream_forward_into(Exec& ex, Tensor& x, Tensor& y, const ops::DropLeadingNorm* also) const {
  ops::add_scaled_layer_norm(ex.ctx, x, Tensor(), Tensor(), gamma_, beta_, eps_, y, also);
}

ops::DropLeadingNorm LayerNorm::drop_leading(int64_t skip, const Tensor& out) const {
  return ops::DropLeadingNorm{gamma_, beta_, eps_, skip, out};
}

}  // namespace dacpp::layers
