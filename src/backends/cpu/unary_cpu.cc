// unary on oneDNN eltwise (JIT-vectorised; exact-erf GELU, swish with alpha 1 = SiLU, ReLU, exp, logistic).
// The tensor is described as one flat dimension, so one plan serves every shape of the same size; in place allowed.
#include <string>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

struct UnaryPlan : Plan {
  dnnl::eltwise_forward prim;
  dnnl::memory::desc data;
};

dnnl::algorithm algorithm_of(UnaryKind kind, float& alpha) {
  alpha = 0.f;
  switch (kind) {
    case UnaryKind::Gelu: return dnnl::algorithm::eltwise_gelu_erf;
    case UnaryKind::Silu: alpha = 1.f; return dnnl::algorithm::eltwise_swish;
    case UnaryKind::Relu: return dnnl::algorithm::eltwise_relu;
    case UnaryKind::Exp: return dnnl::algorithm::eltwise_exp;
    case UnaryKind::Sigmoid: return dnnl::algorithm::eltwise_logistic;
  }
  DACPP_THROW(ErrorCode::Internal, "unary: unknown kind ", static_cast<int>(kind));
}

std::shared_ptr<UnaryPlan> make_plan(CpuContext& c, UnaryKind kind, int64_t n) {
  auto p = std::make_shared<UnaryPlan>();
  p->data = f32_desc({n}, tag::a);
  float alpha = 0.f;
  const dnnl::algorithm alg = algorithm_of(kind, alpha);
  dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, p->data, alpha, 0.f);
  p->prim = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(d, c.engine()));
  return p;
}

}  // namespace

void unary(CpuContext& c, UnaryKind kind, const Tensor& x, Tensor& y) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "unary: oneDNN eltwise");
  const int64_t n = x.numel();
  if (n == 0) return;
  c.pool().bind_to_current_thread();
  const std::string key = str_cat("unary k", static_cast<int>(kind), " n", n);
  dnnl_call("unary", [&] {
    auto p = c.plan<UnaryPlan>(key, [&] { return make_plan(c, kind, n); });
    p->prim.execute(c.stream(), {{DNNL_ARG_SRC, wrap(p->data, c.engine(), x.raw())},
                                 {DNNL_ARG_DST, wrap(p->data, c.engine(), y.raw())}});
    c.stream().wait();
  });
}

}  // namespace dacpp::cpu
