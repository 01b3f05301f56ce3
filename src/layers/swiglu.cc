#include "layers/swiglu.h"

#include "ops/elementwise.h"
#include "ops/permute.h"

namespace dacpp::layers {

SwiGlu::SwiGlu(const ModelFile& mf, const std::string& w12_prefix, const std::string& w3_prefix, int64_t dim,
               int64_t hidden, const Tensor& out_scale)
    : w12_(mf, w12_prefix, dim, 2 * hidden), w3_(mf, w3_prefix, hidden, dim, Bias::Required, out_scale) {}

Tensor SwiGlu::forward(Exec& ex, const Tensor& x) const {
  const int64_t m = rows(x), c = w12_.in_features();
  Tensor y = ex.alloc(x.shape(), "swiglu.out");
  ArenaScope scope(ex.arena);
  Tensor y2 = y.reshape({m, c});
  w3_.forward_into(ex, gated(ex, x.reshape({m, c})), y2);
  return y;
}

void SwiGlu::forward_add(Exec& ex, const Tensor& x, Tensor& stream) const {
  const int64_t m = rows(x), c = w12_.in_features();
  ArenaScope scope(ex.arena);
  Tensor s2 = stream.reshape({m, c});
  w3_.add_into(ex, gated(ex, x.reshape({m, c})), s2);
}

int64_t SwiGlu::rows(const Tensor& x) const {
  const int64_t c = w12_.in_features();
  DACPP_CHECK(x.rank() >= 1 && x.dim(-1) == c, ErrorCode::InvalidArgument, "swiglu: input '", x.name(),
              "' has shape ", shape_str(x.shape()), ", expected [..., ", c, "]");
  return x.numel() / c;
}

Tensor SwiGlu::gated(Exec& ex, const Tensor& x2) const {
  // x2: [M, C] → x12: [M, 2, h] → halves [2, M, h] → silu(a)·b: [M, h]
  const int64_t m = x2.dim(0), h = w3_.in_features();
  Tensor x12 = w12_.forward(ex, x2);
  Tensor halves = ex.alloc({2, m, h}, "swiglu.halves");
  ops::permute(ex.ctx, x12.reshape({m, 2, h}), {1, 0, 2}, halves);
  Tensor a = halves.slice0(0, 1).reshape({m, h});
  Tensor b = halves.slice0(1, 2).reshape({m, h});
  ops::unary(ex.ctx, ops::Unary::Silu, a, a);
  ops::mul(ex.ctx, a, b, a);
  return a;
}

}  // namespace dacpp::layers
