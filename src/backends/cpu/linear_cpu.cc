// linear on oneDNN matmul: y[M,N] = act(x[M,K] · w[N,K]ᵀ + b). The torch [N, K] weight is described to oneDNN as
// a [K, N] matrix with strides {1, K} (format "ba"), so it is read in place, never copied. When either operand is
// bf16 (a model loaded in bf16) the product runs in bf16 with f32 accumulation: an f32 x is first rounded into a bf16
// scratch copy (round_to_bf16: ~3× oneDNN's reorder for it here), an f32 weight by a planned reorder.
#include <atomic>
#include <optional>
#include <string>

#include "backends/cpu/bf16_round_cpu.h"
#include "backends/cpu/conv_plan.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"
#include "core/fault.h"
#include "formats/half.h"

namespace dacpp::cpu {
namespace {

// A matmul's plan: the primitive, its operands' descriptors, and how x and the weight reach it.
struct MatmulPlan : Plan {
  dnnl::matmul prim;
  dnnl::memory::desc src, wei, bias, dst;  // the primitive's operands
  bool round_src = false;                  // x is f32, the product bf16
  std::optional<dnnl::reorder> wei_in;     // the weight as given → the primitive's, where they differ
};

struct LinearPlan : MatmulPlan {
  dnnl::memory::desc wei_user;  // the caller's weight, where its dtype differs
};

// Runs p on x (rounded into the Src scratch where p.round_src), the weight as staged, bias and y in place. Call
// inside dnnl_call().
void execute_matmul(CpuContext& c, const MatmulPlan& p, const Tensor& x, const dnnl::memory& wei, const Tensor& bias,
                    Tensor& y) {
  dnnl::memory src = wrap(p.src, c.engine(), x.raw());
  if (p.round_src) {
    src = dnnl::memory(p.src, c.engine(), c.scratch(Scratch::Src, p.src.get_size()));
    round_to_bf16(c, x.data<float>(), static_cast<uint16_t*>(src.get_data_handle()), x.numel());
  }
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, wrap(p.dst, c.engine(), y.raw())}};
  if (bias.defined()) args[DNNL_ARG_BIAS] = wrap(p.bias, c.engine(), bias.raw());
  p.prim.execute(c.stream(), args);
  c.stream().wait();
}

// act after the bias; with `add`, the result added to y's values (oneDNN's sum post-op: y ← y + (x·wᵀ + b)).
dnnl::primitive_attr epilogue_attr(Epilogue act, bool add) {
  dnnl::primitive_attr attr;
  dnnl::post_ops po;
  if (add) po.append_sum(1.f);
  if (act == Epilogue::Gelu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
  if (act == Epilogue::Relu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(po);
  return attr;
}

std::shared_ptr<LinearPlan> make_plan(CpuContext& c, int64_t m, int64_t k, int64_t n, bool has_bias, Epilogue act,
                                      bool add, dt x_dt, dt w_dt) {
  auto p = std::make_shared<LinearPlan>();
  const dt prod = x_dt == dt::bf16 || w_dt == dt::bf16 ? dt::bf16 : dt::f32;
  p->src = dnnl::memory::desc({m, k}, prod, tag::ab);
  p->wei = dnnl::memory::desc({k, n}, prod, tag::ba);
  p->wei_user = dnnl::memory::desc({k, n}, w_dt, tag::ba);
  p->round_src = x_dt != prod;
  if (w_dt != prod)
    p->wei_in = dnnl::reorder(dnnl::reorder::primitive_desc(c.engine(), p->wei_user, c.engine(), p->wei));
  p->dst = f32_desc({m, n}, tag::ab);
  if (has_bias) p->bias = f32_desc({1, n}, tag::ab);
  dnnl::matmul::desc d = has_bias ? dnnl::matmul::desc(p->src, p->wei, p->bias, p->dst)
                                  : dnnl::matmul::desc(p->src, p->wei, p->dst);
  p->prim = dnnl::matmul(dnnl::matmul::primitive_desc(d, epilogue_attr(act, add), c.engine()));
  return p;
}

// The packed form of a weight (cpu_ops.h): its layout, as the matmul chose it for kPackRows rows, and its bytes.
struct PackedImpl {
  dnnl::memory::desc desc;
  std::shared_ptr<void> bytes;
};

// The rows the packing asks the matmul about. The layout did not depend on the rows here (1 to 21904 rows: one
// layout per dtype); where it does, linear_packed reorders.
constexpr int64_t kPackRows = 1024;

}  // namespace

std::optional<PackedWeight> pack_linear_weight(const Tensor& w, DType product) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "linear weight packing: oneDNN reorder");
  const int64_t n = w.dim(0), k = w.dim(1);
  const dt from = w.dtype() == DType::BF16 ? dt::bf16 : dt::f32, to = product == DType::BF16 ? dt::bf16 : dt::f32;
  std::optional<PackedWeight> packed = dnnl_call("linear weight packing", [&]() -> std::optional<PackedWeight> {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(eng);
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(dnnl::memory::desc({kPackRows, k}, to, tag::ab), dnnl::memory::desc({k, n}, to, tag::any),
                           f32_desc({kPackRows, n}, tag::ab)),
        eng);
    if (pd.weights_desc() == dnnl::memory::desc({k, n}, to, tag::ba)) return std::nullopt;
    auto impl = std::make_shared<PackedImpl>();
    impl->desc = pd.weights_desc();
    impl->bytes = host_alloc(impl->desc.get_size(), str_cat("packed weight '", w.name(), "'"));
    dnnl::memory src = wrap(dnnl::memory::desc({k, n}, from, tag::ba), eng, w.raw()),
                 dst(impl->desc, eng, impl->bytes.get());
    dnnl::reorder(src, dst).execute(stream, src, dst);
    stream.wait();
    return PackedWeight{n, k, product, w.name(), std::move(impl)};
  });
  if (packed && from == dt::f32 && to == dt::bf16) {
    // Rounded to bf16 here: a value past bf16's range became ±inf (the blocked layout's padding is zero).
    const auto& impl = *static_cast<const PackedImpl*>(packed->impl.get());
    const auto* h = static_cast<const uint16_t*>(impl.bytes.get());
    const size_t count = impl.desc.get_size() / sizeof(uint16_t);
    std::atomic<bool> overflow{false};
    ThreadPool().parallel_for(static_cast<int64_t>(count), int64_t{1} << 18, [&](int64_t b, int64_t e) {
      uint32_t inf = 0;  // branch-free, so the loop vectorises
      for (int64_t i = b; i < e; ++i) inf |= static_cast<uint32_t>(bf16_exponent_all_ones(h[i]));
      if (inf != 0) overflow.store(true, std::memory_order_relaxed);
    });
    if (overflow.load()) throw_bf16_overflow(w.name(), w.data<float>(), w.numel());
  }
  return packed;
}

void linear_packed(CpuContext& c, const Tensor& x, const PackedWeight& w, const Tensor& bias, Tensor& y, Epilogue act,
                   bool add) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "linear: oneDNN matmul");
  const int64_t n = w.n, k = w.k, m = x.numel() / k;
  if (m == 0 || n == 0) return;
  c.pool().bind_to_current_thread();
  const bool has_bias = bias.defined();
  const auto& impl = *static_cast<const PackedImpl*>(w.impl.get());
  const dt prod = w.dtype == DType::BF16 ? dt::bf16 : dt::f32;
  const std::string key = str_cat("linear_packed m", m, " k", k, " n", n, " b", has_bias, " a", static_cast<int>(act),
                                  " add", add, " w", dtype_name(w.dtype));
  dnnl_call("linear", [&] {
    auto p = c.plan<MatmulPlan>(key, [&] {
      auto pl = std::make_shared<MatmulPlan>();
      pl->src = dnnl::memory::desc({m, k}, prod, tag::ab);
      pl->dst = f32_desc({m, n}, tag::ab);
      if (has_bias) pl->bias = f32_desc({1, n}, tag::ab);
      const dnnl::memory::desc wany({k, n}, prod, tag::any);
      dnnl::matmul::desc d =
          has_bias ? dnnl::matmul::desc(pl->src, wany, pl->bias, pl->dst) : dnnl::matmul::desc(pl->src, wany, pl->dst);
      dnnl::matmul::primitive_desc pd(d, epilogue_attr(act, add), c.engine());
      pl->wei = pd.weights_desc();
      pl->prim = dnnl::matmul(pd);
      pl->round_src = prod == dt::bf16;
      if (pl->wei != impl.desc)
        pl->wei_in = dnnl::reorder(dnnl::reorder::primitive_desc(c.engine(), impl.desc, c.engine(), pl->wei));
      return pl;
    });
    execute_matmul(c, *p, x, staged_operand(c, p->wei_in, impl.desc, p->wei, impl.bytes.get(), Scratch::Weights), bias,
                   y);
  });
}

namespace {

void run_linear(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                bool add) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "linear: oneDNN matmul");
  const int64_t n = w.dim(0), k = w.dim(1), m = x.numel() / k;
  if (m == 0 || n == 0) return;
  c.pool().bind_to_current_thread();
  const bool has_bias = bias.defined();
  const dt x_dt = x.dtype() == DType::BF16 ? dt::bf16 : dt::f32, w_dt = w.dtype() == DType::BF16 ? dt::bf16 : dt::f32;
  const std::string key = str_cat("linear m", m, " k", k, " n", n, " b", has_bias, " a", static_cast<int>(act), " add",
                                  add, " x", dtype_name(x.dtype()), " w", dtype_name(w.dtype()));
  dnnl_call("linear", [&] {
    auto p = c.plan<LinearPlan>(key, [&] { return make_plan(c, m, k, n, has_bias, act, add, x_dt, w_dt); });
    execute_matmul(c, *p, x, staged_operand(c, p->wei_in, p->wei_user, p->wei, w.raw(), Scratch::Weights), bias, y);
  });
}

}  // namespace

void linear(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act) {
  run_linear(c, x, w, bias, y, act, /*add=*/false);
}

void linear_add(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  run_linear(c, x, w, bias, y, Epilogue::None, /*add=*/true);
}

}  // namespace dacpp::cpu
