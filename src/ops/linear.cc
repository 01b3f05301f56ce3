#include "ops/linear.h"

#include <optional>
#include <utility>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

namespace {

// linear's (and linear_add's) operand checks on a plain weight; y f32 where `y_f32` (linear_add), else in the
// activation dtype.
void check_plain(Context& ctx, const char* op, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                 bool y_f32) {
  using namespace detail;
  // On the CPU either operand may be a bf16 weight (the resize fold's folded weights are its x): see linear.h.
  const bool cpu = ctx.device().kind == DeviceKind::Cpu;
  const DType dt = cpu ? DType::F32 : check_act(ctx, op, "x", x);
  if (cpu) check_weight(ctx, op, "x", x, dt);
  check_weight(ctx, op, "w", w, dt);
  check_dtype(ctx, op, "y", y, y_f32 ? DType::F32 : dt);
  if (bias.defined()) check_input(ctx, op, "bias", bias);
  check_rank(op, "w", w, 2);
  check_min_rank(op, "x", x, 1);
  const int64_t n = w.dim(0), k = w.dim(1);
  DACPP_CHECK(x.dim(-1) == k, ErrorCode::InvalidArgument, op, ": tensor ", label("x", x), " has shape ",
              shape_str(x.shape()), " but ", label("w", w), " has shape ", shape_str(w.shape()),
              " (last dim of x must equal w's K)");
  Shape ys = x.shape();
  ys.back() = n;
  check_shape(op, "y", y, ys);
  if (bias.defined()) check_shape(op, "bias", bias, {n});
  check_no_alias(op, "y", y, "x", x);
}

// The same for a weight packed for the CPU (n × k, named `name`).
void check_packed(Context& ctx, const char* op, const Tensor& x, const cpu::PackedWeight& pw, const Tensor& bias,
                  const Tensor& y) {
  using namespace detail;
  DACPP_CHECK(ctx.device().kind == DeviceKind::Cpu, ErrorCode::Backend, op, ": weight '", pw.name,
              "' is packed for the CPU, but the op runs on ", device_name(ctx.device()));
  check_dtype(ctx, op, "x", x, DType::F32);
  check_dtype(ctx, op, "y", y, DType::F32);
  if (bias.defined()) check_input(ctx, op, "bias", bias);
  check_min_rank(op, "x", x, 1);
  DACPP_CHECK(x.dim(-1) == pw.k, ErrorCode::InvalidArgument, op, ": tensor ", label("x", x), " has shape ",
              shape_str(x.shape()), " but weight '", pw.name, "' has shape [", pw.n, ",", pw.k,
              "] (last dim of x must equal w's K)");
  Shape ys = x.shape();
  ys.back() = pw.n;
  check_shape(op, "y", y, ys);
  if (bias.defined()) check_shape(op, "bias", bias, {pw.n});
  check_no_alias(op, "y", y, "x", x);
}

}  // namespace

void linear(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Activation act) {
  constexpr const char* op = "linear";
  check_plain(ctx, op, x, w, bias, y, /*y_f32=*/false);
  const OpScope scope(ctx, op, {&x, &w});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu: {
      const cpu::Epilogue e = act == Activation::Gelu   ? cpu::Epilogue::Gelu
                              : act == Activation::Relu ? cpu::Epilogue::Relu
                                                        : cpu::Epilogue::None;
      return cpu::linear(ctx.cpu(), x, w, bias, y, e);
    }
    case DeviceKind::Cuda: {
      const cuda::Epilogue e = act == Activation::Gelu   ? cuda::Epilogue::Gelu
                               : act == Activation::Relu ? cuda::Epilogue::Relu
                                                         : cuda::Epilogue::None;
      return cuda::linear(ctx.cuda(), x, w, bias, y, e);
    }
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

LinearWeight::LinearWeight(Tensor plain) : plain_(std::move(plain)) {}
LinearWeight::LinearWeight(std::shared_ptr<const cpu::PackedWeight> packed) : packed_(std::move(packed)) {}

int64_t LinearWeight::out_features() const {
  return packed_ ? packed_->n : plain_.dim(0);
}
int64_t LinearWeight::in_features() const {
  return packed_ ? packed_->k : plain_.dim(1);
}
DType LinearWeight::dtype() const {
  return packed_ ? packed_->dtype : plain_.dtype();
}
const std::string& LinearWeight::name() const {
  return packed_ ? packed_->name : plain_.name();
}

std::optional<LinearWeight> pack_linear_weight(const Tensor& host, DType product) {
  DACPP_CHECK(host.defined() && host.device().is_cpu() && host.rank() == 2 &&
                  (host.dtype() == DType::F32 || host.dtype() == DType::BF16) &&
                  (product == DType::F32 || product == DType::BF16) &&
                  (host.dtype() == product || product == DType::BF16),
              ErrorCode::InvalidArgument, "pack_linear_weight: weight '", host.name(), "' ",
              host.defined() ? shape_str(host.shape()) : std::string("(undefined)"), " ",
              host.defined() ? dtype_name(host.dtype()) : "", " for ", dtype_name(product),
              " products (need a host f32 or bf16 [N, K] weight, products in f32 or bf16, never bf16 to f32)");
  std::optional<cpu::PackedWeight> p = cpu::pack_linear_weight(host, product);
  if (!p) return std::nullopt;
  return LinearWeight(std::make_shared<const cpu::PackedWeight>(std::move(*p)));
}

void linear(Context& ctx, const Tensor& x, const LinearWeight& w, const Tensor& bias, Tensor& y, Activation act) {
  if (w.packed() == nullptr) return linear(ctx, x, w.plain(), bias, y, act);
  constexpr const char* op = "linear";
  const cpu::PackedWeight& pw = *w.packed();
  check_packed(ctx, op, x, pw, bias, y);
  const OpScope scope(ctx, op, {&x}, OpScope::Described{{pw.n, pw.k}, pw.dtype, "packed"});
  const cpu::Epilogue e = act == Activation::Gelu   ? cpu::Epilogue::Gelu
                          : act == Activation::Relu ? cpu::Epilogue::Relu
                                                    : cpu::Epilogue::None;
  cpu::linear_packed(ctx.cpu(), x, pw, bias, y, e);
}

void linear_add(Context& ctx, const Tensor& x, const LinearWeight& w, const Tensor& bias, Tensor& y) {
  constexpr const char* op = "linear_add";
  if (const cpu::PackedWeight* pw = w.packed()) {
    check_packed(ctx, op, x, *pw, bias, y);
    const OpScope scope(ctx, op, {&x}, OpScope::Described{{pw->n, pw->k}, pw->dtype, "packed"});
    return cpu::linear_packed(ctx.cpu(), x, *pw, bias, y, cpu::Epilogue::None, /*add=*/true);
  }
  check_plain(ctx, op, x, w.plain(), bias, y, /*y_f32=*/true);
  const OpScope scope(ctx, op, {&x, &w.plain()});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::linear_add(ctx.cpu(), x, w.plain(), bias, y);
    case DeviceKind::Cuda:
      return cuda::linear_add(ctx.cuda(), x, w.plain(), bias, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
