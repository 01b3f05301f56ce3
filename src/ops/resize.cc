#include "ops/resize.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "ops/op_checks.h"

namespace dacpp::ops {
namespace {

void check_resize(Context& ctx, const char* op, const Tensor& x, const Tensor& y) {
  using namespace detail;
  check_input(ctx, op, "x", x);
  check_input(ctx, op, "y", y);
  check_rank(op, "x", x, 4);
  check_rank(op, "y", y, 4);
  DACPP_CHECK(x.dim(0) == y.dim(0) && x.dim(1) == y.dim(1), ErrorCode::InvalidArgument, op, ": ", label("y", y),
              " has shape ", shape_str(y.shape()), " but ", label("x", x), " has shape ", shape_str(x.shape()),
              " (batch and channels must match)");
  DACPP_CHECK(y.numel() == 0 || (x.dim(2) > 0 && x.dim(3) > 0), ErrorCode::InvalidArgument, op, ": ",
              label("x", x), " has an empty spatial extent ", shape_str(x.shape()));
  check_no_alias(op, "y", y, "x", x);
}

}  // namespace

void resize_bilinear(Context& ctx, const Tensor& x, Tensor& y, bool align_corners) {
  constexpr const char* op = "resize_bilinear";
  check_resize(ctx, op, x, y);
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bilinear(ctx.cpu(), x, y, align_corners);
    case DeviceKind::Cuda:
      break;
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void resize_bicubic(Context& ctx, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w) {
  constexpr const char* op = "resize_bicubic";
  check_resize(ctx, op, x, y);
  DACPP_CHECK(std::isfinite(scale_h) && std::isfinite(scale_w) && scale_h >= 0 && scale_w >= 0,
              ErrorCode::InvalidArgument, op, ": scales (", scale_h, ", ", scale_w, ") must be finite and >= 0");
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bicubic(ctx.cpu(), x, y, align_corners, scale_h, scale_w);
    case DeviceKind::Cuda:
      break;
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
