#include "ops/transfer.h"

#include "backends/cuda/cuda_ops.h"
#include "ops/copy.h"

namespace dacpp::ops {

Tensor to_host_f32(Context& ctx, const Tensor& t) {
  if (!t.defined() || (t.device().is_cpu() && t.dtype() == DType::F32)) return t;
  DACPP_CHECK(t.dtype() == DType::F32 || t.dtype() == DType::BF16 || t.dtype() == DType::F16,
              ErrorCode::InvalidArgument, "to_host_f32: tensor '", t.name(), "' has dtype ", dtype_name(t.dtype()));
  DACPP_CHECK(t.dtype() == DType::F32 || !t.device().is_cpu(), ErrorCode::Unsupported, "to_host_f32: host tensor '",
              t.name(), "' is ", dtype_name(t.dtype()));
  const Tensor f32 = to_dtype(ctx, t, DType::F32);
  Tensor host = Tensor::empty(t.shape(), DType::F32, t.name());
  copy(ctx, f32, host);
  return host;
}

Tensor empty(Context& ctx, const Shape& shape, DType dtype, const std::string& name) {
  if (ctx.device().is_cpu()) return Tensor::empty(shape, dtype, name);
  return cuda::empty(ctx.cuda(), shape, dtype, name);
}

Tensor to_dtype(Context& ctx, const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = empty(ctx, t.shape(), dtype, t.name());
  cast(ctx, t, out);
  return out;
}

Tensor to_act_dtype(Context& ctx, const Tensor& t) { return to_dtype(ctx, t, ctx.act_dtype()); }

}  // namespace dacpp::ops
