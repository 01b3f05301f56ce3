#include "ops/elementwise.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {
namespace {

cpu::UnaryKind to_cpu(Unary k) {
  switch (k) {
    case Unary::Gelu: return cpu::UnaryKind::Gelu;
    case Unary::Silu: return cpu::UnaryKind::Silu;
    case Unary::Relu: return cpu::UnaryKind::Relu;
    case Unary::Exp: return cpu::UnaryKind::Exp;
    case Unary::Sigmoid: return cpu::UnaryKind::Sigmoid;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "unary: unknown kind ", static_cast<int>(k));
}

cuda::UnaryKind to_cuda(Unary k) {
  switch (k) {
    case Unary::Gelu: return cuda::UnaryKind::Gelu;
    case Unary::Silu: return cuda::UnaryKind::Silu;
    case Unary::Relu: return cuda::UnaryKind::Relu;
    case Unary::Exp: return cuda::UnaryKind::Exp;
    case Unary::Sigmoid: return cuda::UnaryKind::Sigmoid;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "unary: unknown kind ", static_cast<int>(k));
}

// b broadcasts against a (right-aligned; each b dim is 1 or equal), y has a's shape.
const char* profile_name(Unary kind) {
  switch (kind) {
    case Unary::Gelu:
      return "unary gelu";
    case Unary::Silu:
      return "unary silu";
    case Unary::Relu:
      return "unary relu";
    case Unary::Exp:
      return "unary exp";
    case Unary::Sigmoid:
      return "unary sigmoid";
  }
  return "unary";
}

void check_binary(Context& ctx, const char* op, const Tensor& a, const Tensor& b, const Tensor& y) {
  using namespace detail;
  const DType dt = check_act(ctx, op, "a", a);
  // b: a's dtype, or f32 (parameters stay f32 next to bf16 / f16 activations on a GPU), or any activation dtype
  // when a is f32 (a bf16 / f16 branch added into an f32 stream).
  check_dtype(ctx, op, "b", b, b.dtype() == DType::F32 || dt == DType::F32 ? b.dtype() : dt);
  if (b.dtype() != DType::F32) check_act(ctx, op, "b", b);
  check_dtype(ctx, op, "y", y, dt);
  check_shape(op, "y", y, a.shape());
  bool ok = b.rank() <= a.rank();
  for (int i = 1; ok && i <= b.rank(); ++i) {
    const int64_t bd = b.shape()[b.rank() - i], ad = a.shape()[a.rank() - i];
    ok = bd == 1 || bd == ad;
  }
  DACPP_CHECK(ok, ErrorCode::InvalidArgument, op, ": ", label("b", b), " of shape ", shape_str(b.shape()),
              " does not broadcast to ", label("a", a), " of shape ", shape_str(a.shape()));
  if (b.raw() == y.raw() && b.numel() > 0)
    DACPP_CHECK(b.shape() == a.shape(), ErrorCode::InvalidArgument, op, ": y aliases the broadcast operand ",
                label("b", b));
}

void binary(Context& ctx, const char* op, cpu::BinaryKind kind, const Tensor& a, const Tensor& b, Tensor& y) {
  check_binary(ctx, op, a, b, y);
  const OpScope scope(ctx, op, {&a, &b});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::binary(ctx.cpu(), kind, a, b, y);
    case DeviceKind::Cuda:
      return cuda::binary(ctx.cuda(),
                          kind == cpu::BinaryKind::Add ? cuda::BinaryKind::Add : cuda::BinaryKind::Mul, a, b, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace

void unary(Context& ctx, Unary kind, const Tensor& x, Tensor& y) {
  using namespace detail;
  constexpr const char* op = "unary";
  const DType dt = check_act(ctx, op, "x", x);
  check_dtype(ctx, op, "y", y, dt);
  check_shape(op, "y", y, x.shape());
  const OpScope scope(ctx, profile_name(kind), {&x});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::unary(ctx.cpu(), to_cpu(kind), x, y);
    case DeviceKind::Cuda:
      return cuda::unary(ctx.cuda(), to_cuda(kind), x, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void add(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y) { binary(ctx, "add", cpu::BinaryKind::Add, a, b, y); }

void mul(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y) { binary(ctx, "mul", cpu::BinaryKind::Mul, a, b, y); }

void add_scaled(Context& ctx, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y) {
  using namespace detail;
  constexpr const char* op = "add_scaled";
  const DType dt = check_act(ctx, op, "x", x);
  check_act(ctx, op, "a", a);
  check_dtype(ctx, op, "y", y, dt);
  check_shape(op, "a", a, x.shape());
  check_shape(op, "y", y, x.shape());
  if (gamma.defined()) {
    check_input(ctx, op, "gamma", gamma);
    check_min_rank(op, "x", x, 1);
    check_shape(op, "gamma", gamma, {x.dim(-1)});
  }
  if (a.raw() == y.raw() && a.numel() > 0)
    DACPP_CHECK(a.dtype() == y.dtype(), ErrorCode::InvalidArgument, op, ": y aliases ", label("a", a),
                " of another dtype");
  const OpScope scope(ctx, op, {&x, &a});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::add_scaled(ctx.cpu(), x, a, gamma, y);
    case DeviceKind::Cuda:
      return cuda::add_scaled(ctx.cuda(), x, a, gamma, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void embed_tokens(Context& ctx, const Tensor& lead, const Tensor& table, const Tensor& patches, Tensor& tokens) {
  using namespace detail;
  constexpr const char* op = "embed_tokens";
  check_act(ctx, op, "patches", patches);
  check_rank(op, "patches", patches, 3);
  const int64_t b = patches.dim(0), p = patches.dim(1), e = patches.dim(2);
  check_input(ctx, op, "table", table);
  check_shape(op, "table", table, {p, e});
  int64_t l = 0;
  if (lead.defined()) {
    check_input(ctx, op, "lead", lead);
    check_rank(op, "lead", lead, 2);
    l = lead.dim(0);
    check_shape(op, "lead", lead, {l, e});
    check_no_alias(op, "tokens", tokens, "lead", lead);
  }
  check_input(ctx, op, "tokens", tokens);
  check_shape(op, "tokens", tokens, {b, l + p, e});
  check_no_alias(op, "tokens", tokens, "table", table);
  check_no_alias(op, "tokens", tokens, "patches", patches);
  const OpScope scope(ctx, op, {&patches, &table});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::embed_tokens(ctx.cpu(), lead, table, patches, tokens);
    case DeviceKind::Cuda:
      return cuda::embed_tokens(ctx.cuda(), lead, table, patches, tokens);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
