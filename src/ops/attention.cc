#include "ops/attention.h"

#include <cmath>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

void attention(Context& ctx, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out) {
  using namespace detail;
  constexpr const char* op = "attention";
  const DType dt = check_act(ctx, op, "q", q);
  check_dtype(ctx, op, "k", k, dt);
  check_dtype(ctx, op, "v", v, dt);
  check_dtype(ctx, op, "out", out, dt);
  check_rank(op, "q", q, 4);
  check_rank(op, "k", k, 4);
  const int64_t b = q.dim(0), h = q.dim(1), nq = q.dim(2), d = q.dim(3);
  DACPP_CHECK(k.dim(0) == b && k.dim(1) == h && k.dim(3) == d, ErrorCode::InvalidArgument, op, ": tensor ",
              label("k", k), " has shape ", shape_str(k.shape()), " but ", label("q", q), " has shape ",
              shape_str(q.shape()), " (batch, heads and head dim must match)");
  check_shape(op, "v", v, k.shape());
  check_shape(op, "out", out, {b, nq, h, d});
  DACPP_CHECK(k.dim(2) > 0 || out.numel() == 0, ErrorCode::InvalidArgument, op, ": ", label("k", k),
              " has no keys (shape ", shape_str(k.shape()), ")");
  DACPP_CHECK(std::isfinite(scale), ErrorCode::InvalidArgument, op, ": scale ", scale, " is not finite");
  check_no_alias(op, "out", out, "q", q);
  check_no_alias(op, "out", out, "k", k);
  check_no_alias(op, "out", out, "v", v);
  const OpScope scope(ctx, op, {&q, &k});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::attention(ctx.cpu(), q, k, v, scale, out);
    case DeviceKind::Cuda:
      return cuda::attention(ctx.cuda(), q, k, v, scale, out);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void attention_qkv(Context& ctx, const Tensor& qkv, int64_t heads, float scale, Tensor& out) {
  attention_qkv_rows(ctx, qkv, heads, scale, 0, out);
}

void attention_qkv_rows(Context& ctx, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out) {
  using namespace detail;
  constexpr const char* op = "attention_qkv";
  const DType dt = check_act(ctx, op, "qkv", qkv);
  check_dtype(ctx, op, "out", out, dt);
  check_rank(op, "qkv", qkv, 3);
  check_rank(op, "out", out, 4);
  DACPP_CHECK(heads > 0 && qkv.dim(2) > 0 && qkv.dim(2) % (3 * heads) == 0, ErrorCode::InvalidArgument, op, ": ",
              label("qkv", qkv), " has shape ", shape_str(qkv.shape()), ", whose width is not 3 × ", heads,
              " heads × a head dim");
  const int64_t n = qkv.dim(1), d = qkv.dim(2) / (3 * heads), nq = out.dim(1);
  DACPP_CHECK(row0 >= 0 && row0 <= n && nq <= n - row0, ErrorCode::InvalidArgument, op, ": query rows [", row0, ", ",
              row0 + nq, ") of ", label("out", out), " are not within the ", n, " tokens of ", label("qkv", qkv));
  check_shape(op, "out", out, {qkv.dim(0), nq, heads, d});
  DACPP_CHECK(n > 0 || out.numel() == 0, ErrorCode::InvalidArgument, op, ": ", label("qkv", qkv), " has no tokens");
  DACPP_CHECK(std::isfinite(scale), ErrorCode::InvalidArgument, op, ": scale ", scale, " is not finite");
  check_no_alias(op, "out", out, "qkv", qkv);
  const OpScope scope(ctx, op, {&qkv, &out});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::attention_qkv(ctx.cpu(), qkv, heads, scale, row0, out);
    case DeviceKind::Cuda:
      return cuda::attention_qkv(ctx.cuda(), qkv, heads, scale, row0, out);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
