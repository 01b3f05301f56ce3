#include "ops/resize_rows.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

void resize_bilinear_rows(Context& ctx, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners) {
  using namespace detail;
  constexpr const char* op = "resize_bilinear_rows";
  check_resize_pair(ctx, op, x, y);
  DACPP_CHECK(row0 >= 0 && full_h >= 0 && row0 <= full_h && y.dim(2) <= full_h - row0, ErrorCode::InvalidArgument, op, ": band rows [",
              row0, ", ", row0 + y.dim(2), ") of ", label("y", y), " fall outside the full height ", full_h);
  const OpScope scope(ctx, op, {&x, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::resize_bilinear_rows(ctx.cpu(), x, y, row0, full_h, align_corners);
    case DeviceKind::Cuda:
      return cuda::resize_bilinear_rows(ctx.cuda(), x, y, row0, full_h, align_corners);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
