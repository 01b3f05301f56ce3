#include "ops/layer_norm.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"

namespace dacpp::ops {

void layer_norm(Context& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y) {
  using namespace detail;
  constexpr const char* op = "layer_norm";
  const DType dt = check_act(ctx, op, "x", x);
  check_input(ctx, op, "gamma", gamma);
  check_input(ctx, op, "beta", beta);
  const DType yt = check_act(ctx, op, "y", y);
  if (yt != dt) check_no_alias(op, "x", x, "y", y);
  check_min_rank(op, "x", x, 1);
  const int64_t c = x.dim(-1);
  check_shape(op, "gamma", gamma, {c});
  check_shape(op, "beta", beta, {c});
  check_shape(op, "y", y, x.shape());
  DACPP_CHECK(std::isfinite(eps) && eps >= 0.f, ErrorCode::InvalidArgument, op, ": eps ", eps,
              " must be finite and >= 0");
  DACPP_CHECK(c > 0 || x.numel() == 0, ErrorCode::InvalidArgument, op, ": normalized dim of ", label("x", x),
              " is 0");
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::layer_norm(ctx.cpu(), x, gamma, beta, eps, y);
    case DeviceKind::Cuda:
      return cuda::layer_norm(ctx.cuda(), x, gamma, beta, eps, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
