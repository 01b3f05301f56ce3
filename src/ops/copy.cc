#include "ops/copy.h"

#include <cstring>

#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {
namespace {

// t is defined and on the host or on ctx's device.
void check_host_or_device(const Context& ctx, const char* op, const char* role, const Tensor& t) {
  using namespace detail;
  DACPP_CHECK(t.defined(), ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " is undefined");
  DACPP_CHECK(t.device().is_cpu() || t.device() == ctx.device(), ErrorCode::Backend, op, ": tensor ",
              label(role, t), " ", shape_str(t.shape()), " is on ", device_name(t.device()),
              " but the op runs on ", device_name(ctx.device()), " (only cpu and ", device_name(ctx.device()),
              " are reachable)");
}

bool is_float_dtype(DType dt) { return dt == DType::F32 || dt == DType::BF16 || dt == DType::F16; }

}  // namespace

void copy(Context& ctx, const Tensor& src, Tensor& dst) {
  using namespace detail;
  constexpr const char* op = "copy";
  check_host_or_device(ctx, op, "src", src);
  check_host_or_device(ctx, op, "dst", dst);
  check_shape(op, "dst", dst, src.shape());
  DACPP_CHECK(dst.dtype() == src.dtype(), ErrorCode::InvalidArgument, op, ": ", label("dst", dst), " has dtype ",
              dtype_name(dst.dtype()), " but ", label("src", src), " has ", dtype_name(src.dtype()));
  check_no_alias(op, "dst", dst, "src", src);
  if (src.nbytes() == 0) return;
  if (src.device().is_cpu() && dst.device().is_cpu()) {
    std::memcpy(dst.raw(), src.raw(), src.nbytes());
    return;
  }
  const OpScope scope(ctx, op, {&src, &dst});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      break;  // unreachable: a non-host tensor was refused above
    case DeviceKind::Cuda:
      return cuda::copy(ctx.cuda(), src, dst);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void cast(Context& ctx, const Tensor& src, Tensor& dst) {
  using namespace detail;
  constexpr const char* op = "cast";
  check_resident(ctx, op, "src", src);
  check_resident(ctx, op, "dst", dst);
  check_shape(op, "dst", dst, src.shape());
  DACPP_CHECK(is_float_dtype(src.dtype()) && is_float_dtype(dst.dtype()), ErrorCode::InvalidArgument, op,
              ": cannot cast ", label("src", src), " (", dtype_name(src.dtype()), ") to ", label("dst", dst), " (",
              dtype_name(dst.dtype()), "): f32, bf16 and f16 only");
  check_no_alias(op, "dst", dst, "src", src);
  const OpScope scope(ctx, op, {&src, &dst});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      DACPP_CHECK(src.dtype() == DType::F32 && dst.dtype() == DType::F32, ErrorCode::Unsupported, op,
                  ": cast from ", dtype_name(src.dtype()), " to ", dtype_name(dst.dtype()),
                  " is not supported on cpu (f32 only)");
      if (src.nbytes() > 0) std::memcpy(dst.raw(), src.raw(), src.nbytes());
      return;
    case DeviceKind::Cuda:
      return cuda::cast(ctx.cuda(), src, dst);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
