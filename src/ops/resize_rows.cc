#include "ops/resize_rows.h"

#include "backends/cpu/cpu_ops.h"
#include "ops/op_checks.h"

namespace dacpp::ops {

void resize_bilinear_rows(Context& ctx, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners) {
  using namespace detail;
  constexpr const char* op = "resize_bilinear_rows";
  check_input(ctx, op, "x", x);
  check_input(ctx, op, "y", y);
  check_rank(op, "x", x, 4);
  check_rank(op, "y", y, 4);
  DACPP_CHECK(x.dim(0) == y.dim(0) && x.dim(1) == y.dim(1), ErrorCode::InvalidArgument, op, ": ", label("y", y),
              " has shape ", shape_str(y.shape()), " but ", label("x", x), " has shape ", shape_str(x.shape()),
              " (batch and channels must match)");
  DACPP_CHECK(row0 >= 0 && full_h >= 0 && row0 + y.dim(2) <= full_h, ErrorCode::InvalidArgument, op, ": band rows [",
              row0, ", ", row0 + y.dim(2), ") of ", label("y", y), " fall outside the full height ", full_h);
  DACPP_CHECK(y.numel() == 0 || (x.dim(2) > 0 && x.dim(3) > 0), ErrorCode::InvalidArgument, op, ": ",
              label("x", x), " has an empty spatial extent ", shape_str(x.shape()));
  check_no_alias(op, "y", y, "x", x);
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bilinear_rows(ctx.cpu(), x, y, row0, full_h, align_corners);
    case DeviceKind::Cuda:
      break;
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
