#include "ops/op_checks.h"

namespace dacpp::ops::detail {

std::string label(const char* role, const Tensor& t) {
  if (t.name().empty()) return role;
  return str_cat(role, " '", t.name(), "'");
}

void check_resident(const Context& ctx, const char* op, const char* role, const Tensor& t) {
  DACPP_CHECK(t.defined(), ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " is undefined");
  DACPP_CHECK(t.device() == ctx.device(), ErrorCode::Backend, op, ": tensor ", label(role, t), " ",
              shape_str(t.shape()), " is on ", device_name(t.device()), " but the op runs on ",
              device_name(ctx.device()));
}

void check_input(const Context& ctx, const char* op, const char* role, const Tensor& t) {
  check_dtype(ctx, op, role, t, DType::F32);
}

bool act_dtype_allowed(const Device& device, DType dt) {
  if (device.kind == DeviceKind::Cpu) return dt == DType::F32;
  return dt == DType::F32 || dt == DType::BF16 || dt == DType::F16;
}

DType check_act(const Context& ctx, const char* op, const char* role, const Tensor& t) {
  check_resident(ctx, op, role, t);
  DACPP_CHECK(act_dtype_allowed(ctx.device(), t.dtype()), ErrorCode::InvalidArgument, op, ": tensor ",
              label(role, t), " has dtype ", dtype_name(t.dtype()), ", expected ",
              ctx.device().kind == DeviceKind::Cpu ? "f32" : "f32, bf16 or f16", " on ", device_name(ctx.device()));
  return t.dtype();
}

void check_dtype(const Context& ctx, const char* op, const char* role, const Tensor& t, DType want) {
  check_resident(ctx, op, role, t);
  DACPP_CHECK(t.dtype() == want, ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " has dtype ",
              dtype_name(t.dtype()), ", expected ", dtype_name(want));
}

void check_weight(const Context& ctx, const char* op, const char* role, const Tensor& t, DType act) {
  if (ctx.device().kind != DeviceKind::Cpu) return check_dtype(ctx, op, role, t, act);
  check_resident(ctx, op, role, t);
  DACPP_CHECK(t.dtype() == DType::F32 || t.dtype() == DType::BF16, ErrorCode::InvalidArgument, op, ": tensor ",
              label(role, t), " has dtype ", dtype_name(t.dtype()), ", expected f32 or bf16 on ",
              device_name(ctx.device()));
}

DType check_resize_pair(const Context& ctx, const char* op, const Tensor& x, const Tensor& y) {
  const DType dt = check_act(ctx, op, "x", x);
  check_dtype(ctx, op, "y", y, dt);
  check_rank(op, "x", x, 4);
  check_rank(op, "y", y, 4);
  DACPP_CHECK(x.dim(0) == y.dim(0) && x.dim(1) == y.dim(1), ErrorCode::InvalidArgument, op, ": ", label("y", y),
              " has shape ", shape_str(y.shape()), " but ", label("x", x), " has shape ", shape_str(x.shape()),
              " (batch and channels must match)");
  DACPP_CHECK(y.numel() == 0 || (x.dim(2) > 0 && x.dim(3) > 0), ErrorCode::InvalidArgument, op, ": ",
              label("x", x), " has an empty spatial extent ", shape_str(x.shape()));
  check_no_alias(op, "y", y, "x", x);
  return dt;
}

void check_rank(const char* op, const char* role, const Tensor& t, int rank) {
  DACPP_CHECK(t.rank() == rank, ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " has shape ",
              shape_str(t.shape()), ", expected rank ", rank);
}

void check_token_grid(const char* op, const char* role, const Tensor& t, int64_t h, int64_t w) {
  DACPP_CHECK(h >= 1 && w >= 1 && t.dim(1) == h * w, ErrorCode::InvalidArgument, op, ": ", label(role, t),
              " has shape ", shape_str(t.shape()), ", expected [N, ", h, "·", w, ", C]");
}

void check_min_rank(const char* op, const char* role, const Tensor& t, int rank) {
  DACPP_CHECK(t.rank() >= rank, ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " has shape ",
              shape_str(t.shape()), ", expected rank >= ", rank);
}

void check_shape(const char* op, const char* role, const Tensor& t, const Shape& want) {
  DACPP_CHECK(t.shape() == want, ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " has shape ",
              shape_str(t.shape()), ", expected ", shape_str(want));
}

void check_no_alias(const char* op, const char* role_a, const Tensor& a, const char* role_b, const Tensor& b) {
  DACPP_CHECK(a.numel() == 0 || b.numel() == 0 || a.raw() != b.raw(), ErrorCode::InvalidArgument, op, ": ",
              label(role_a, a), " may not alias ", label(role_b, b));
}

}  // namespace dacpp::ops::detail
