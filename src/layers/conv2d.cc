#include "layers/conv2d.h"

#include "ops/linear.h"
#include "ops/permute.h"

namespace dacpp::layers {

Conv2d::Conv2d(const ModelFile& mf, const std::string& prefix, const ConvSpec& spec)
    : spec_(spec),
      w_(fetch(mf, weight_name(prefix), {spec.out, spec.in, spec.kernel, spec.kernel})),
      b_(fetch_bias(mf, prefix, spec.out, spec.bias)) {}

Tensor Conv2d::forward(Exec& ex, const Tensor& x, ops::Activation act) const {
  // x: [N, in, H, W] → y: [N, out, OH, OW]
  DACPP_CHECK(x.rank() == 4, ErrorCode::InvalidArgument, "conv '", w_.name(), "': input '", x.name(),
              "' has shape ", shape_str(x.shape()), ", expected [N, C, H, W]");
  const int64_t oh = (x.dim(2) + 2 * spec_.pad - spec_.kernel) / spec_.stride + 1;
  const int64_t ow = (x.dim(3) + 2 * spec_.pad - spec_.kernel) / spec_.stride + 1;
  DACPP_CHECK(oh > 0 && ow > 0, ErrorCode::InvalidArgument, "conv '", w_.name(), "': input ",
              shape_str(x.shape()), " is smaller than the kernel");
  Tensor y = ex.alloc({x.dim(0), spec_.out, oh, ow}, "conv.out");
  forward_into(ex, x, y, act);
  return y;
}

void Conv2d::forward_into(Exec& ex, const Tensor& x, Tensor& y, ops::Activation act) const {
  ops::Conv2dParams p;
  p.stride_h = p.stride_w = spec_.stride;
  p.pad_h = p.pad_w = spec_.pad;
  ops::conv2d(ex.ctx, x, w_, b_, y, p, act);
}

Tensor Conv2d::forward_tokens(Exec& ex, const Tensor& tokens, int64_t gh, int64_t gw) const {
  DACPP_CHECK(spec_.kernel == 1 && spec_.stride == 1 && spec_.pad == 0, ErrorCode::InvalidArgument, "conv '",
              w_.name(), "': forward_tokens needs a 1×1 stride-1 unpadded conv (kernel ", spec_.kernel, ", stride ",
              spec_.stride, ", pad ", spec_.pad, ")");
  DACPP_CHECK(tokens.rank() == 3 && tokens.dim(1) == gh * gw && tokens.dim(2) == spec_.in,
              ErrorCode::InvalidArgument, "conv '", w_.name(), "': tokens '", tokens.name(), "' have shape ",
              shape_str(tokens.shape()), ", expected [B, ", gh, "·", gw, ", ", spec_.in, "]");
  const int64_t b = tokens.dim(0), p = gh * gw;
  Tensor map = ex.alloc({b, spec_.out, gh, gw}, "conv.tokens_map");
  ArenaScope scope(ex.arena);
  Tensor y = ex.alloc({b, p, spec_.out}, "conv.tokens_out");
  ops::linear(ex.ctx, tokens, w_.reshape({spec_.out, spec_.in}), b_, y);
  Tensor planes = map.reshape({b, spec_.out, p});
  ops::permute(ex.ctx, y, {0, 2, 1}, planes);  // [B, P, out] → [B, out, P]: out channels moved, not in
  return map;
}

Tensor Conv2d::forward_token_rows(Exec& ex, const Tensor& tokens) const {
  DACPP_CHECK(spec_.kernel == 1 && spec_.stride == 1 && spec_.pad == 0, ErrorCode::InvalidArgument, "conv '", w_.name(),
              "': forward_token_rows needs a 1×1 stride-1 unpadded conv (kernel ", spec_.kernel, ", stride ",
              spec_.stride, ", pad ", spec_.pad, ")");
  DACPP_CHECK(tokens.rank() == 3 && tokens.dim(2) == spec_.in, ErrorCode::InvalidArgument, "conv '", w_.name(),
              "': tokens '", tokens.name(), "' have shape ", shape_str(tokens.shape()), ", expected [B, P, ", spec_.in,
              "]");
  Tensor y = ex.alloc({tokens.dim(0), tokens.dim(1), spec_.out}, "conv.token_rows");
  ops::linear(ex.ctx, tokens, w_.reshape({spec_.out, spec_.in}), b_, y);
  return y;
}

ConvTranspose2d::ConvTranspose2d(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out,
                                 int kernel)
    : in_(in),
      out_(out),
      kernel_(kernel),
      w_(fetch(mf, weight_name(prefix), {in, out, kernel, kernel})),
      b_(fetch_bias(mf, prefix, out, Bias::Required)) {}

Tensor ConvTranspose2d::forward(Exec& ex, const Tensor& x) const {
  // x: [N, in, H, W] → y: [N, out, H·k, W·k]
  DACPP_CHECK(x.rank() == 4, ErrorCode::InvalidArgument, "conv_transpose '", w_.name(), "': input '", x.name(),
              "' has shape ", shape_str(x.shape()), ", expected [N, C, H, W]");
  Tensor y = ex.alloc({x.dim(0), out_, x.dim(2) * kernel_, x.dim(3) * kernel_}, "conv_transpose.out");
  ops::conv_transpose2d(ex.ctx, x, w_, b_, y, kernel_);
  return y;
}

bool ConvTranspose2d::prefers_tokens(const ops::Context& ctx) const {
  return ctx.device().kind == DeviceKind::Cuda && in_ >= 256;
}

Tensor ConvTranspose2d::forward_tokens(Exec& ex, const Tensor& x, int64_t gh, int64_t gw) const {
  DACPP_CHECK(x.rank() == 3 && x.dim(1) == gh * gw, ErrorCode::InvalidArgument, "conv_transpose '", w_.name(),
              "': tokens '", x.name(), "' have shape ", shape_str(x.shape()), ", expected [N, ", gh, "·", gw, ", C]");
  Tensor y = ex.alloc({x.dim(0), out_, gh * kernel_, gw * kernel_}, "conv_transpose.out");
  ops::conv_transpose2d_tokens(ex.ctx, x, gh, gw, w_, b_, y, kernel_);
  return y;
}

}  // namespace dacpp::layers
