// The fused bf16 attention kernel (attention_fused_cpu.h). Only the functions marked DACPP_AVX512_BF16 use the
// instruction set, and only once fused_bf16_attention_fits() has seen it: the file is compiled for the baseline ISA
// (no -mavx512 flags, so no inline function of a shared header is ever emitted with AVX-512 instructions).
#include "backends/cpu/attention_fused_cpu.h"

// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_*(), a deliberate self-initialisation that
// -Wmaybe-uninitialized reports once inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_ops.h"

#define DACPP_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

namespace dacpp::cpu {
namespace {

constexpr int64_t kGroup = 64;  // keys per packed group of K: four vectors of 16 lanes
constexpr int kQkRows = 6;      // query rows per q·kᵀ tile: 6 × 4 accumulators + 4 keys + 1 query pair in 32 zmm

int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}
size_t align64(size_t bytes) {
  return (bytes + 63) / 64 * 64;
}

// Sizes of one call. Pairs: VDPBF16PS multiplies two bf16 pairs held in one 32-bit lane.
struct Geometry {
  int64_t d, dp;          // head dim, and its pairs (d / 2)
  int64_t nk, nkg;        // keys, and keys rounded up to whole groups (the score rows' length)
  int64_t kp;             // key pairs, ceil(nk / 2) (the probability rows' length in pairs)
  int64_t rows;           // query rows per block
  size_t k_pack, v_pack;  // u32 per head of packed K ([nkg / 64][dp][64]) and V ([kp][d])
  size_t block_bytes;     // one thread's buffers: scores, probabilities, queries, inverse sums
};

Geometry geometry(int64_t nk, int64_t d) {
  Geometry g{};
  g.d = d;
  g.dp = d / 2;
  g.nk = nk;
  g.nkg = round_up(nk, kGroup);
  g.kp = (nk + 1) / 2;
  // A block's scores and probabilities within ~256 KiB (a core's L2 holds them beside K and V); whole q·kᵀ tiles.
  const int64_t per_row = 4 * g.nkg + 4 * g.kp;
  g.rows = std::clamp<int64_t>((int64_t{256} << 10) / per_row / kQkRows * kQkRows, kQkRows, 8 * kQkRows);
  g.k_pack = static_cast<size_t>(g.nkg * g.dp);
  g.v_pack = static_cast<size_t>(g.kp * d);
  g.block_bytes = align64(sizeof(float) * static_cast<size_t>(g.rows * g.nkg)) +
                  align64(sizeof(uint32_t) * static_cast<size_t>(g.rows * g.kp)) +
                  align64(sizeof(uint32_t) * static_cast<size_t>(g.rows * g.dp)) +
                  align64(sizeof(float) * static_cast<size_t>(g.rows));
  return g;
}

// ---- AVX512-BF16 kernels ----

// n f32 rounded to bf16 (n / 2 pairs; an odd n leaves the last pair's upper half as it was).
DACPP_AVX512_BF16 void to_pairs_any(const float* x, int64_t n, uint32_t* pairs) {
  auto* h = reinterpret_cast<uint16_t*>(pairs);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(h + i, m, (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// Keys [g·64, g·64 + 64) of one head into group g: out[p][j] = (k_j[2p], k_j[2p + 1]); keys past nk are zero.
DACPP_AVX512_BF16 void pack_key_group(const float* k, int64_t token, const Geometry& g, int64_t group, uint32_t* out,
                                      uint32_t* row) {
  for (int64_t j = 0; j < kGroup; ++j) {
    const int64_t key = group * kGroup + j;
    if (key < g.nk) {
      to_pairs_any(k + key * token, g.d, row);
      for (int64_t p = 0; p < g.dp; ++p) out[p * kGroup + j] = row[p];
    } else {
      for (int64_t p = 0; p < g.dp; ++p) out[p * kGroup + j] = 0;
    }
  }
}

// Key pairs [p0, p1) of one head: out[p][e] = (v_{2p}[e], v_{2p+1}[e]); a key past nk is zero.
DACPP_AVX512_BF16 void pack_value_pairs(const float* v, int64_t token, const Geometry& g, int64_t p0, int64_t p1,
                                        uint32_t* out) {
  for (int64_t p = p0; p < p1; ++p) {
    const float* a = v + 2 * p * token;
    const float* b = 2 * p + 1 < g.nk ? v + (2 * p + 1) * token : nullptr;
    uint32_t* o = out + p * g.d;
    for (int64_t e = 0; e < g.d; e += 16) {
      const __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(a + e)));
      const __m512i hi =
          b ? _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(b + e))) : _mm512_setzero_si512();
      _mm512_storeu_si512(o + e, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
}

// s[r][0, 64) = scale · q_r · k_j for MR query rows (q: pairs, ldq apart) against one packed key group.
template <int MR>
DACPP_AVX512_BF16 void qk_tile(const uint32_t* q, int64_t ldq, const uint32_t* kg, int64_t dp, float scale, float* s,
                               int64_t lds) {
  __m512 acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int i = 0; i < 4; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t p = 0; p < dp; ++p) {
    const uint32_t* b = kg + p * kGroup;
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
    const __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + 32), b3 = (__m512bh)_mm512_loadu_si512(b + 48);
    for (int r = 0; r < MR; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(q[r * ldq + p]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
      acc[r][2] = _mm512_dpbf16_ps(acc[r][2], a, b2);
      acc[r][3] = _mm512_dpbf16_ps(acc[r][3], a, b3);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  for (int r = 0; r < MR; ++r)
    for (int i = 0; i < 4; ++i) _mm512_storeu_ps(s + r * lds + 16 * i, _mm512_mul_ps(acc[r][i], sc));
}

// o[r][0, 16·NV) = inv[r] · Σ_p (P_r[2p] v_{2p} + P_r[2p+1] v_{2p+1}) for MR rows (p: pairs, ldp apart).
template <int MR, int NV>
DACPP_AVX512_BF16 void pv_tile(const uint32_t* p, int64_t ldp, const uint32_t* vp, int64_t kp, const float* inv,
                               float* o, int64_t ldo) {
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t j = 0; j < kp; ++j) {
    __m512bh b[NV];
    for (int i = 0; i < NV; ++i) b[i] = (__m512bh)_mm512_loadu_si512(vp + j * 16 * NV + 16 * i);
    for (int r = 0; r < MR; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(p[r * ldp + j]));
      for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_dpbf16_ps(acc[r][i], a, b[i]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    const __m512 sc = _mm512_set1_ps(inv[r]);
    for (int i = 0; i < NV; ++i) _mm512_storeu_ps(o + r * ldo + 16 * i, _mm512_mul_ps(acc[r][i], sc));
  }
}

// e^x for x ≤ 0 (relative error ~1e-7; below −87 it returns e^−87, which callers mask).
DACPP_AVX512_BF16 inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 e = _mm512_set1_ps(1.f / 720);
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.f / 120));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.f / 24));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.f / 6));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(0.5f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(e, n);
}

// One score row: probs[0, 2·kp) = bf16(e^(s_j − max)) (zero past nk); returns 1 / Σ e^(s_j − max).
DACPP_AVX512_BF16 float softmax_row(const float* s, int64_t nk, int64_t kp, uint32_t* probs) {
  __m512 mx = _mm512_set1_ps(-INFINITY);
  int64_t j = 0;
  for (; j + 16 <= nk; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(s + j));
  const __mmask16 tail = static_cast<__mmask16>((1u << (nk - j)) - 1);
  if (j < nk) mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), tail, s + j));
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  auto* h = reinterpret_cast<uint16_t*>(probs);
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j + 16 <= nk; j += 16) {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(s + j), m));
    sum = _mm512_add_ps(sum, e);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + j), (__m256i)_mm512_cvtneps_pbh(e));
  }
  if (j < nk) {
    const __m512 e = _mm512_maskz_mov_ps(tail, exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, s + j), m)));
    sum = _mm512_add_ps(sum, e);
    _mm256_mask_storeu_epi16(h + j, tail, (__m256i)_mm512_cvtneps_pbh(e));
  }
  for (int64_t t = nk; t < 2 * kp; ++t) h[t] = 0;
  return 1.f / _mm512_reduce_add_ps(sum);
}

template <int MR>
DACPP_AVX512_BF16 void qk_rows(int rows, const uint32_t* q, int64_t ldq, const uint32_t* kg, int64_t dp, float scale,
                               float* s, int64_t lds) {
  for (; rows >= MR; rows -= MR, q += MR * ldq, s += MR * lds) qk_tile<MR>(q, ldq, kg, dp, scale, s, lds);
  switch (rows) {
    case 5:
      return qk_tile<5>(q, ldq, kg, dp, scale, s, lds);
    case 4:
      return qk_tile<4>(q, ldq, kg, dp, scale, s, lds);
    case 3:
      return qk_tile<3>(q, ldq, kg, dp, scale, s, lds);
    case 2:
      return qk_tile<2>(q, ldq, kg, dp, scale, s, lds);
    case 1:
      return qk_tile<1>(q, ldq, kg, dp, scale, s, lds);
    default:
      return;
  }
}

// Rows of one block through p·v, NV vectors of 16 output values per row: MR = 6 rows a tile (3 for NV > 4).
template <int NV>
DACPP_AVX512_BF16 void pv_rows(int rows, const uint32_t* p, int64_t ldp, const uint32_t* vp, int64_t kp,
                               const float* inv, float* o, int64_t ldo) {
  constexpr int MR = NV > 4 ? 3 : 6;
  for (; rows >= MR; rows -= MR, p += MR * ldp, inv += MR, o += MR * ldo) pv_tile<MR, NV>(p, ldp, vp, kp, inv, o, ldo);
  switch (rows) {
    case 5:
      return pv_tile<5, NV>(p, ldp, vp, kp, inv, o, ldo);
    case 4:
      return pv_tile<4, NV>(p, ldp, vp, kp, inv, o, ldo);
    case 3:
      return pv_tile<3, NV>(p, ldp, vp, kp, inv, o, ldo);
    case 2:
      return pv_tile<2, NV>(p, ldp, vp, kp, inv, o, ldo);
    case 1:
      return pv_tile<1, NV>(p, ldp, vp, kp, inv, o, ldo);
    default:
      return;
  }
}

using PvRows = void (*)(int, const uint32_t*, int64_t, const uint32_t*, int64_t, const float*, float*, int64_t);

PvRows pv_rows_for(int64_t nv) {
  static constexpr PvRows table[8] = {pv_rows<1>, pv_rows<2>, pv_rows<3>, pv_rows<4>,
                                      pv_rows<5>, pv_rows<6>, pv_rows<7>, pv_rows<8>};
  return table[nv - 1];
}

// One block of `rows` query rows of one head: queries to pairs, the scores group by group, the softmax row by row,
// then p·v into out (ldo floats between rows).
DACPP_AVX512_BF16 void run_block(const Geometry& g, const float* q, int64_t q_token, int rows, const uint32_t* kpack,
                                 const uint32_t* vpack, float scale, void* buffers, float* out, int64_t ldo) {
  auto* base = static_cast<char*>(buffers);
  auto* s = reinterpret_cast<float*>(base);
  base += align64(sizeof(float) * static_cast<size_t>(g.rows * g.nkg));
  auto* probs = reinterpret_cast<uint32_t*>(base);
  base += align64(sizeof(uint32_t) * static_cast<size_t>(g.rows * g.kp));
  auto* qp = reinterpret_cast<uint32_t*>(base);
  base += align64(sizeof(uint32_t) * static_cast<size_t>(g.rows * g.dp));
  auto* inv = reinterpret_cast<float*>(base);
  for (int r = 0; r < rows; ++r) to_pairs_any(q + r * q_token, g.d, qp + r * g.dp);
  for (int64_t group = 0; group < g.nkg / kGroup; ++group)
    qk_rows<kQkRows>(rows, qp, g.dp, kpack + group * g.dp * kGroup, g.dp, scale, s + group * kGroup, g.nkg);
  for (int r = 0; r < rows; ++r) inv[r] = softmax_row(s + r * g.nkg, g.nk, g.kp, probs + r * g.kp);
  pv_rows_for(g.d / 16)(rows, probs, g.kp, vpack, g.kp, inv, out, ldo);
}

bool cpu_has_avx512_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bf16");
}

}  // namespace

bool fused_bf16_attention_fits(int64_t d) {
  static const bool isa = cpu_has_avx512_bf16() && bf16_support().native && bf16_support().refusal.empty();
  return isa && d > 0 && d % 16 == 0 && d <= 128;
}

void fused_bf16_attention(CpuContext& c, const AttnRows& q, const AttnRows& k, const AttnRows& v, int64_t batch,
                          int64_t heads, int64_t nq, int64_t nk, int64_t d, float scale, float* out) {
  if (batch == 0 || heads == 0 || nq == 0 || nk == 0) return;
  const Geometry g = geometry(nk, d);
  const int64_t bh = batch * heads, groups = g.nkg / kGroup;
  const size_t per_head = g.k_pack + g.v_pack;
  auto* packs = static_cast<uint32_t*>(c.scratch(Scratch::Src, sizeof(uint32_t) * per_head * static_cast<size_t>(bh)));
  const ThreadPool& pool = c.pool();
  const size_t row_bytes = align64(sizeof(uint32_t) * static_cast<size_t>(g.dp));
  auto* work =
      static_cast<char*>(c.scratch(Scratch::Work, (g.block_bytes + row_bytes) * static_cast<size_t>(pool.size())));
  // K and V of every head, a group of 64 keys (32 key pairs) per task.
  pool.parallel_chunks(bh * groups, 1, [&](int t, int64_t t0, int64_t t1) {
    auto* row =
        reinterpret_cast<uint32_t*>(work + static_cast<size_t>(t) * (g.block_bytes + row_bytes) + g.block_bytes);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t i = task / groups, group = task % groups, b = i / heads, h = i % heads;
      uint32_t* pack = packs + static_cast<size_t>(i) * per_head;
      pack_key_group(k.base + b * k.batch + h * k.head, k.token, g, group, pack + group * g.dp * kGroup, row);
      const int64_t p0 = group * kGroup / 2, p1 = std::min(g.kp, p0 + kGroup / 2);
      pack_value_pairs(v.base + b * v.batch + h * v.head, v.token, g, p0, p1, pack + g.k_pack);
    }
  });
  // Blocks of query rows; a thread's consecutive blocks share a head, so its K and V stay in cache.
  const int64_t blocks = (nq + g.rows - 1) / g.rows;
  pool.parallel_chunks(bh * blocks, 1, [&](int t, int64_t t0, int64_t t1) {
    void* buffers = work + static_cast<size_t>(t) * (g.block_bytes + row_bytes);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t i = task / blocks, r0 = task % blocks * g.rows, b = i / heads, h = i % heads;
      const int rows = static_cast<int>(std::min(g.rows, nq - r0));
      const uint32_t* pack = packs + static_cast<size_t>(i) * per_head;
      run_block(g, q.base + b * q.batch + h * q.head + r0 * q.token, q.token, rows, pack, pack + g.k_pack, scale,
                buffers, out + ((b * nq + r0) * heads + h) * d, heads * d);
    }
  });
}

}  // namespace dacpp::cpu
