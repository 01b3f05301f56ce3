// conv_transpose2d on oneDNN deconvolution_forward. The torch weight [C_in, C_out, K, K] is described to oneDNN as
// its logical [O, I, K, K] with strides {K·K, O·K·K, K, 1}, so no host-side transpose is made; oneDNN reorders it
// into its own layout inside the planned reorder.
#include <string>

#include "backends/cpu/conv_plan.h"
#include "backends/cpu/cpu_ops.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

std::shared_ptr<ConvPlan> make_plan(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& y,
                                    bool has_bias, int stride) {
  auto p = std::make_shared<ConvPlan>();
  const int64_t ci = w.dim(0), co = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  const dims xd(x.shape().begin(), x.shape().end()), yd(y.shape().begin(), y.shape().end());
  const dims wd{co, ci, kh, kw};
  p->src_user = f32_desc(xd, tag::nchw);
  p->wei_user = f32_desc(wd, {kh * kw, co * kh * kw, kw, 1});
  p->dst_user = f32_desc(yd, tag::nchw);
  if (has_bias) p->bias = f32_desc({co}, tag::a);
  const dims strides{stride, stride}, pad{0, 0};
  const auto any = [](const dims& d) { return f32_desc(d, tag::any); };
  dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                      any(xd), any(wd), has_bias ? p->bias : dnnl::memory::desc(), any(yd),
                                      strides, pad, pad);
  dnnl::deconvolution_forward::primitive_desc pd(d, c.engine());
  p->src = pd.src_desc();
  p->wei = pd.weights_desc();
  p->dst = pd.dst_desc();
  p->prim = dnnl::deconvolution_forward(pd);
  plan_conv_reorders(c, *p);
  return p;
}

}  // namespace

void conv_transpose2d(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "conv_transpose2d: oneDNN deconvolution");
  if (y.numel() == 0) return;
  c.pool().bind_to_current_thread();
  const bool has_bias = bias.defined();
  const std::string key = str_cat("deconv x", shape_str(x.shape()), " w", shape_str(w.shape()), " s", stride,
                                  " b", has_bias);
  dnnl_call("conv_transpose2d", [&] {
    auto p = c.plan<ConvPlan>(key, [&] { return make_plan(c, x, w, y, has_bias, stride); });
    run_conv_plan(c, *p, x.raw(), w.raw(), has_bias ? bias.raw() : nullptr, y.raw());
  });
}

}  // namespace dacpp::cpu
