// attention on oneDNN: per batch b and chunk of heads × query rows,
//   S[hb, qc, Nk] = scale · Q[hb, qc, D] · K[hb, Nk, D]ᵀ   (batched matmul, K read transposed through strides)
//   S = softmax(S) along Nk                               (in place)
//   out[b, q0:q0+qc, h0:h0+hb, :] = S · V[hb, Nk, D]       (written token-major through dst strides)
// Only the scores of one chunk live at a time (Scratch::Work), bounded by CpuContext::work_limit_bytes().
#include <algorithm>
#include <string>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"
#include "core/fault.h"

namespace dacpp::cpu {
namespace {

struct Dims {
  int64_t h, nq, nk, d;
};

struct AttentionPlan : Plan {
  dnnl::matmul qk, sv;
  dnnl::softmax_forward softmax;
  dnnl::memory::desc q, kt, s, s2d, v, o;
};

std::shared_ptr<AttentionPlan> make_plan(CpuContext& c, const Dims& g, int64_t hb, int64_t qc, float scale) {
  auto p = std::make_shared<AttentionPlan>();
  p->q = f32_desc({hb, qc, g.d}, {g.nq * g.d, g.d, 1});
  p->kt = f32_desc({hb, g.d, g.nk}, {g.nk * g.d, 1, g.d});
  p->s = f32_desc({hb, qc, g.nk}, tag::abc);
  p->s2d = f32_desc({hb * qc, g.nk}, tag::ab);
  p->v = f32_desc({hb, g.nk, g.d}, {g.nk * g.d, g.d, 1});
  p->o = f32_desc({hb, qc, g.d}, {g.d, g.h * g.d, 1});
  dnnl::primitive_attr scaled;
  scaled.set_output_scales(0, {scale});
  p->qk = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(p->q, p->kt, p->s), scaled, c.engine()));
  dnnl::softmax_forward::desc sd(dnnl::prop_kind::forward_inference, p->s2d, 1);
  p->softmax = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(sd, c.engine()));
  p->sv = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(p->s, p->v, p->o), c.engine()));
  return p;
}

// Heads per chunk and query rows per chunk so that hb·qc·Nk floats fit the work limit (at least one row).
void chunking(const Dims& g, size_t limit_bytes, int64_t& hb, int64_t& qc) {
  const int64_t budget = std::max<int64_t>(1, static_cast<int64_t>(limit_bytes / sizeof(float)));
  const int64_t min_rows = std::min<int64_t>(g.nq, 32);
  hb = std::clamp<int64_t>(budget / (min_rows * g.nk), 1, g.h);
  qc = std::clamp<int64_t>(budget / (hb * g.nk), 1, g.nq);
}

void run_chunk(CpuContext& c, const AttentionPlan& p, const float* q, const float* k, const float* v, float* s,
               float* o) {
  const dnnl::engine& e = c.engine();
  dnnl::memory sm = wrap(p.s, e, s);
  p.qk.execute(c.stream(), {{DNNL_ARG_SRC, wrap(p.q, e, q)}, {DNNL_ARG_WEIGHTS, wrap(p.kt, e, k)},
                            {DNNL_ARG_DST, sm}});
  dnnl::memory s2 = wrap(p.s2d, e, s);
  p.softmax.execute(c.stream(), {{DNNL_ARG_SRC, s2}, {DNNL_ARG_DST, s2}});
  p.sv.execute(c.stream(), {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, wrap(p.v, e, v)},
                            {DNNL_ARG_DST, wrap(p.o, e, o)}});
}

}  // namespace

void attention(CpuContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "attention: oneDNN matmul/softmax");
  const Dims g{q.dim(1), q.dim(2), k.dim(2), q.dim(3)};
  const int64_t batch = q.dim(0);
  if (batch == 0 || g.h == 0 || g.nq == 0 || g.d == 0) return;
  c.pool().bind_to_current_thread();
  int64_t hb = 0, qc = 0;
  chunking(g, c.work_limit_bytes(), hb, qc);
  float* s = static_cast<float*>(c.scratch(Scratch::Work, sizeof(float) * hb * qc * g.nk));
  const float* qp = static_cast<const float*>(q.raw());
  const float* kp = static_cast<const float*>(k.raw());
  const float* vp = static_cast<const float*>(v.raw());
  float* op = static_cast<float*>(out.raw());
  dnnl_call("attention", [&] {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h0 = 0; h0 < g.h; h0 += hb) {
        const int64_t nh = std::min(hb, g.h - h0);
        for (int64_t q0 = 0; q0 < g.nq; q0 += qc) {
          const int64_t nr = std::min(qc, g.nq - q0);
          const std::string key = str_cat("attention h", g.h, " nq", g.nq, " nk", g.nk, " d", g.d, " hb", nh,
                                          " qc", nr, " s", float_bits(scale));
          auto p = c.plan<AttentionPlan>(key, [&] { return make_plan(c, g, nh, nr, scale); });
          const int64_t bh = b * g.h + h0;
          run_chunk(c, *p, qp + (bh * g.nq + q0) * g.d, kp + bh * g.nk * g.d, vp + bh * g.nk * g.d, s,
                    op + ((b * g.nq + q0) * g.h + h0) * g.d);
        }
      }
    }
    c.stream().wait();
  });
}

// The heads are permuted into the Src scratch slot ([3, B, H, N, D]; attention itself uses only Work), so the
// result is exactly attention() on the split q, k, v. A row range other than all N takes its queries' rows into the
// Dst slot ([B, H, Nq, D]) first: attention's rows do not depend on one another, so they are the same bit for bit.
void attention_qkv(CpuContext& c, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out) {
  const int64_t b = qkv.dim(0), n = qkv.dim(1), d = qkv.dim(2) / 3 / heads, nq = out.dim(1);
  Tensor split = Tensor::view(c.scratch(Scratch::Src, qkv.nbytes()), {3, b, heads, n, d}, DType::F32, Device::cpu(),
                              nullptr, "attention_qkv heads");
  permute(c, qkv.reshape({b, n, 3, heads, d}), {2, 0, 3, 1, 4}, split);
  const Shape hs{b, heads, n, d};
  Tensor q = split.slice0(0, 1).reshape(hs);
  if (row0 != 0 || nq != n) {
    Tensor rows = Tensor::view(c.scratch(Scratch::Dst, sizeof(float) * static_cast<size_t>(b * heads * nq * d)),
                               {b, heads, nq, d}, DType::F32, Device::cpu(), nullptr, "attention_qkv query rows");
    const auto* src = static_cast<const float*>(q.raw());
    auto* dst = static_cast<float*>(rows.raw());
    for (int64_t bh = 0; bh < b * heads; ++bh) std::copy_n(src + (bh * n + row0) * d, nq * d, dst + bh * nq * d);
    q = rows;
  }
  attention(c, q, split.slice0(1, 2).reshape(hs), split.slice0(2, 3).reshape(hs), scale, out);
}

}  // namespace dacpp::cpu
