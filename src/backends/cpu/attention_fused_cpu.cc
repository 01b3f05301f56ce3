// The fused attention kernels (attention_fused_cpu.h). Only the functions marked DACPP_AVX512 / DACPP_AVX512_BF16
// use those instruction sets, and only once fused_attention_fits() has seen them: the file is compiled for the
// baseline ISA (no -mavx512 flags, so no inline function of a shared header is ever emitted with AVX-512).
#include "backends/cpu/attention_fused_cpu.h"

// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_*(), a deliberate self-initialisation that
// -Wmaybe-uninitialized reports once inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backends/cpu/bf16_round_cpu.h"
#include "backends/cpu/cpu_ops.h"

#define DACPP_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
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

// Sizes of one call. bf16: VDPBF16PS multiplies two bf16 pairs held in one 32-bit lane, so K is packed as d / 2
// pairs per key, V as key pairs, and the probabilities as pairs beside the scores. f32: K is packed as d values per
// key; V is read in place and the probabilities overwrite the scores.
struct Geometry {
  bool bf16;
  int64_t d, dp;          // head dim, and the 32-bit words of a packed key (bf16: d / 2 pairs; f32: d)
  int64_t nk, nkg;        // keys, and keys rounded up to whole groups (the score rows' length)
  int64_t kp;             // bf16: key pairs, ceil(nk / 2) (the probability rows' length in pairs)
  int64_t rows;           // query rows per block
  size_t k_pack, v_pack;  // 32-bit words per head of packed K ([nkg / 64][dp][64]) and V (bf16: [kp][d]; f32: 0)
  // One thread's buffers, byte offsets from its start: scores [rows][nkg] f32, bf16 probabilities [rows][kp] pairs,
  // bf16 queries [rows][dp] pairs, inverse sums [rows]; block_bytes in all.
  size_t probs_at, queries_at, inv_at, block_bytes;
};

Geometry geometry(int64_t nk, int64_t d, bool bf16) {
  Geometry g{};
  g.bf16 = bf16;
  g.d = d;
  g.dp = bf16 ? d / 2 : d;
  g.nk = nk;
  g.nkg = round_up(nk, kGroup);
  g.kp = bf16 ? (nk + 1) / 2 : 0;
  // A block's scores and probabilities within ~256 KiB (a core's L2 holds them beside K and V); whole q·kᵀ tiles.
  const int64_t per_row = 4 * g.nkg + 4 * g.kp;
  g.rows = std::clamp<int64_t>((int64_t{256} << 10) / per_row / kQkRows * kQkRows, kQkRows, 8 * kQkRows);
  g.k_pack = static_cast<size_t>(g.nkg * g.dp);
  g.v_pack = static_cast<size_t>(g.kp * d);
  const size_t queries = bf16 ? static_cast<size_t>(g.rows * g.dp) : 0;
  g.probs_at = align64(sizeof(float) * static_cast<size_t>(g.rows * g.nkg));
  g.queries_at = g.probs_at + align64(sizeof(uint32_t) * static_cast<size_t>(g.rows * g.kp));
  g.inv_at = g.queries_at + align64(sizeof(uint32_t) * queries);
  g.block_bytes = g.inv_at + align64(sizeof(float) * static_cast<size_t>(g.rows));
  return g;
}

// e^x for x ≤ 0 (relative error ~1e-7; below −87 it returns e^−87, which callers mask).
DACPP_AVX512 inline __m512 exp_nonpositive(__m512 x) {
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

// The maximum of s[0, nk).
DACPP_AVX512 float row_max(const float* s, int64_t nk) {
  __m512 mx = _mm512_set1_ps(-INFINITY);
  int64_t j = 0;
  for (; j + 16 <= nk; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(s + j));
  if (j < nk) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (nk - j)) - 1);
    mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), tail, s + j));
  }
  return _mm512_reduce_max_ps(mx);
}

// ---- AVX512-BF16 kernels ----
// In the tiles, `#pragma GCC unroll` on the loops over rows and vectors keeps every accumulator in a register: without
// it GCC 12 passed a tile's accumulators through the stack around its epilogue (one DA2-S layer's attention on this
// 2-core machine: bf16 12.5 → 8.7 ms, f32 20.4 → 15.3 ms).

// n f32 (a head dim: a multiple of 16) rounded to bf16, n / 2 pairs.
DACPP_AVX512_BF16 void to_pairs(const float* x, int64_t n, uint32_t* pairs) {
  auto* h = reinterpret_cast<uint16_t*>(pairs);
  for (int64_t i = 0; i < n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i)));
}

// Keys [g·64, g·64 + 64) of one head into group g: out[p][j] = (k_j[2p], k_j[2p + 1]); keys past nk are zero.
DACPP_AVX512_BF16 void pack_key_group(const float* k, int64_t token, const Geometry& g, int64_t group, uint32_t* out,
                                      uint32_t* row) {
  for (int64_t j = 0; j < kGroup; ++j) {
    const int64_t key = group * kGroup + j;
    if (key < g.nk) {
      to_pairs(k + key * token, g.d, row);
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
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t p = 0; p < dp; ++p) {
    const uint32_t* b = kg + p * kGroup;
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
    const __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + 32), b3 = (__m512bh)_mm512_loadu_si512(b + 48);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(q[r * ldq + p]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
      acc[r][2] = _mm512_dpbf16_ps(acc[r][2], a, b2);
      acc[r][3] = _mm512_dpbf16_ps(acc[r][3], a, b3);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) _mm512_storeu_ps(s + r * lds + 16 * i, _mm512_mul_ps(acc[r][i], sc));
}

// o[r][0, 16·NV) = inv[r] · Σ_p (P_r[2p] v_{2p} + P_r[2p+1] v_{2p+1}) for MR rows (p: pairs, ldp apart).
template <int MR, int NV>
DACPP_AVX512_BF16 void pv_tile(const uint32_t* p, int64_t ldp, const uint32_t* vp, int64_t kp, const float* inv,
                               float* o, int64_t ldo) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t j = 0; j < kp; ++j) {
    __m512bh b[NV];
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) b[i] = (__m512bh)_mm512_loadu_si512(vp + j * 16 * NV + 16 * i);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(p[r * ldp + j]));
#pragma GCC unroll 8
      for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_dpbf16_ps(acc[r][i], a, b[i]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const __m512 sc = _mm512_set1_ps(inv[r]);
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) _mm512_storeu_ps(o + r * ldo + 16 * i, _mm512_mul_ps(acc[r][i], sc));
  }
}

// One score row: probs[0, 2·kp) = bf16(e^(s_j − max)) (zero past nk); returns 1 / Σ e^(s_j − max).
DACPP_AVX512_BF16 float softmax_row(const float* s, int64_t nk, int64_t kp, uint32_t* probs) {
  const __m512 m = _mm512_set1_ps(row_max(s, nk));
  const __mmask16 tail = static_cast<__mmask16>((1u << (nk % 16)) - 1);
  auto* h = reinterpret_cast<uint16_t*>(probs);
  __m512 sum = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= nk; j += 16) {
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

// ---- AVX-512 f32 kernels ----
// The twins of the bf16 tiles above with FMA for VDPBF16PS. They stay separate functions because a function's
// target attribute is the instruction set it may use: these must run where AVX512-BF16 is absent.

// Keys [g·64, g·64 + 64) of one head into group g: out[e][j] = k_j[e]; keys past nk are zero.
DACPP_AVX512 void pack_key_group_f32(const float* k, int64_t token, const Geometry& g, int64_t group, float* out) {
  for (int64_t j = 0; j < kGroup; ++j) {
    const int64_t key = group * kGroup + j;
    const float* row = key < g.nk ? k + key * token : nullptr;
    for (int64_t e = 0; e < g.d; ++e) out[e * kGroup + j] = row ? row[e] : 0.f;
  }
}

// s[r][0, 64) = scale · q_r · k_j for MR query rows (ldq apart) against one packed key group.
template <int MR>
DACPP_AVX512 void qk_tile_f32(const float* q, int64_t ldq, const float* kg, int64_t d, float scale, float* s,
                              int64_t lds) {
  __m512 acc[MR][4];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t e = 0; e < d; ++e) {
    const float* b = kg + e * kGroup;
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    const __m512 b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(q[r * ldq + e]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(a, b2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(a, b3, acc[r][3]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) _mm512_storeu_ps(s + r * lds + 16 * i, _mm512_mul_ps(acc[r][i], sc));
}

// o[r][0, 16·NV) = inv[r] · Σ_j p_r[j] v_j for MR rows (p: ldp apart; v_j at v + j·ldv).
template <int MR, int NV>
DACPP_AVX512 void pv_tile_f32(const float* p, int64_t ldp, const float* v, int64_t ldv, int64_t nk, const float* inv,
                              float* o, int64_t ldo) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t j = 0; j < nk; ++j) {
    __m512 b[NV];
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) b[i] = _mm512_loadu_ps(v + j * ldv + 16 * i);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(p[r * ldp + j]);
#pragma GCC unroll 8
      for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_fmadd_ps(a, b[i], acc[r][i]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const __m512 sc = _mm512_set1_ps(inv[r]);
#pragma GCC unroll 8
    for (int i = 0; i < NV; ++i) _mm512_storeu_ps(o + r * ldo + 16 * i, _mm512_mul_ps(acc[r][i], sc));
  }
}

// One score row in place: s[j] = e^(s_j − max) for j < nk; returns 1 / Σ s_j.
DACPP_AVX512 float softmax_row_f32(float* s, int64_t nk) {
  const __m512 m = _mm512_set1_ps(row_max(s, nk));
  __m512 sum = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= nk; j += 16) {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(s + j), m));
    sum = _mm512_add_ps(sum, e);
    _mm512_storeu_ps(s + j, e);
  }
  if (j < nk) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (nk - j)) - 1);
    const __m512 e = _mm512_maskz_mov_ps(tail, exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, s + j), m)));
    sum = _mm512_add_ps(sum, e);
    _mm512_mask_storeu_ps(s + j, tail, e);
  }
  return 1.f / _mm512_reduce_add_ps(sum);
}

// ---- row tiling, both precisions ----

// Rows of one block, MR at a time and then the remainder, through tile<MR>(rows' offset) for MR = 6, 5, …, 1.
template <int MR, typename Tile>
DACPP_AVX512 inline void by_tiles(int rows, Tile&& tile) {
  int r = 0;
  for (; r + MR <= rows; r += MR) tile(std::integral_constant<int, MR>{}, r);
  switch (rows - r) {
    case 5:
      return tile(std::integral_constant<int, 5>{}, r);
    case 4:
      return tile(std::integral_constant<int, 4>{}, r);
    case 3:
      return tile(std::integral_constant<int, 3>{}, r);
    case 2:
      return tile(std::integral_constant<int, 2>{}, r);
    case 1:
      return tile(std::integral_constant<int, 1>{}, r);
    default:
      return;
  }
}

template <template <int> class F, typename... Args>
void with_nv(int64_t nv, Args... args) {
  switch (nv) {
    case 1:
      return F<1>::run(args...);
    case 2:
      return F<2>::run(args...);
    case 3:
      return F<3>::run(args...);
    case 4:
      return F<4>::run(args...);
    case 5:
      return F<5>::run(args...);
    case 6:
      return F<6>::run(args...);
    case 7:
      return F<7>::run(args...);
    default:
      return F<8>::run(args...);
  }
}

// p·v of a block's rows with NV vectors of 16 output values per row: 6 rows a tile (3 for NV > 4).
template <int NV>
struct PvBf16 {
  DACPP_AVX512_BF16 static void run(int rows, const uint32_t* p, int64_t ldp, const uint32_t* vp, int64_t kp,
                                    const float* inv, float* o, int64_t ldo) {
    by_tiles<(NV > 4 ? 3 : 6)>(rows, [&](auto mr, int r) {
      pv_tile<decltype(mr)::value, NV>(p + r * ldp, ldp, vp, kp, inv + r, o + r * ldo, ldo);
    });
  }
};

template <int NV>
struct PvF32 {
  DACPP_AVX512 static void run(int rows, const float* p, int64_t ldp, const float* v, int64_t ldv, int64_t nk,
                               const float* inv, float* o, int64_t ldo) {
    by_tiles<(NV > 4 ? 3 : 6)>(rows, [&](auto mr, int r) {
      pv_tile_f32<decltype(mr)::value, NV>(p + r * ldp, ldp, v, ldv, nk, inv + r, o + r * ldo, ldo);
    });
  }
};

// A thread's block buffers (Geometry's offsets).
struct BlockBuffers {
  float* s;
  uint32_t* probs;
  uint32_t* queries;
  float* inv;
};

BlockBuffers block_buffers(const Geometry& g, void* at) {
  auto* base = static_cast<char*>(at);
  return {reinterpret_cast<float*>(base), reinterpret_cast<uint32_t*>(base + g.probs_at),
          reinterpret_cast<uint32_t*>(base + g.queries_at), reinterpret_cast<float*>(base + g.inv_at)};
}

// One block of `rows` query rows of one head (bf16): queries to pairs, the scores group by group, the softmax row by
// row, then p·v into out (ldo floats between rows).
DACPP_AVX512_BF16 void run_block_bf16(const Geometry& g, const float* q, int64_t q_token, int rows,
                                      const uint32_t* kpack, const uint32_t* vpack, float scale, void* at, float* out,
                                      int64_t ldo) {
  const BlockBuffers b = block_buffers(g, at);
  for (int r = 0; r < rows; ++r) to_pairs(q + r * q_token, g.d, b.queries + r * g.dp);
  for (int64_t group = 0; group < g.nkg / kGroup; ++group) {
    const uint32_t* kg = kpack + group * g.dp * kGroup;
    by_tiles<kQkRows>(rows, [&](auto mr, int r) {
      qk_tile<decltype(mr)::value>(b.queries + r * g.dp, g.dp, kg, g.dp, scale, b.s + r * g.nkg + group * kGroup,
                                   g.nkg);
    });
  }
  for (int r = 0; r < rows; ++r) b.inv[r] = softmax_row(b.s + r * g.nkg, g.nk, g.kp, b.probs + r * g.kp);
  with_nv<PvBf16>(g.d / 16, rows, b.probs, g.kp, vpack, g.kp, b.inv, out, ldo);
}

// The same in f32: queries read in place, probabilities over the scores, v read in place (v_token apart).
DACPP_AVX512 void run_block_f32(const Geometry& g, const float* q, int64_t q_token, int rows, const float* kpack,
                                const float* v, int64_t v_token, float scale, void* at, float* out, int64_t ldo) {
  const BlockBuffers b = block_buffers(g, at);
  for (int64_t group = 0; group < g.nkg / kGroup; ++group) {
    const float* kg = kpack + group * g.dp * kGroup;
    by_tiles<kQkRows>(rows, [&](auto mr, int r) {
      qk_tile_f32<decltype(mr)::value>(q + r * q_token, q_token, kg, g.d, scale, b.s + r * g.nkg + group * kGroup,
                                       g.nkg);
    });
  }
  for (int r = 0; r < rows; ++r) b.inv[r] = softmax_row_f32(b.s + r * g.nkg, g.nk);
  with_nv<PvF32>(g.d / 16, rows, b.s, g.nkg, v, v_token, g.nk, b.inv, out, ldo);
}

}  // namespace

bool fused_attention_fits(int64_t d, bool bf16) {
  // __builtin_cpu_supports takes only string literals.
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           bf16_support().isa.rfind("avx512_core", 0) == 0;  // and oneDNN allowed AVX-512 (ONEDNN_MAX_CPU_ISA)
  }();
  static const bool avx512_bf16 = avx512 && bf16_rounding_native();  // AVX512-BF16 native, oneDNN allowed
  return (bf16 ? avx512_bf16 : avx512) && d > 0 && d % 16 == 0 && d <= 128;
}

void fused_attention(CpuContext& c, const AttnRows& q, const AttnRows& k, const AttnRows& v, int64_t batch,
                     int64_t heads, int64_t nq, int64_t nk, int64_t d, float scale, bool bf16, float* out) {
  if (batch == 0 || heads == 0 || nq == 0 || nk == 0) return;
  const Geometry g = geometry(nk, d, bf16);
  const int64_t bh = batch * heads, groups = g.nkg / kGroup;
  const size_t per_head = g.k_pack + g.v_pack;
  // Packed K (and bf16's V) of every head, 32-bit words; f32 packs hold floats.
  void* packs = c.scratch(Scratch::Src, sizeof(uint32_t) * per_head * static_cast<size_t>(bh));
  const auto pack_of = [&](int64_t i) { return static_cast<uint32_t*>(packs) + static_cast<size_t>(i) * per_head; };
  const ThreadPool& pool = c.pool();
  auto* work = static_cast<char*>(c.scratch(Scratch::Work, g.block_bytes * static_cast<size_t>(pool.size())));
  // K (and V) of every head, a group of 64 keys (32 key pairs) per task; bf16 rounds each key into the thread's
  // query buffer first (free until the blocks below).
  pool.parallel_chunks(bh * groups, 1, [&](int t, int64_t t0, int64_t t1) {
    uint32_t* row = block_buffers(g, work + static_cast<size_t>(t) * g.block_bytes).queries;
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t i = task / groups, group = task % groups, b = i / heads, h = i % heads;
      const float* kh = k.base + b * k.batch + h * k.head;
      uint32_t* pack = pack_of(i);
      if (!bf16) {
        pack_key_group_f32(kh, k.token, g, group, reinterpret_cast<float*>(pack) + group * g.dp * kGroup);
        continue;
      }
      pack_key_group(kh, k.token, g, group, pack + group * g.dp * kGroup, row);
      const int64_t p0 = group * kGroup / 2, p1 = std::min(g.kp, p0 + kGroup / 2);
      pack_value_pairs(v.base + b * v.batch + h * v.head, v.token, g, p0, p1, pack + g.k_pack);
    }
  });
  // Blocks of query rows; a thread's consecutive blocks share a head, so its K and V stay in cache.
  const int64_t blocks = (nq + g.rows - 1) / g.rows;
  pool.parallel_chunks(bh * blocks, 1, [&](int t, int64_t t0, int64_t t1) {
    void* at = work + static_cast<size_t>(t) * g.block_bytes;
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t i = task / blocks, r0 = task % blocks * g.rows, b = i / heads, h = i % heads;
      const int rows = static_cast<int>(std::min(g.rows, nq - r0));
      const float* qh = q.base + b * q.batch + h * q.head + r0 * q.token;
      float* o = out + ((b * nq + r0) * heads + h) * d;
      const uint32_t* pack = pack_of(i);
      if (bf16)
        run_block_bf16(g, qh, q.token, rows, pack, pack + g.k_pack, scale, at, o, heads * d);
      else
        run_block_f32(g, qh, q.token, rows, reinterpret_cast<const float*>(pack), v.base + b * v.batch + h * v.head,
                      v.token, scale, at, o, heads * d);
    }
  });
}

}  // namespace dacpp::cpu
