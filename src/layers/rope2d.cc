#include "layers/rope2d.h"

#include <algorithm>

#include "ops/copy.h"
#include "ops/rope.h"
#include "ops/transfer.h"

namespace dacpp::layers {

Tensor upload_positions(ops::Context& ctx, const std::vector<int32_t>& pos_yx) {
  DACPP_CHECK(pos_yx.size() % 2 == 0, ErrorCode::InvalidArgument, "rope2d: ", pos_yx.size(),
              " position values is not a whole number of (row, column) pairs");
  const int64_t n = static_cast<int64_t>(pos_yx.size() / 2);
  Tensor host = Tensor::empty({n, 2}, DType::I32, "rope.positions");
  std::copy(pos_yx.begin(), pos_yx.end(), host.data<int32_t>());
  if (ctx.device().is_cpu()) return host;
  Tensor dev = ops::empty(ctx, {n, 2}, DType::I32, "rope.positions");
  ops::copy(ctx, host, dev);
  return dev;
}

void Rope2d::apply(Exec& ex, Tensor& x, const Tensor& positions) const {
  ops::rope2d(ex.ctx, x, positions, base_);
}

void Rope2d::apply(Exec& ex, Tensor& x, const std::vector<int32_t>& pos_yx) const {
  DACPP_CHECK(x.rank() == 4 && static_cast<int64_t>(pos_yx.size()) == 2 * x.dim(2), ErrorCode::InvalidArgument,
              "rope2d: ", pos_yx.size(), " position values for '", x.name(), "' of shape ", shape_str(x.shape()),
              " (expected 2 per token of [B, H, N, D])");
  apply(ex, x, upload_positions(ex.ctx, pos_yx));
}

}  // namespace dacpp::layers
