#include "layers/mlp.h"

namespace dacpp::layers {

Mlp::Mlp(const ModelFile& mf, const std::string& fc1_prefix, const std::string& fc2_prefix, int64_t dim,
         int64_t hidden)
    : fc1_(mf, fc1_prefix, dim, hidden), fc2_(mf, fc2_prefix, hidden, dim) {}

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

}  // namespace dacpp::layers
