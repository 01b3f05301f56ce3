// conv_transpose2d on oneDNN deconvolution_forward. The torch weight [C_in, C_out, K, K] is described to oneDNN as
// its logical [O, I, K, K] with strides {K·K, O·K·K, K, 1}, so no host-side transpose is made; oneDNN reorders it
// into its own layout inside the planned reorder. A bf16 weight runs the deconvolution on bf16 operands (x rounded by
// the reorder into the primitive's layout), f32 accumulation and output.
#include <algorithm>
#include <string>

#include "backends/cpu/conv_plan.h"
#include "backends/cpu/cpu_ops.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

// xd: the source's logical [N, C, H, W]; nhwc: stored channels-last (tokens) instead of planes.
std::shared_ptr<ConvPlan> make_plan(CpuContext& c, const dims& xd, bool nhwc, const Tensor& w, const Tensor& y,
                                    bool has_bias, int stride) {
  auto p = std::make_shared<ConvPlan>();
  const int64_t ci = w.dim(0), co = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  const dims yd(y.shape().begin(), y.shape().end());
  const dims wd{co, ci, kh, kw};
  const dt prod = w.dtype() == DType::BF16 ? dt::bf16 : dt::f32;
  p->src_user = f32_desc(xd, nhwc ? tag::nhwc : tag::nchw);
  p->wei_user = dnnl::memory::desc(wd, prod, dims{kh * kw, co * kh * kw, kw, 1});
  p->dst_user = f32_desc(yd, tag::nchw);
  if (has_bias) p->bias = f32_desc({co}, tag::a);
  const dims strides{stride, stride}, pad{0, 0};
  const auto any = [](const dims& d, dt t) { return dnnl::memory::desc(d, t, tag::any); };
  dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                      any(xd, prod), any(wd, prod), has_bias ? p->bias : dnnl::memory::desc(),
                                      any(yd, dt::f32), strides, pad, pad);
  dnnl::deconvolution_forward::primitive_desc pd(d, c.engine());
  p->src = pd.src_desc();
  p->wei = pd.weights_desc();
  p->dst = pd.dst_desc();
  p->prim = dnnl::deconvolution_forward(pd);
  plan_conv_reorders(c, *p);
  return p;
}

void run(CpuContext& c, const Tensor& x, const dims& xd, bool nhwc, const Tensor& w, const Tensor& bias, Tensor& y,
         int stride, const char* what) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, what, ": oneDNN deconvolution");
  if (y.numel() == 0) return;
  c.pool().bind_to_current_thread();
  const bool has_bias = bias.defined();
  const std::string key = str_cat("deconv x", shape_str(Shape(xd.begin(), xd.end())), nhwc ? " nhwc" : "", " w",
                                  shape_str(w.shape()), " s", stride, " b", has_bias, " w", dtype_name(w.dtype()));
  dnnl_call(what, [&] {
    auto p = c.plan<ConvPlan>(key, [&] { return make_plan(c, xd, nhwc, w, y, has_bias, stride); });
    run_conv_plan(c, *p, x.raw(), w.raw(), has_bias ? bias.raw() : nullptr, y.raw());
  });
}

}  // namespace

void conv_transpose2d(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride) {
  run(c, x, dims(x.shape().begin(), x.shape().end()), /*nhwc=*/false, w, bias, y, stride, "conv_transpose2d");
}

void conv_transpose2d_tokens(CpuContext& c, const Tensor& x, int64_t h, int64_t w, const Tensor& wt, const Tensor& bias,
                             Tensor& y, int stride) {
  run(c, x, dims{x.dim(0), x.dim(2), h, w}, /*nhwc=*/true, wt, bias, y, stride, "conv_transpose2d_tokens");
}

void im2col3x3_tokens(CpuContext& c, const Tensor& tokens, int64_t h, int64_t w, int ky0, int kyn, bool ones,
                      Tensor& y) {
  const int64_t ch = tokens.dim(2), hw = h * w, taps = 3 * int64_t{kyn}, cp = y.dim(1) / taps;
  const auto* x = static_cast<const float*>(tokens.raw());
  auto* out = static_cast<float*>(y.raw());
  c.pool().parallel_for(y.dim(0), std::max<int64_t>(1, 4096 / (taps * cp)), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t img = p / hw, i0 = p % hw / w, j0 = p % w;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t i = i0 + ky0 + t / 3 - 1, j = j0 + t % 3 - 1;
        const bool inside = i >= 0 && i < h && j >= 0 && j < w;
        float* dst = out + (p * taps + t) * cp;
        if (inside) {
          std::copy_n(x + (img * hw + i * w + j) * ch, ch, dst);
        } else {
          std::fill_n(dst, ch, 0.f);
        }
        std::fill(dst + ch, dst + cp, 0.f);
        if (ones && inside) dst[ch] = 1.f;
      }
    }
  });
}

void patch_rows(CpuContext& c, const Tensor& x, int k, Tensor& y) {
  const int64_t ch = x.dim(1), h = x.dim(2), w = x.dim(3), gw = w / k, kp = y.dim(2), cols = ch * k * k;
  const auto* src = static_cast<const float*>(x.raw());
  auto* out = static_cast<float*>(y.raw());
  // One output row (patch) per step: C·k runs of k source pixels each.
  c.pool().parallel_for(y.dim(0) * y.dim(1), std::max<int64_t>(1, 4096 / kp), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t img = r / y.dim(1), p = r % y.dim(1), i = p / gw, j = p % gw;
      float* dst = out + r * kp;
      for (int64_t cc = 0; cc < ch; ++cc)
        for (int64_t ky = 0; ky < k; ++ky)
          std::copy_n(src + ((img * ch + cc) * h + i * k + ky) * w + j * k, k, dst + (cc * k + ky) * k);
      std::fill(dst + cols, dst + kp, 0.f);
    }
  });
}

}  // namespace dacpp::cpu
