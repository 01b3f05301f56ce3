// conv2d on oneDNN convolution_forward (direct algorithm, bias and ReLU fused); nchw in and out. A bf16 weight runs
// the conv on bf16 operands: the planned reorder of x into the primitive's layout also rounds it to bf16.
#include <string>

#include "backends/cpu/conv_plan.h"
#include "backends/cpu/cpu_ops.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

std::shared_ptr<ConvPlan> make_plan(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& y,
                                    bool has_bias, const ConvGeometry& g, Epilogue act) {
  auto p = std::make_shared<ConvPlan>();
  const dims xd(x.shape().begin(), x.shape().end()), wd(w.shape().begin(), w.shape().end());
  const dims yd(y.shape().begin(), y.shape().end());
  const dt prod = w.dtype() == DType::BF16 ? dt::bf16 : dt::f32;
  p->src_user = f32_desc(xd, tag::nchw);
  p->wei_user = dnnl::memory::desc(wd, prod, tag::oihw);
  p->dst_user = f32_desc(yd, tag::nchw);
  if (has_bias) p->bias = f32_desc({wd[0]}, tag::a);
  const dims strides{g.stride_h, g.stride_w}, pad{g.pad_h, g.pad_w};
  const auto any = [](const dims& d, dt t) { return dnnl::memory::desc(d, t, tag::any); };
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                    any(xd, prod), any(wd, prod), has_bias ? p->bias : dnnl::memory::desc(),
                                    any(yd, dt::f32), strides, pad, pad);
  finish_conv_plan(c, *p, dnnl::convolution_forward::primitive_desc(d, relu_attr(act == Epilogue::Relu), c.engine()));
  return p;
}

}  // namespace

void conv2d(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
            Epilogue act) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "conv2d: oneDNN convolution");
  if (y.numel() == 0) return;
  c.pool().bind_to_current_thread();
  const bool has_bias = bias.defined();
  const std::string key =
      str_cat("conv2d x", shape_str(x.shape()), " w", shape_str(w.shape()), " s", g.stride_h, ",", g.stride_w, " p",
              g.pad_h, ",", g.pad_w, " b", has_bias, " a", static_cast<int>(act), " w", dtype_name(w.dtype()));
  dnnl_call("conv2d", [&] {
    auto p = c.plan<ConvPlan>(key, [&] { return make_plan(c, x, w, y, has_bias, g, act); });
    run_conv_plan(c, *p, x.raw(), w.raw(), has_bias ? bias.raw() : nullptr, y.raw());
  });
}

}  // namespace dacpp::cpu
