// linear on oneDNN matmul: y[M,N] = act(x[M,K] · w[N,K]ᵀ + b). The torch [N, K] weight is described to oneDNN as
// a [K, N] matrix with strides {1, K} (format "ba"), so it is read in place, never copied.
#include <string>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

struct LinearPlan : Plan {
  dnnl::matmul prim;
  dnnl::memory::desc src, wei, bias, dst;
};

dnnl::primitive_attr epilogue_attr(Epilogue act) {
  dnnl::primitive_attr attr;
  dnnl::post_ops po;
  if (act == Epilogue::Gelu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
  if (act == Epilogue::Relu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(po);
  return attr;
}

std::shared_ptr<LinearPlan> make_plan(CpuContext& c, int64_t m, int64_t k, int64_t n, bool has_bias,
                                      Epilogue act) {
  auto p = std::make_shared<LinearPlan>();
  p->src = f32_desc({m, k}, tag::ab);
  p->wei = f32_desc({k, n}, tag::ba);
  p->dst = f32_desc({m, n}, tag::ab);
  if (has_bias) p->bias = f32_desc({1, n}, tag::ab);
  dnnl::matmul::desc d = has_bias ? dnnl::matmul::desc(p->src, p->wei, p->bias, p->dst)
                                  : dnnl::matmul::desc(p->src, p->wei, p->dst);
  p->prim = dnnl::matmul(dnnl::matmul::primitive_desc(d, epilogue_attr(act), c.engine()));
  return p;
}

}  // namespace

void linear(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "linear: oneDNN matmul");
  const int64_t n = w.dim(0), k = w.dim(1), m = x.numel() / k;
  if (m == 0 || n == 0) return;
  c.pool().bind_to_current_thread();
  const bool has_bias = bias.defined();
  const std::string key = str_cat("linear m", m, " k", k, " n", n, " b", has_bias, " a", static_cast<int>(act));
  dnnl_call("linear", [&] {
    auto p = c.plan<LinearPlan>(key, [&] { return make_plan(c, m, k, n, has_bias, act); });
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, wrap(p->src, c.engine(), x.raw())},
        {DNNL_ARG_WEIGHTS, wrap(p->wei, c.engine(), w.raw())},
        {DNNL_ARG_DST, wrap(p->dst, c.engine(), y.raw())}};
    if (has_bias) args[DNNL_ARG_BIAS] = wrap(p->bias, c.engine(), bias.raw());
    p->prim.execute(c.stream(), args);
    c.stream().wait();
  });
}

}  // namespace dacpp::cpu
