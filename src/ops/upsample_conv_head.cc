#include "ops/upsample_conv_head.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {
namespace {

void check_operands(Context& ctx, const char* op, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                    const Tensor& b1, const Tensor& y, const UpsampledAdd* add) {
  using namespace detail;
  const DType dt = check_act(ctx, op, "x", x);
  check_weight(ctx, op, "w3", w3, dt);
  check_weight(ctx, op, "w1", w1, dt);
  check_dtype(ctx, op, "y", y, dt);
  if (b3.defined()) check_input(ctx, op, "b3", b3);
  if (b1.defined()) check_input(ctx, op, "b1", b1);
  check_rank(op, "x", x, 4);
  check_rank(op, "w3", w3, 4);
  check_rank(op, "y", y, 4);
  check_rank(op, "w1", w1, 4);
  const int64_t m = w3.dim(0), o = w1.dim(0);
  check_shape(op, "w3", w3, {m, x.dim(1), 3, 3});
  check_shape(op, "w1", w1, {o, m, 1, 1});
  if (b3.defined()) check_shape(op, "b3", b3, {m});
  if (b1.defined()) check_shape(op, "b1", b1, {o});
  check_shape(op, "y", y, {x.dim(0), o, y.dim(2), y.dim(3)});
  if (add != nullptr) {
    check_input(ctx, op, "add.cols", add->cols);
    check_input(ctx, op, "add.rows", add->rows);
    check_shape(op, "add.cols", add->cols, {x.dim(1), y.dim(3)});
    check_shape(op, "add.rows", add->rows, {x.dim(1), y.dim(2)});
  }
  DACPP_CHECK(m >= 1 && x.dim(2) >= 1 && x.dim(3) >= 1, ErrorCode::InvalidArgument, op, ": ", label("x", x),
              " has shape ", shape_str(x.shape()), " and ", label("w3", w3), " ", shape_str(w3.shape()),
              " (need a non-empty input and at least one hidden channel)");
  check_no_alias(op, "y", y, "x", x);
}

}  // namespace

bool upsample_conv_head_fused(Context& ctx, const Tensor& x, const Tensor& w3, const Tensor& y) {
  if (ctx.device().kind == DeviceKind::Cpu) return true;
  return ctx.device().kind == DeviceKind::Cuda && x.rank() == 4 && w3.rank() == 4 && y.rank() == 4 && y.dim(1) == 1 &&
         cuda::upsample_conv_head_refusal(x, w3, y).empty();
}

void upsample_conv_head(Context& ctx, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                        const Tensor& b1, Tensor& y, HeadFinal final, const UpsampledAdd* add) {
  constexpr const char* op = "upsample_conv_head";
  check_operands(ctx, op, x, w3, b3, w1, b1, y, add);
  if (y.numel() == 0) return;
  const OpScope scope(ctx, op, {&x, &w3, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::upsample_conv_head(ctx.cpu(), x, w3, b3, w1, b1, y, static_cast<int>(final),
                                     add != nullptr ? add->cols.data<float>() : nullptr,
                                     add != nullptr ? add->rows.data<float>() : nullptr);
    case DeviceKind::Cuda:
      DACPP_CHECK(w1.dim(0) == 1 && add == nullptr, ErrorCode::Unsupported, op, ": CUDA runs one output channel (",
                  detail::label("w1", w1), " has ", w1.dim(0), ") and no added map",
                  add != nullptr ? " (an add was given)" : "");
      return cuda::upsample_conv_head(ctx.cuda(), x, w3, b3, w1, b1, y, static_cast<int>(final));
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
