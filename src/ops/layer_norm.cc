#include "ops/layer_norm.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/elementwise.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

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

// layer_norm_drop_leading's operands: x [B, N, C] with 0 <= skip <= N, y [B, N − skip, C] not aliasing x, and
// layer_norm's checks on whole-shape stand-ins (x's rows past skip have y's shape). `op` names the call.
void check_drop_leading(const Context& ctx, const char* op, const Tensor& x, int64_t skip, const Tensor& gamma,
                        const Tensor& beta, float eps, const Tensor& y) {
  using namespace detail;
  DACPP_CHECK(x.rank() == 3 && skip >= 0 && skip <= x.dim(1), ErrorCode::InvalidArgument, op, ": ", label("x", x),
              " must be [B, N, C] with N >= skip (", skip, ")");
  check_shape(op, "y", y, {x.dim(0), x.dim(1) - skip, x.dim(2)});
  check_no_alias(op, "x", x, "y", y);
  check_layer_norm(ctx, op, x.offset_view(0, y.shape()), gamma, beta, eps, y);
}

}  // namespace

void layer_norm(Context& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y) {
  constexpr const char* op = "layer_norm";
  check_layer_norm(ctx, op, x, gamma, beta, eps, y);
  const OpScope scope(ctx, op, {&x});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::layer_norm(ctx.cpu(), x, gamma, beta, eps, y);
    case DeviceKind::Cuda:
      return cuda::layer_norm(ctx.cuda(), x, gamma, beta, eps, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void layer_norm_drop_leading(Context& ctx, const Tensor& x, int64_t skip, const Tensor& gamma, const Tensor& beta,
                             float eps, Tensor& y) {
  check_drop_leading(ctx, "layer_norm_drop_leading", x, skip, gamma, beta, eps, y);
  const int64_t b = x.dim(0), n = x.dim(1), kept = n - skip, c = x.dim(2);
  if (ctx.device().kind == DeviceKind::Cuda)
    return cuda::layer_norm_drop_leading(ctx.cuda(), x, skip, gamma, beta, eps, y);
  for (int64_t i = 0; i < b; ++i) {
    Tensor dst = y.offset_view(i * kept * c, {kept, c});
    layer_norm(ctx, x.offset_view((i * n + skip) * c, {kept, c}), gamma, beta, eps, dst);
  }
}

void add_scaled_layer_norm(Context& ctx, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                           const Tensor& beta, float eps, Tensor& y, const DropLeadingNorm* also) {
  using namespace detail;
  constexpr const char* op = "add_scaled_layer_norm";
  DACPP_CHECK(y.defined() || also != nullptr, ErrorCode::InvalidArgument, op, ": neither y nor a second norm given");
  DACPP_CHECK(a.defined() || !ls.defined(), ErrorCode::InvalidArgument, op, ": a LayerScale '", ls.name(),
              "' without a branch to scale");
  if (y.defined()) {
    check_layer_norm(ctx, op, x, gamma, beta, eps, y);
    check_no_alias(op, "x", x, "y", y);
    if (a.defined()) check_no_alias(op, "a", a, "y", y);
  }
  if (also) {
    check_drop_leading(ctx, "add_scaled_layer_norm (its second norm)", x, also->skip, also->gamma, also->beta,
                       also->eps, also->y);
    if (a.defined()) check_no_alias(op, "a", a, "y2", also->y);
    if (y.defined()) check_no_alias(op, "y", y, "y2", also->y);
  }
  const auto second = [&] {
    if (!also) return;
    Tensor y2 = also->y;
    layer_norm_drop_leading(ctx, x, also->skip, also->gamma, also->beta, also->eps, y2);
  };
  if (ctx.device().kind != DeviceKind::Cuda || x.dtype() != DType::F32) {
    if (a.defined()) add_scaled(ctx, x, a, ls, x);
    if (y.defined()) layer_norm(ctx, x, gamma, beta, eps, y);
    second();
    return;
  }
  if (a.defined()) {
    check_act(ctx, op, "a", a);
    check_shape(op, "a", a, x.shape());
  } else {
    check_input(ctx, op, "x", x);
  }
  if (ls.defined()) {
    check_input(ctx, op, "ls", ls);
    check_shape(op, "ls", ls, {x.dim(-1)});
  }
  if (!also) return cuda::add_scaled_layer_norm(ctx.cuda(), x, a, ls, gamma, beta, eps, y);
  Tensor y2 = also->y;
  cuda::add_scaled_layer_norm(ctx.cuda(), x, a, ls, gamma, beta, eps, y,
                              cuda::SecondNorm{&also->gamma, &also->beta, also->eps, also->skip, &y2});
}

}  // namespace dacpp::ops
