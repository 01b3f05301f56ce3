#include "ops/resize.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"

namespace dacpp::ops {

void resize_bilinear(Context& ctx, const Tensor& x, Tensor& y, bool align_corners) {
  constexpr const char* op = "resize_bilinear";
  detail::check_resize_pair(ctx, op, x, y);
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bilinear(ctx.cpu(), x, y, align_corners);
    case DeviceKind::Cuda:
      return cuda::resize_bilinear(ctx.cuda(), x, y, align_corners);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void resize_bicubic(Context& ctx, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w) {
  constexpr const char* op = "resize_bicubic";
  detail::check_resize_pair(ctx, op, x, y);
  DACPP_CHECK(std::isfinite(scale_h) && std::isfinite(scale_w) && scale_h >= 0 && scale_w >= 0,
              ErrorCode::InvalidArgument, op, ": scales (", scale_h, ", ", scale_w, ") must be finite and >= 0");
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bicubic(ctx.cpu(), x, y, align_corners, scale_h, scale_w);
    case DeviceKind::Cuda:
      return cuda::resize_bicubic(ctx.cuda(), x, y, align_corners, scale_h, scale_w);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void add_upsampled(Context& ctx, const Tensor& x, const Tensor& bias, const Tensor& b, Tensor& y) {
  constexpr const char* op = "add_upsampled";
  const DType dt = detail::check_resize_pair(ctx, op, x, y);
  detail::check_dtype(ctx, op, "b", b, dt);
  DACPP_CHECK(b.shape() == y.shape(), ErrorCode::InvalidArgument, op, ": ", detail::label("y", y), " has shape ",
              shape_str(y.shape()), " but ", detail::label("b", b), " has shape ", shape_str(b.shape()));
  if (bias.defined()) {
    detail::check_dtype(ctx, op, "bias", bias, DType::F32);
    DACPP_CHECK(bias.rank() == 1 && bias.dim(0) == x.dim(1), ErrorCode::InvalidArgument, op, ": ",
                detail::label("bias", bias), " has shape ", shape_str(bias.shape()), ", expected [", x.dim(1), "]");
  }
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::add_upsampled(ctx.cpu(), x, bias, b, y);
    case DeviceKind::Cuda:
      return cuda::add_upsampled(ctx.cuda(), x, bias, b, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
