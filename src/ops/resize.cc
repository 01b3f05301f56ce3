#include "ops/resize.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/elementwise.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

void resize_bilinear(Context& ctx, const Tensor& x, Tensor& y, bool align_corners) {
  constexpr const char* op = "resize_bilinear";
  detail::check_resize_pair(ctx, op, x, y);
  const OpScope scope(ctx, op, {&x, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bilinear(ctx.cpu(), x, y, align_corners);
    case DeviceKind::Cuda:
      return cuda::resize_bilinear(ctx.cuda(), x, y, align_corners);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void resize_bilinear_add(Context& ctx, const Tensor& x, const Tensor& bias, Tensor& y, bool align_corners,
                         bool accumulate) {
  constexpr const char* op = "resize_bilinear_add";
  detail::check_resize_pair(ctx, op, x, y);
  if (bias.defined()) {
    detail::check_input(ctx, op, "bias", bias);
    detail::check_shape(op, "bias", bias, {y.dim(1)});
  }
  if (y.numel() == 0) return;
  const OpScope scope(ctx, op, {&x, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu: {
      Tensor up = accumulate ? Tensor::empty(y.shape(), y.dtype(), "resize_bilinear_add.up") : y;
      cpu::resize_bilinear(ctx.cpu(), x, up, align_corners);
      if (bias.defined()) add(ctx, up, bias.reshape({1, y.dim(1), 1, 1}), up);
      if (accumulate) add(ctx, y, up, y);
      return;
    }
    case DeviceKind::Cuda:
      return cuda::resize_bilinear(ctx.cuda(), x, y, align_corners,
                                   bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr, accumulate);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void resize_bicubic(Context& ctx, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w) {
  constexpr const char* op = "resize_bicubic";
  detail::check_resize_pair(ctx, op, x, y);
  DACPP_CHECK(std::isfinite(scale_h) && std::isfinite(scale_w) && scale_h >= 0 && scale_w >= 0,
              ErrorCode::InvalidArgument, op, ": scales (", scale_h, ", ", scale_w, ") must be finite and >= 0");
  const OpScope scope(ctx, op, {&x, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bicubic(ctx.cpu(), x, y, align_corners, scale_h, scale_w);
    case DeviceKind::Cuda:
      return cuda::resize_bicubic(ctx.cuda(), x, y, align_corners, scale_h, scale_w);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
