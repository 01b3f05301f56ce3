#include "layers/swiglu.h"

#include "ops/elementwise.h"
#include "ops/permute.h"

namespace dacpp::layers {

SwiGlu::SwiGlu(const ModelFile& mf, const std::string& w12_prefix, const std::string& w3_prefix, int64_t dim,
               int64_t hidden)
    : w12_(mf, w12_prefix, dim, 2 * hidden), w3_(mf, w3_prefix, hidden, dim) {}

Tensor SwiGlu::forward(Exec& ex, const Tensor& x) const {
  // x: [..., C] → x12: [M, 2, h] → halves [2, M, h] → silu(a)·b: [M, h] → y: [..., C]
  const int64_t c = w12_.in_features();
  const int64_t h = w3_.in_features();
  DACPP_CHECK(x.rank() >= 1 && x.dim(-1) == c, ErrorCode::InvalidArgument, "swiglu: input '", x.name(),
              "' has shape ", shape_str(x.shape()), ", expected [..., ", c, "]");
  const int64_t m = x.numel() / c;
  Shape s = x.shape();
  Tensor y = ex.alloc(s, "swiglu.out");
  ArenaScope scope(ex.arena);
  Tensor x12 = w12_.forward(ex, x.reshape({m, c}));
  Tensor halves = ex.alloc({2, m, h}, "swiglu.halves");
  ops::permute(ex.ctx, x12.reshape({m, 2, h}), {1, 0, 2}, halves);
  Tensor a = halves.slice0(0, 1).reshape({m, h});
  Tensor b = halves.slice0(1, 2).reshape({m, h});
  ops::unary(ex.ctx, ops::Unary::Silu, a, a);
  ops::mul(ex.ctx, a, b, a);
  Tensor y2 = y.reshape({m, c});
  w3_.forward_into(ex, a, y2);
  return y;
}

}  // namespace dacpp::layers
