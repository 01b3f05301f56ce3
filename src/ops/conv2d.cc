#include "ops/conv2d.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "ops/elementwise.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"
#include "ops/resize.h"

namespace dacpp::ops {
namespace {

// Output extent of a convolution along one axis, or throws naming the op and the numbers.
int64_t conv_out(const char* op, const char* axis, int64_t in, int64_t k, int stride, int pad) {
  DACPP_CHECK(stride >= 1 && pad >= 0, ErrorCode::InvalidArgument, op, ": stride ", stride, " / padding ", pad,
              " along ", axis, " (need stride >= 1, padding >= 0)");
  DACPP_CHECK(k >= 1 && in + 2 * pad >= k, ErrorCode::InvalidArgument, op, ": kernel ", k, " along ", axis,
              " does not fit input ", in, " with padding ", pad);
  return (in + 2 * pad - k) / stride + 1;
}

// x, w and y share one activation dtype (f32 on the CPU; f32, bf16 or f16 on CUDA); bias is f32. w is rank 4, x rank
// x_rank (4: planes; 3: tokens); callers check y's shape.
void check_common(Context& ctx, const char* op, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                  int x_rank = 4) {
  using namespace detail;
  const DType dt = check_act(ctx, op, "x", x);
  check_weight(ctx, op, "w", w, dt);
  check_dtype(ctx, op, "y", y, dt);
  if (bias.defined()) check_input(ctx, op, "bias", bias);
  check_rank(op, "x", x, x_rank);
  check_rank(op, "w", w, 4);
  check_no_alias(op, "y", y, "x", x);
}

// conv2d_upsampled's checks past check_common: w [O, c, 3, 3] for a c-channel map, y [N, O, OH, OW], bias [O], the
// epilogue, and a source with pixels.
void check_upsampled(const char* op, const Tensor& x, int64_t c, const Tensor& w, const Tensor& bias, const Tensor& y,
                     Activation act) {
  using namespace detail;
  check_rank(op, "y", y, 4);
  const int64_t o = w.dim(0);
  check_shape(op, "w", w, {o, c, 3, 3});
  check_shape(op, "y", y, {x.dim(0), o, y.dim(2), y.dim(3)});
  if (bias.defined()) check_shape(op, "bias", bias, {o});
  DACPP_CHECK(act != Activation::Gelu, ErrorCode::InvalidArgument, op, ": GELU epilogue is not supported");
  DACPP_CHECK(x.dim(2) >= 1 && x.dim(3) >= 1, ErrorCode::InvalidArgument, op, ": ", label("x", x), " has shape ",
              shape_str(x.shape()), " (nothing to upsample)");
}

}  // namespace

void conv2d(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const Conv2dParams& p,
            Activation act) {
  using namespace detail;
  constexpr const char* op = "conv2d";
  check_common(ctx, op, x, w, bias, y);
  const int64_t o = w.dim(0);
  DACPP_CHECK(w.dim(1) == x.dim(1), ErrorCode::InvalidArgument, op, ": ", label("w", w), " has shape ",
              shape_str(w.shape()), " but ", label("x", x), " has shape ", shape_str(x.shape()),
              " (input channels differ)");
  DACPP_CHECK(act != Activation::Gelu, ErrorCode::InvalidArgument, op, ": GELU epilogue is not supported");
  const int64_t oh = conv_out(op, "height", x.dim(2), w.dim(2), p.stride_h, p.pad_h);
  const int64_t ow = conv_out(op, "width", x.dim(3), w.dim(3), p.stride_w, p.pad_w);
  check_shape(op, "y", y, {x.dim(0), o, oh, ow});
  if (bias.defined()) check_shape(op, "bias", bias, {o});
  const OpScope scope(ctx, op, {&x, &w});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu: {
      const cpu::ConvGeometry g{p.stride_h, p.stride_w, p.pad_h, p.pad_w};
      const cpu::Epilogue e = act == Activation::Relu ? cpu::Epilogue::Relu : cpu::Epilogue::None;
      return cpu::conv2d(ctx.cpu(), x, w, bias, y, g, e);
    }
    case DeviceKind::Cuda: {
      const cuda::ConvGeometry g{p.stride_h, p.stride_w, p.pad_h, p.pad_w};
      const cuda::Epilogue e = act == Activation::Relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
      return cuda::conv2d(ctx.cuda(), x, w, bias, y, g, e);
    }
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void residual_conv_pair(Context& ctx, const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                        const Tensor& b2, Tensor& h, Tensor& y, const Tensor& r) {
  using namespace detail;
  constexpr const char* op = "residual_conv_pair";
  check_common(ctx, op, x, w1, b1, y);
  check_weight(ctx, op, "w2", w2, x.dtype());
  check_dtype(ctx, op, "h", h, x.dtype());
  if (b2.defined()) check_input(ctx, op, "b2", b2);
  const int64_t f = x.dim(1);
  check_shape(op, "w1", w1, {f, f, 3, 3});
  check_shape(op, "w2", w2, {f, f, 3, 3});
  if (b1.defined()) check_shape(op, "b1", b1, {f});
  if (b2.defined()) check_shape(op, "b2", b2, {f});
  check_shape(op, "h", h, x.shape());
  check_shape(op, "y", y, x.shape());
  check_no_alias(op, "h", h, "x", x);
  check_no_alias(op, "y", y, "h", h);
  if (r.defined()) {
    check_dtype(ctx, op, "r", r, x.dtype());
    check_shape(op, "r", r, x.shape());
    check_no_alias(op, "y", y, "r", r);
  }
  if (y.numel() == 0) return;
  const OpScope scope(ctx, op, {&x, &w1});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu: {
      unary(ctx, Unary::Relu, x, y);
      conv2d(ctx, y, w1, b1, h, Conv2dParams{1, 1, 1, 1}, Activation::Relu);
      conv2d(ctx, h, w2, b2, y, Conv2dParams{1, 1, 1, 1});
      if (r.defined()) add(ctx, y, r, y);
      return;
    }
    case DeviceKind::Cuda:
      return cuda::residual_conv_pair(ctx.cuda(), x, w1, b1, w2, b2, r, h, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void conv2d_upsampled(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Activation act) {
  using namespace detail;
  constexpr const char* op = "conv2d_upsampled";
  check_common(ctx, op, x, w, bias, y);
  check_upsampled(op, x, x.dim(1), w, bias, y, act);
  if (y.numel() == 0) return;
  const OpScope scope(ctx, op, {&x, &w, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu: {
      Tensor up = Tensor::empty({x.dim(0), x.dim(1), y.dim(2), y.dim(3)}, x.dtype(), "conv2d_upsampled.up");
      resize_bilinear(ctx, x, up, /*align_corners=*/true);
      return conv2d(ctx, up, w, bias, y, Conv2dParams{1, 1, 1, 1}, act);
    }
    case DeviceKind::Cuda: {
      const cuda::Epilogue e = act == Activation::Relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
      return cuda::conv2d_upsampled(ctx.cuda(), x, w, bias, y, e);
    }
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

bool conv2d_upsampled_fused(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& y) {
  return ctx.device().kind == DeviceKind::Cuda && x.rank() == 4 && w.rank() == 4 && y.rank() == 4 &&
         cuda::conv2d_upsampled_refusal(ctx.cuda(), x, w, y).empty();
}

void conv2d_upsampled(Context& ctx, const Tensor& x, const Pointwise& pre, const Tensor& w, const Tensor& bias,
                      Tensor& y, Activation act) {
  using namespace detail;
  constexpr const char* op = "conv2d_upsampled (after a 1x1 conv)";
  check_common(ctx, op, x, pre.w, pre.bias, y);
  check_weight(ctx, op, "w", w, x.dtype());
  if (bias.defined()) check_input(ctx, op, "bias", bias);
  check_rank(op, "w", w, 4);
  const int64_t c = w.dim(1);
  check_shape(op, "pre.w", pre.w, {c, x.dim(1), 1, 1});
  if (pre.bias.defined()) check_shape(op, "pre.bias", pre.bias, {c});
  check_upsampled(op, x, c, w, bias, y, act);
  if (y.numel() == 0) return;
  const OpScope scope(ctx, op, {&x, &w, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu: {
      Tensor mixed = Tensor::empty({x.dim(0), c, x.dim(2), x.dim(3)}, x.dtype(), "conv2d_upsampled.pre");
      conv2d(ctx, x, pre.w, pre.bias, mixed);
      return conv2d_upsampled(ctx, mixed, w, bias, y, act);
    }
    case DeviceKind::Cuda: {
      const cuda::Epilogue e = act == Activation::Relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
      return cuda::conv2d_upsampled_taps(ctx.cuda(), x, w, bias, y, e, &pre.w, &pre.bias);
    }
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

bool conv2d_upsampled_folds(Context& ctx, const Tensor& x, const Pointwise& pre, const Tensor& w, const Tensor& y) {
  return ctx.device().kind == DeviceKind::Cuda && x.rank() == 4 && pre.w.rank() == 4 && w.rank() == 4 &&
         y.rank() == 4 && cuda::conv2d_upsampled_taps_refusal(x, w, y, cuda::Epilogue::None).empty();
}

namespace {

// conv_transpose2d's checks for an input of n images of c channels at h × w (x's own layout checked by the caller).
void check_deconv(const char* op, const Tensor& x, int64_t n, int64_t c, int64_t h, int64_t w, const Tensor& wt,
                  const Tensor& bias, const Tensor& y, int stride) {
  using namespace detail;
  const int64_t o = wt.dim(1), kk = wt.dim(2);
  DACPP_CHECK(wt.dim(0) == c && wt.dim(3) == kk && kk >= 1, ErrorCode::InvalidArgument, op, ": ", label("w", wt),
              " has shape ", shape_str(wt.shape()), " but ", label("x", x), " has shape ", shape_str(x.shape()),
              " (expected w [C_in=", c, ", C_out, K, K])");
  DACPP_CHECK(stride >= 1, ErrorCode::InvalidArgument, op, ": stride ", stride, " must be >= 1");
  check_shape(op, "y", y, {n, o, (h - 1) * stride + kk, (w - 1) * stride + kk});
  if (bias.defined()) check_shape(op, "bias", bias, {o});
}

}  // namespace

void conv_transpose2d(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride) {
  constexpr const char* op = "conv_transpose2d";
  check_common(ctx, op, x, w, bias, y);
  check_deconv(op, x, x.dim(0), x.dim(1), x.dim(2), x.dim(3), w, bias, y, stride);
  const OpScope scope(ctx, op, {&x, &w});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::conv_transpose2d(ctx.cpu(), x, w, bias, y, stride);
    case DeviceKind::Cuda:
      return cuda::conv_transpose2d(ctx.cuda(), x, w, bias, y, stride);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void conv_transpose2d_tokens(Context& ctx, const Tensor& x, int64_t h, int64_t w, const Tensor& weight,
                             const Tensor& bias, Tensor& y, int stride) {
  using namespace detail;
  constexpr const char* op = "conv_transpose2d_tokens";
  check_common(ctx, op, x, weight, bias, y, /*x_rank=*/3);
  check_token_grid(op, "x", x, h, w);
  check_deconv(op, x, x.dim(0), x.dim(2), h, w, weight, bias, y, stride);
  const OpScope scope(ctx, op, {&x, &weight});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::conv_transpose2d_tokens(ctx.cpu(), x, h, w, weight, bias, y, stride);
    case DeviceKind::Cuda:
      return cuda::conv_transpose2d_tokens(ctx.cuda(), x, h, w, weight, bias, y, stride);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void im2col3x3_tokens(Context& ctx, const Tensor& tokens, int64_t h, int64_t w, int ky0, int kyn, bool ones,
                      Tensor& y) {
  using namespace detail;
  constexpr const char* op = "im2col3x3_tokens";
  const DType dt = check_act(ctx, op, "tokens", tokens);
  check_dtype(ctx, op, "y", y, dt);
  check_rank(op, "tokens", tokens, 3);
  check_rank(op, "y", y, 2);
  check_token_grid(op, "tokens", tokens, h, w);
  DACPP_CHECK(ky0 >= 0 && kyn >= 1 && ky0 + kyn <= 3, ErrorCode::InvalidArgument, op, ": kernel rows [", ky0, ", ",
              ky0 + kyn, ") are not within [0, 3)");
  const int64_t c = tokens.dim(2), taps = 3 * int64_t{kyn};
  DACPP_CHECK(y.dim(0) == tokens.dim(0) * h * w && y.dim(1) % taps == 0 && y.dim(1) / taps >= c + (ones ? 1 : 0),
              ErrorCode::InvalidArgument, op, ": ", label("y", y), " has shape ", shape_str(y.shape()), ", expected [",
              tokens.dim(0) * h * w, ", ", taps, "·Cp] with Cp >= ", c + (ones ? 1 : 0));
  check_no_alias(op, "y", y, "tokens", tokens);
  const OpScope scope(ctx, op, {&tokens, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::im2col3x3_tokens(ctx.cpu(), tokens, h, w, ky0, kyn, ones, y);
    case DeviceKind::Cuda:
      return cuda::im2col3x3_tokens(ctx.cuda(), tokens, h, w, ky0, kyn, ones, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

void patch_rows(Context& ctx, const Tensor& x, int k, Tensor& y) {
  using namespace detail;
  constexpr const char* op = "patch_rows";
  const DType dt = check_act(ctx, op, "x", x);
  check_dtype(ctx, op, "y", y, dt);
  check_rank(op, "x", x, 4);
  check_rank(op, "y", y, 3);
  DACPP_CHECK(k >= 1 && x.dim(2) % k == 0 && x.dim(3) % k == 0, ErrorCode::InvalidArgument, op, ": ", label("x", x),
              " has shape ", shape_str(x.shape()), ", expected H and W multiples of the patch size ", k);
  const int64_t cols = x.dim(1) * k * k, patches = (x.dim(2) / k) * (x.dim(3) / k);
  DACPP_CHECK(y.dim(0) == x.dim(0) && y.dim(1) == patches && y.dim(2) >= cols, ErrorCode::InvalidArgument, op, ": ",
              label("y", y), " has shape ", shape_str(y.shape()), ", expected [", x.dim(0), ", ", patches,
              ", Kp] with Kp >= ", cols);
  check_no_alias(op, "y", y, "x", x);
  if (y.numel() == 0) return;
  const OpScope scope(ctx, op, {&x, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::patch_rows(ctx.cpu(), x, k, y);
    case DeviceKind::Cuda:
      return cuda::patch_rows(ctx.cuda(), x, k, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
