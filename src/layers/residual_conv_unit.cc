#include "layers/residual_conv_unit.h"

#include "ops/conv2d.h"
#include "ops/elementwise.h"

namespace dacpp::layers {
namespace {

ConvSpec conv3x3(int64_t f) {
  ConvSpec s;
  s.in = s.out = f;
  s.kernel = 3;
  s.pad = 1;
  return s;
}

}  // namespace

ResidualConvUnit::ResidualConvUnit(const ModelFile& mf, const std::string& prefix, int64_t features)
    : conv1_(mf, prefix + ".c1", conv3x3(features)), conv2_(mf, prefix + ".c2", conv3x3(features)) {}

Tensor ResidualConvUnit::forward(Exec& ex, const Tensor& x) const {
  // x: [N, F, H, W]
  Tensor y = ex.alloc(x.shape(), "rcu.out");
  {
    ArenaScope scope(ex.arena);
    Tensor h = ex.alloc(x.shape(), "rcu.mid");
    // y = conv2(relu(conv1(relu(x)))) + x: the residual added by the op.
    ops::residual_conv_pair(ex.ctx, x, conv1_.weight(), conv1_.bias(), conv2_.weight(), conv2_.bias(), h, y, x);
  }
  return y;
}

}  // namespace dacpp::layers
