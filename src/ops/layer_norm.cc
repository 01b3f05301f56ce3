#include "ops/layer_norm.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/elementwise.h"
#include "ops/op_checks.h"

namespace dacpp::ops {

namespace {

void check_layer_norm(const Context& ctx, const char* op, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                      float eps, const Tensor& y) {
  using namespace detail;
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
}

}  // namespace

void layer_norm(Context& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y) {
  constexpr const char* op = "layer_norm";
  check_layer_norm(ctx, op, x, gamma, beta, eps, y);
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::layer_norm(ctx.cpu(), x, gamma, beta, eps, y);
    case DeviceKind::Cuda:
      return cuda::layer_norm(ctx.cuda(), x, gamma, beta, eps, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void add_scaled_layer_norm(Context& ctx, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                           const Tensor& beta, float eps, Tensor& y) {
  using namespace detail;
  constexpr const char* op = "add_scaled_layer_norm";
  check_layer_norm(ctx, op, x, gamma, beta, eps, y);
  check_no_alias(op, "x", x, "y", y);
  check_no_alias(op, "a", a, "y", y);
  if (ctx.device().kind != DeviceKind::Cuda || x.dtype() != DType::F32) {
    add_scaled(ctx, x, a, ls, x);
    layer_norm(ctx, x, gamma, beta, eps, y);
    return;
  }
  check_act(ctx, op, "a", a);
  check_shape(op, "a", a, x.shape());
  if (ls.defined()) {
    check_input(ctx, op, "ls", ls);
    check_shape(op, "ls", ls, {x.dim(-1)});
  }
  cuda::add_scaled_layer_norm(ctx.cuda(), x, a, ls, gamma, beta, eps, y);
}

}  // namespace dacpp::ops
