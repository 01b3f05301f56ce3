#include "layers/mlp.h"

namespace dacpp::layers {

Mlp::Mlp(const ModelFile& mf, const std::string& fc1_prefix, const std::string& fc2_prefix, int64_t dim, int64_t hidden,
         const Tensor& out_scale)
    : fc1_(mf, fc1_prefix, dim, hidden), fc2_(mf, fc2_prefix, hidden, dim, Bias::Required, out_scale) {}

Tensor Mlp::forward(Exec& ex, const Tensor& x) const {
  // x: [..., C] → h: [..., hidden] → y: [..., C]
  Shape s = x.shape();
  s.back() = fc2_.out_features();
  Tensor y = ex.alloc(s, "mlp.out");
  ArenaScope scope(ex.arena);
  Tensor h = fc1_.forward(ex, x, ops::Activation::Gelu);
  fc2_.forward_into(ex, h, y);
  return y;
}

void Mlp::forward_add(Exec& ex, const Tensor& x, Tensor& stream) const {
  ArenaScope scope(ex.arena);
  fc2_.add_into(ex, fc1_.forward(ex, x, ops::Activation::Gelu), stream);
}

}  // namespace dacpp::layers
