// attention on oneDNN, where the fused kernel does not run (attention_fused_cpu.h: CPUs without AVX-512, bf16
// without AVX512-BF16, head dims other than multiples of 16 up to 128, CpuContext::set_fused_attention(false)): per
// batch b and chunk of heads × query rows,
//   S[hb, qc, Nk] = scale · Q[hb, qc, D] · K[hb, Nk, D]ᵀ   (batched matmul, K read transposed through strides)
//   P = softmax(S) along Nk                               (in place in f32; into a bf16 copy for bf16 products)
//   out[b, q0:q0+qc, h0:h0+hb, :] = P · V[hb, Nk, D]       (bf16: into a dense O, then copied token-major)
// In bf16 both products take and give dense batches: oneDNN's brgemm matmul refuses a batch whose stride is not
// its rows × cols (a chunk's query rows of several heads; the token-major out) and falls back to its gemm:jit
// implementation, whose bf16 is far slower than brgemm on AMX (DA2-L bf16 936 → 724 ms on the 16-core Xeon,
// session 31). So a chunk's query rows are gathered first when they are not one run of memory, and O goes through
// a dense buffer. f32 reads and writes in place through strides: its gemm:jit is as fast as brgemm there, and the
// dense form measured slower in f32 on the same Xeon (DA2-S/B/L 164/373/1408 → 224/484/1506 ms).
// Only one chunk's scores, queries and outputs live at a time (Scratch::Work, and Scratch::Weights for bf16
// probabilities), bounded by CpuContext::work_limit_bytes(). With CpuContext::bf16_products() (a model loaded in
// bf16) Q, K, V and P are bf16 — both products on bf16 operands with f32 accumulation; the scores and the softmax
// stay f32.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cpu/attention_fused_cpu.h"
#include "backends/cpu/bf16_round_cpu.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"
#include "core/fault.h"
#include "formats/half.h"

namespace dacpp::cpu {
namespace {

// h heads of nq query rows against nk keys, head dim d; the q buffer holds qs rows per head (qs >= nq: a row range
// of a larger buffer) and k / v nk rows per head.
struct Dims {
  int64_t h, nq, nk, d, qs;
};

struct AttentionPlan : Plan {
  dnnl::matmul qk, sv;
  dnnl::primitive softmax;
  dnnl::memory::desc q, kt, s, s2d, p, p2d, v, o;
  bool bf16 = false;
  std::string impls;  // oneDNN's implementations of the two products, "qk / pv"
};

std::shared_ptr<AttentionPlan> make_plan(CpuContext& c, const Dims& g, int64_t hb, int64_t qc, float scale, bool bf16) {
  auto p = std::make_shared<AttentionPlan>();
  const dt t = bf16 ? dt::bf16 : dt::f32;
  p->bf16 = bf16;
  // bf16: dense batches (gathered queries, output through a buffer); f32: in place through strides (header).
  p->q = bf16 ? dnnl::memory::desc({hb, qc, g.d}, t, tag::abc)
              : dnnl::memory::desc({hb, qc, g.d}, t, {g.qs * g.d, g.d, 1});
  p->kt = dnnl::memory::desc({hb, g.d, g.nk}, t, {g.nk * g.d, 1, g.d});
  p->s = f32_desc({hb, qc, g.nk}, tag::abc);
  p->s2d = f32_desc({hb * qc, g.nk}, tag::ab);
  p->p = dnnl::memory::desc({hb, qc, g.nk}, t, tag::abc);
  p->p2d = dnnl::memory::desc({hb * qc, g.nk}, t, tag::ab);
  p->v = dnnl::memory::desc({hb, g.nk, g.d}, t, {g.nk * g.d, g.d, 1});
  p->o = bf16 ? f32_desc({hb, qc, g.d}, tag::abc) : f32_desc({hb, qc, g.d}, {g.d, g.h * g.d, 1});
  dnnl::primitive_attr scaled;
  scaled.set_output_scales(0, {scale});
  const dnnl::matmul::primitive_desc qk(dnnl::matmul::desc(p->q, p->kt, p->s), scaled, c.engine());
  p->qk = dnnl::matmul(qk);
  if (bf16) {
    dnnl::softmax_v2_forward::desc sd(dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_accurate, p->s2d,
                                      p->p2d, 1);
    p->softmax = dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(sd, c.engine()));
  } else {
    dnnl::softmax_forward::desc sd(dnnl::prop_kind::forward_inference, p->s2d, 1);
    p->softmax = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(sd, c.engine()));
  }
  const dnnl::matmul::primitive_desc sv(dnnl::matmul::desc(p->p, p->v, p->o), c.engine());
  p->sv = dnnl::matmul(sv);
  p->impls = str_cat(qk.impl_info_str(), " / ", sv.impl_info_str());
  return p;
}

// Heads per chunk and query rows per chunk so that hb·qc·Nk floats fit the work limit (at least one row).
void chunking(const Dims& g, size_t limit_bytes, int64_t& hb, int64_t& qc) {
  const int64_t budget = std::max<int64_t>(1, static_cast<int64_t>(limit_bytes / sizeof(float)));
  const int64_t min_rows = std::min<int64_t>(g.nq, 32);
  hb = std::clamp<int64_t>(budget / (min_rows * g.nk), 1, g.h);
  qc = std::clamp<int64_t>(budget / (hb * g.nk), 1, g.nq);
}

// One chunk: q points at its first query row in a [., qs, D] buffer (hb heads of qc rows each), k and v at its first
// head; o (hb · qc · D floats) takes the chunk's output densely and is then copied into out_rows, the chunk's first
// token row of out (H · D floats per token). qd (hb · qc · D elements) takes the query rows when they are not one run.
void run_chunk(CpuContext& c, const AttentionPlan& p, const Dims& g, int64_t hb, int64_t qc, const char* q,
               const void* k, const void* v, float* s, void* pb, void* qd, float* o, float* out_rows) {
  const dnnl::engine& e = c.engine();
  const size_t es = p.bf16 ? sizeof(uint16_t) : sizeof(float);
  const size_t row_bytes = static_cast<size_t>(g.d) * es;
  const void* qa = q;
  if (p.bf16 && hb > 1 && qc != g.qs) {
    auto* to = static_cast<char*>(qd);
    c.pool().parallel_for(hb, 1, [&](int64_t h0, int64_t h1) {
      for (int64_t h = h0; h < h1; ++h)
        std::memcpy(to + h * qc * row_bytes, q + h * g.qs * row_bytes, static_cast<size_t>(qc) * row_bytes);
    });
    qa = qd;
  }
  dnnl::memory sm = wrap(p.s, e, s);
  p.qk.execute(c.stream(),
               {{DNNL_ARG_SRC, wrap(p.q, e, qa)}, {DNNL_ARG_WEIGHTS, wrap(p.kt, e, k)}, {DNNL_ARG_DST, sm}});
  void* probs = p.bf16 ? pb : s;
  p.softmax.execute(c.stream(), {{DNNL_ARG_SRC, wrap(p.s2d, e, s)}, {DNNL_ARG_DST, wrap(p.p2d, e, probs)}});
  p.sv.execute(c.stream(), {{DNNL_ARG_SRC, wrap(p.p, e, probs)},
                            {DNNL_ARG_WEIGHTS, wrap(p.v, e, v)},
                            {DNNL_ARG_DST, wrap(p.o, e, p.bf16 ? o : out_rows)}});
  c.stream().wait();
  if (!p.bf16) return;
  // o[h, r, :] → out_rows[r, h, :]
  c.pool().parallel_for(qc, 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t h = 0; h < hb; ++h) std::copy_n(o + (h * qc + r) * g.d, g.d, out_rows + (r * g.h + h) * g.d);
  });
}

// q: [batch, H, qs, D] (rows [0, nq) of each head used), k, v: [batch, H, Nk, D], f32 or (bf16) bf16 values;
// out: [batch, nq, H, D] f32.
void run_attention(CpuContext& c, const Dims& g, int64_t batch, const void* q, const void* k, const void* v, bool bf16,
                   float scale, float* out) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "attention: oneDNN matmul/softmax");
  if (batch == 0 || g.h == 0 || g.nq == 0 || g.d == 0) return;
  c.pool().bind_to_current_thread();
  int64_t hb = 0, qc = 0;
  chunking(g, c.work_limit_bytes(), hb, qc);
  const size_t es = bf16 ? sizeof(uint16_t) : sizeof(float);
  // Work: the chunk's f32 scores, then its dense output and its gathered queries, each 64-byte aligned.
  const auto align = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  // (f32 reads and writes in place: no dense output or gathered queries.)
  const size_t scores = static_cast<size_t>(hb * qc * g.nk), rows = bf16 ? static_cast<size_t>(hb * qc * g.d) : 0;
  const size_t s_bytes = align(sizeof(float) * scores), o_bytes = align(sizeof(float) * rows);
  auto* work = static_cast<char*>(c.scratch(Scratch::Work, s_bytes + o_bytes + es * rows));
  float* s = reinterpret_cast<float*>(work);
  float* o = reinterpret_cast<float*>(work + s_bytes);
  void* qd = work + s_bytes + o_bytes;
  void* pb = bf16 ? c.scratch(Scratch::Weights, sizeof(uint16_t) * scores) : nullptr;
  const auto* qp = static_cast<const char*>(q);
  const auto* kp = static_cast<const char*>(k);
  const auto* vp = static_cast<const char*>(v);
  dnnl_call("attention", [&] {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h0 = 0; h0 < g.h; h0 += hb) {
        const int64_t nh = std::min(hb, g.h - h0);
        for (int64_t q0 = 0; q0 < g.nq; q0 += qc) {
          const int64_t nr = std::min(qc, g.nq - q0);
          const std::string key = str_cat("attention h", g.h, " nq", g.nq, " qs", g.qs, " nk", g.nk, " d", g.d, " hb",
                                          nh, " qc", nr, " s", float_bits(scale), bf16 ? " bf16" : "");
          auto p = c.plan<AttentionPlan>(key, [&] { return make_plan(c, g, nh, nr, scale, bf16); });
          const int64_t bh = b * g.h + h0;
          run_chunk(c, *p, g, nh, nr, qp + (bh * g.qs + q0) * g.d * es, kp + bh * g.nk * g.d * es,
                    vp + bh * g.nk * g.d * es, s, pb, qd, o, out + ((b * g.nq + q0) * g.h + h0) * g.d);
        }
      }
    }
  });
}

}  // namespace

std::string attention_impls(CpuContext& c, int64_t h, int64_t nq, int64_t nk, int64_t d, bool bf16) {
  const Dims g{h, nq, nk, d, nq};
  int64_t hb = 0, qc = 0;
  chunking(g, c.work_limit_bytes(), hb, qc);
  return dnnl_call("attention plan", [&] { return make_plan(c, g, hb, qc, 1.f, bf16)->impls; });
}

void attention(CpuContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out) {
  const Dims g{q.dim(1), q.dim(2), k.dim(2), q.dim(3), q.dim(2)};
  const int64_t batch = q.dim(0);
  const bool bf16 = c.bf16_products();
  if (c.fused_attention() && fused_attention_fits(g.d, bf16)) {
    const AttnRows qr{q.data<float>(), g.h * g.nq * g.d, g.nq * g.d, g.d};
    const AttnRows kr{k.data<float>(), g.h * g.nk * g.d, g.nk * g.d, g.d}, vr{v.data<float>(), kr.batch, kr.head, g.d};
    fused_attention(c, qr, kr, vr, batch, g.h, g.nq, g.nk, g.d, scale, bf16, static_cast<float*>(out.raw()));
    return;
  }
  if (!bf16) {
    run_attention(c, g, batch, q.raw(), k.raw(), v.raw(), false, scale, static_cast<float*>(out.raw()));
    return;
  }
  // bf16 products: q, k and v rounded into one bf16 copy (Scratch::Src) first.
  const int64_t nq = q.numel(), nkv = k.numel();
  auto* h = static_cast<uint16_t*>(c.scratch(Scratch::Src, sizeof(uint16_t) * static_cast<size_t>(nq + 2 * nkv)));
  const float* src[3] = {q.data<float>(), k.data<float>(), v.data<float>()};
  uint16_t* dst[3] = {h, h + nq, h + nq + nkv};
  for (int t = 0; t < 3; ++t) round_to_bf16(c, src[t], dst[t], t == 0 ? nq : nkv);
  run_attention(c, g, batch, dst[0], dst[1], dst[2], true, scale, static_cast<float*>(out.raw()));
}

// Where the fused kernel runs (attention_fused_cpu.h) it reads q, k and v in place. Otherwise the heads are permuted
// into the Src scratch slot ([3, B, H, N, D]; attention itself uses only Work and Weights), so
// the result is exactly attention() on the split q, k, v. A row range other than all N takes its queries' rows into
// the Dst slot first: attention's rows do not depend on one another, so they are the same bit for bit. For bf16
// products the split is written in bf16, rounding in the same pass, with only the rows' queries (dense, likewise).
void attention_qkv(CpuContext& c, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out) {
  const int64_t b = qkv.dim(0), n = qkv.dim(1), d = qkv.dim(2) / 3 / heads, nq = out.dim(1);
  if (c.fused_attention() && fused_attention_fits(d, c.bf16_products())) {
    // In place: q, k and v of token t, head h at t·3HD + h·D, + HD, + 2HD.
    const float* x = qkv.data<float>();
    const int64_t hd = heads * d, token = 3 * hd;
    const AttnRows q{x + row0 * token, n * token, d, token}, k{x + hd, n * token, d, token};
    const AttnRows v{x + 2 * hd, n * token, d, token};
    fused_attention(c, q, k, v, b, heads, nq, n, d, scale, c.bf16_products(), static_cast<float*>(out.raw()));
    return;
  }
  if (c.bf16_products()) {
    // q of the rows asked for, dense [B, H, Nq, D], then k and v [B, H, N, D] each.
    const int64_t qn = b * heads * nq * d, per = b * heads * n * d;
    auto* split = static_cast<uint16_t*>(c.scratch(Scratch::Src, sizeof(uint16_t) * static_cast<size_t>(qn + 2 * per)));
    uint16_t* kv = split + qn;
    const float* x = qkv.data<float>();
    // qkv [B, N, 3, H, D] → those, one token's 3·H·D values per step.
    c.pool().parallel_for(b * n, 16, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t bi = t / n, i = t % n;
        const bool query = i >= row0 && i < row0 + nq;
        for (int64_t j = query ? 0 : heads; j < 3 * heads; ++j) {
          const int64_t hi = j % heads;
          const float* row = x + (t * 3 * heads + j) * d;
          uint16_t* to = j < heads ? split + ((bi * heads + hi) * nq + i - row0) * d
                                   : kv + (j / heads - 1) * per + ((bi * heads + hi) * n + i) * d;
          for (int64_t e = 0; e < d; ++e) to[e] = f32_to_bf16(row[e]);
        }
      }
    });
    run_attention(c, Dims{heads, nq, n, d, nq}, b, split, kv, kv + per, true, scale, static_cast<float*>(out.raw()));
    return;
  }
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
