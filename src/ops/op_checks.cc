#include "ops/op_checks.h"

namespace dacpp::ops::detail {

std::string label(const char* role, const Tensor& t) {
  if (t.name().empty()) return role;
  return str_cat(role, " '", t.name(), "'");
}

void check_input(const Context& ctx, const char* op, const char* role, const Tensor& t) {
  DACPP_CHECK(t.defined(), ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " is undefined");
  DACPP_CHECK(t.device() == ctx.device(), ErrorCode::Backend, op, ": tensor ", label(role, t), " ",
              shape_str(t.shape()), " is on ", device_name(t.device()), " but the op runs on ",
              device_name(ctx.device()));
  DACPP_CHECK(t.dtype() == DType::F32, ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " has dtype ",
              dtype_name(t.dtype()), ", expected f32");
}

void check_rank(const char* op, const char* role, const Tensor& t, int rank) {
  DACPP_CHECK(t.rank() == rank, ErrorCode::InvalidArgument, op, ": tensor ", label(role, t), " has shape ",
              shape_str(t.shape()), ", expected rank ", rank);
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
