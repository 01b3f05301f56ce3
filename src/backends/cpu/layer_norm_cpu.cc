// layer_norm on oneDNN layer_normalization (forward inference, scale + shift, statistics computed on the fly).
#include <string>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

struct LayerNormPlan : Plan {
  dnnl::layer_normalization_forward prim;
  dnnl::memory::desc data, param;
};

std::shared_ptr<LayerNormPlan> make_plan(CpuContext& c, int64_t rows, int64_t cols, float eps) {
  auto p = std::make_shared<LayerNormPlan>();
  p->data = f32_desc({rows, cols}, tag::ab);
  p->param = f32_desc({cols}, tag::a);
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, p->data, eps, flags);
  p->prim = dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(d, c.engine()));
  return p;
}

}  // namespace

void layer_norm(CpuContext& c, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "layer_norm: oneDNN layer_normalization");
  const int64_t cols = x.dim(-1), rows = x.numel() / cols;
  if (rows == 0) return;
  c.pool().bind_to_current_thread();
  const std::string key = str_cat("layer_norm r", rows, " c", cols, " e", float_bits(eps));
  dnnl_call("layer_norm", [&] {
    auto p = c.plan<LayerNormPlan>(key, [&] { return make_plan(c, rows, cols, eps); });
    p->prim.execute(c.stream(), {{DNNL_ARG_SRC, wrap(p->data, c.engine(), x.raw())},
                                 {DNNL_ARG_DST, wrap(p->data, c.engine(), y.raw())},
                                 {DNNL_ARG_SCALE, wrap(p->param, c.engine(), gamma.raw())},
                                 {DNNL_ARG_SHIFT, wrap(p->param, c.engine(), beta.raw())}});
    c.stream().wait();
  });
}

}  // namespace dacpp::cpu
