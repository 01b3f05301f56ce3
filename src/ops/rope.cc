#include "ops/rope.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

void rope2d(Context& ctx, Tensor& x, const Tensor& positions, float base) {
  using namespace detail;
  constexpr const char* op = "rope2d";
  check_act(ctx, op, "x", x);
  check_dtype(ctx, op, "positions", positions, DType::I32);
  check_rank(op, "x", x, 4);
  DACPP_CHECK(x.dim(3) % 4 == 0, ErrorCode::InvalidArgument, op, ": head dim ", x.dim(3), " of ", label("x", x),
              " ", shape_str(x.shape()), " is not a multiple of 4");
  check_shape(op, "positions", positions, {x.dim(2), 2});
  DACPP_CHECK(std::isfinite(base) && base > 0.f, ErrorCode::InvalidArgument, op, ": base ", base,
              " must be finite and > 0");
  const OpScope scope(ctx, op, {&x});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::rope2d(ctx.cpu(), x, positions, base);
    case DeviceKind::Cuda:
      return cuda::rope2d(ctx.cuda(), x, positions, base);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
