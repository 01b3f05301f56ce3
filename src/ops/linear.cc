#include "ops/linear.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

void linear(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Activation act) {
  using namespace detail;
  constexpr const char* op = "linear";
  // On the CPU either operand may be a bf16 weight (the resize fold's folded weights are its x): see linear.h.
  const bool cpu = ctx.device().kind == DeviceKind::Cpu;
  const DType dt = cpu ? DType::F32 : check_act(ctx, op, "x", x);
  if (cpu) check_weight(ctx, op, "x", x, dt);
  check_weight(ctx, op, "w", w, dt);
  check_dtype(ctx, op, "y", y, dt);
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

}  // namespace dacpp::ops
