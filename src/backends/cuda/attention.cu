// attention on CUDA: out[b, n, h, :] = softmax(scale · q[b, h, n] · k[b, h]ᵀ) · v[b, h].
//
// attention_qkv reads q, k and v straight out of a fused qkv projection [B, N, 3·H·D] (row stride 3·H·D), saving the
// permute copy that would split it into [3, B, H, N, D] first.
//
// flash_attention_tc (bf16/f16, D in {32, 64, 128}): one block = 16·MT·WARPS query rows of one (b, h), each warp
// MT m-tiles of 16 rows (variants 1×4 = 64 rows, 2×4 = 128 rows, 2×2 = 64 rows in 2 warps, and for few heads —
// DA2-S has 6, i.e. 132 blocks of 64 rows at 1370 tokens, one per multiprocessor — 1×2 = 32 rows and 1×1 = 16
// rows; D <= 64 for MT = 2), chosen per shape by timing on first use (choose_variant).
// K/V tiles of 64 keys are double-buffered in shared memory with cp.async (rows padded by 8 elements so ldmatrix is
// conflict-free); S = Q·Kᵀ and O += P·V run on tensor cores (m16n8k16), the softmax is online in f32 in registers
// (exp2 with scale·log2 e folded in), P is rounded to the input dtype only as the mma operand. Shared memory is
// (rows + 4·64)·(D + 8) elements whatever N: 45 KiB for D = 64 and 64 rows, 54 KiB for 128 rows.
//
// On Hopper (an sm_90a build, D = 64) the tuner also times flash_attention_wgmma (wgmma, cp.async, warpgroups in
// step) and flash_attention_tma (Q / K / V by the tensor memory accelerator through 4-D tensor maps, a ring of stages
// per block, warpgroups out of step; optionally each warpgroup overlapping its own tiles).
//
// attention_simt (f32 exact, and any dtype with other D <= 256 or unaligned pointers): one block = 16 query rows,
// 4 warps of 4 rows; per tile of 32 keys each lane scores one key, the warp runs the online softmax, and each lane
// accumulates D/32 output columns. All math f32 (expf, no fast math).
#include <cfloat>
#include <cmath>
#include <iterator>
#include <string>

#include "backends/cuda/attention_variants.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/mma_util.cuh"
#include "backends/cuda/tma_map.h"
#include "backends/cuda/tma_util.cuh"
#include "backends/cuda/tuning.h"
#include "backends/cuda/wgmma_util.cuh"

namespace dacpp::cuda {
namespace {

using namespace mma;

constexpr int kBc = 64;  // keys per tile (tensor-core kernel)

// Where row n of head h of batch b lives (elements from the tensor's base): b·batch + h·head + n·row. q and k / v
// differ only in the first two (nq vs nk rows per head in the [B, H, N, D] layout).
struct Strides {
  int64_t q_batch, q_head, kv_batch, kv_head;
  int row;
};

// Split-KV (splits > 1): block z of a row block takes key tiles [z·tiles, (z + 1)·tiles) and writes, for each of its
// rows r (r = bh·nq + row, rows = B·H·nq in all), o[(z·rows + r)·D + c] (f32, divided by the split's own sum) and
// lse[z·rows + r] = max + log2(sum) in the kernel's log2 score units (-inf without keys). splits == 1: o / lse unused.
struct Split {
  int splits, tiles;
  float* o;
  float* lse;
};

// Rows [row0, row0 + R) of a [rows, D] matrix with row stride `stride` into shared memory (row stride D + 8) by
// THREADS threads; rows past `rows` are zeroed.
template <typename T, int D, int R, int THREADS>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int row0, int rows, int stride, int tid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int i = tid; i < R * kChunks; i += THREADS) {
    const int r = i / kChunks, c = (i % kChunks) * 8;
    T* d = dst + r * (D + 8) + c;
    if (row0 + r < rows) {
      cp_async16(d, src + static_cast<int64_t>(row0 + r) * stride + c);
    } else {
      *reinterpret_cast<uint4*>(d) = make_uint4(0, 0, 0, 0);
    }
  }
}

// 2^x on the special-function unit, subnormal results flushed to zero (they are below bf16 / f16 resolution of a
// softmax weight anyway); 2^-inf = 0.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Online-softmax step of one warp's 16 rows for one tile of N raw scores s (q·k, keys past nk at -inf): the scores
// become weights 2^(s·scale_log2 - max) in one FMA + one ex2 each (scale_log2 > 0, so the raw maximum scales to the
// scaled one), the row sums l take the tile, and alpha is the factor the output accumulated so far must be scaled
// by (rescale). Rows: g (i = 0) and g + 8 (i = 1); m: running max in scaled log2 units; l: this thread's partial
// row sums.
template <int N>
__device__ __forceinline__ void softmax_weights(float (&s)[N / 8][4], float (&m)[2], float (&l)[2], float scale_log2,
                                                float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float mx = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * i], s[nt][2 * i + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[i], mx * scale_log2);
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    alpha[i] = exp2_ftz(m[i] - m_use);
    float sum = 0.f;
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt) {
      s[nt][2 * i] = exp2_ftz(fmaf(s[nt][2 * i], scale_log2, -m_use));
      s[nt][2 * i + 1] = exp2_ftz(fmaf(s[nt][2 * i + 1], scale_log2, -m_use));
      sum += s[nt][2 * i] + s[nt][2 * i + 1];
    }
    l[i] = l[i] * alpha[i] + sum;
    m[i] = m_new;
  }
}

// The output rows (g: alpha[0], g + 8: alpha[1]) scaled for a new running max.
template <int D>
__device__ __forceinline__ void rescale(float (&o)[D / 8][4], const float (&alpha)[2]) {
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) {
    o[dt][0] *= alpha[0];
    o[dt][1] *= alpha[0];
    o[dt][2] *= alpha[1];
    o[dt][3] *= alpha[1];
  }
}

template <int N, int D>
__device__ __forceinline__ void softmax_update(float (&s)[N / 8][4], float (&o)[D / 8][4], float (&m)[2],
                                               float (&l)[2], float scale_log2) {
  float alpha[2];
  softmax_weights<N>(s, m, l, scale_log2, alpha);
  rescale<D>(o, alpha);
}

// The finished 16 rows [row0, row0 + 16) of one warp (this thread: rows row0 + g and row0 + g + 8, columns
// 8·dt + 2t, 2t + 1): divided by their row sums into out [B, nq, H, D] (rows past nq skipped), or with split-KV the
// f32 partial result and its lse (Split). The block is (row block, b·H + h, split) as both kernels launch it.
template <typename T, int D>
__device__ __forceinline__ void store_rows(const float (&o)[D / 8][4], const float (&m)[2], const float (&l)[2],
                                           int row0, int heads, int nq, T* __restrict__ out, const Split& sp) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, bh = blockIdx.y;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float li = l[i];
    li += __shfl_xor_sync(0xffffffffu, li, 1);
    li += __shfl_xor_sync(0xffffffffu, li, 2);
    const float inv = li > 0.f ? 1.f / li : 0.f;
    const int row = row0 + g + 8 * i;
    if (row >= nq) continue;
    if (sp.splits > 1) {
      const int64_t r = (static_cast<int64_t>(blockIdx.z) * gridDim.y + bh) * nq + row;
      float* orow = sp.o + r * D;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        *reinterpret_cast<float2*>(orow + dt * 8 + 2 * t) = make_float2(o[dt][2 * i] * inv, o[dt][2 * i + 1] * inv);
      if (t == 0) sp.lse[r] = li > 0.f ? m[i] + log2f(li) : -INFINITY;
      continue;
    }
    T* orow = out + ((static_cast<int64_t>(bh / heads) * nq + row) * heads + bh % heads) * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<uint32_t*>(orow + dt * 8 + 2 * t) = pack2<T>(o[dt][2 * i] * inv, o[dt][2 * i + 1] * inv);
  }
}

// What block (row block, b·H + h, split z) of either flash kernel reads: head h of batch b of q / k / v, and its
// share [j0, j1) of the key tiles of `tile` keys (all of them without split-KV).
template <typename T>
struct BlockHeads {
  const T *q, *k, *v;
  int j0, j1;
};

template <typename T>
__device__ __forceinline__ BlockHeads<T> block_heads(const T* q, const T* k, const T* v, int heads, int nk, int tile,
                                                     const Strides& st, const Split& sp) {
  const int bh = blockIdx.y, b = bh / heads, h = bh % heads;
  const int ntiles = (nk + tile - 1) / tile, j0 = blockIdx.z * sp.tiles;
  return {q + b * st.q_batch + h * st.q_head, k + b * st.kv_batch + h * st.kv_head,
          v + b * st.kv_batch + h * st.kv_head, j0, min(ntiles, j0 + sp.tiles)};
}

// MT: 16-row m-tiles per warp (each K / V fragment read from shared memory feeds MT mma's), WARPS: warps per block;
// a block takes 16·MT·WARPS query rows.
template <typename T, int D, int MT, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    flash_attention_tc(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                       int heads, int nq, int nk, float scale_log2, Strides st, Split sp) {
  pdl_enter();
  constexpr int kThreads = WARPS * 32, kRows = 16 * MT * WARPS;
  constexpr int kStride = D + 8;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sq = reinterpret_cast<T*>(smem_raw);
  T* sk = sq + kRows * kStride;     // [2][kBc][kStride]
  T* sv = sk + 2 * kBc * kStride;   // [2][kBc][kStride]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int t = lane % 4, mi = lane / 8, ri = lane % 8;
  const int q0 = blockIdx.x * kRows;
  const BlockHeads<T> hb = block_heads(q, k, v, heads, nk, kBc, st, sp);
  const T *qb = hb.q, *kb = hb.k, *vb = hb.v;
  const int j0 = hb.j0, j1 = hb.j1;

  load_tile<T, D, kRows, kThreads>(sq, qb, q0, nq, st.row, tid);
  load_tile<T, D, kBc, kThreads>(sk, kb, j0 * kBc, nk, st.row, tid);
  load_tile<T, D, kBc, kThreads>(sv, vb, j0 * kBc, nk, st.row, tid);
  cp_async_commit();

  uint32_t qf[MT][D / 16][4];
  float o[MT][D / 8][4];
  float m[MT][2], l[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.f;
    m[mt][0] = m[mt][1] = -INFINITY;
    l[mt][0] = l[mt][1] = 0.f;
  }

  for (int j = j0; j < j1; ++j) {
    const int buf = (j - j0) & 1;
    if (j + 1 < j1) {
      load_tile<T, D, kBc, kThreads>(sk + (buf ^ 1) * kBc * kStride, kb, (j + 1) * kBc, nk, st.row, tid);
      load_tile<T, D, kBc, kThreads>(sv + (buf ^ 1) * kBc * kStride, vb, (j + 1) * kBc, nk, st.row, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (j == j0) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
          ldmatrix_x4(qf[mt][kk],
                      sq + ((warp * MT + mt) * 16 + (mi & 1) * 8 + ri) * kStride + kk * 16 + (mi >> 1) * 8);
    }
    const T* skb = sk + buf * kBc * kStride;
    const T* svb = sv + buf * kBc * kStride;

    float s[MT][kBc / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kBc / 8; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int n2 = 0; n2 < kBc / 16; ++n2) {
        uint32_t kf[4];
        ldmatrix_x4(kf, skb + (n2 * 16 + (mi >> 1) * 8 + ri) * kStride + kk * 16 + (mi & 1) * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(s[mt][2 * n2], qf[mt][kk], kf[0], kf[1]);
          mma16816<T>(s[mt][2 * n2 + 1], qf[mt][kk], kf[2], kf[3]);
        }
      }
    }
    const int key0 = j * kBc;
    if (key0 + kBc > nk) {  // only the last tile has keys past nk
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kBc / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (key0 + nt * 8 + 2 * t + (e & 1) >= nk) s[mt][nt][e] = -INFINITY;
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) softmax_update<kBc, D>(s[mt], o[mt], m[mt], l[mt], scale_log2);

#pragma unroll
    for (int kc = 0; kc < kBc / 16; ++kc) {
      uint32_t pa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        pa[mt][0] = pack2<T>(s[mt][2 * kc][0], s[mt][2 * kc][1]);
        pa[mt][1] = pack2<T>(s[mt][2 * kc][2], s[mt][2 * kc][3]);
        pa[mt][2] = pack2<T>(s[mt][2 * kc + 1][0], s[mt][2 * kc + 1][1]);
        pa[mt][3] = pack2<T>(s[mt][2 * kc + 1][2], s[mt][2 * kc + 1][3]);
      }
#pragma unroll
      for (int d2 = 0; d2 < D / 16; ++d2) {
        uint32_t vf[4];
        ldmatrix_x4_trans(vf, svb + (kc * 16 + (mi & 1) * 8 + ri) * kStride + d2 * 16 + (mi >> 1) * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(o[mt][2 * d2], pa[mt], vf[0], vf[1]);
          mma16816<T>(o[mt][2 * d2 + 1], pa[mt], vf[2], vf[3]);
        }
      }
    }
    __syncthreads();  // every warp is done with buf before the next iteration refills it
  }

#pragma unroll
  for (int mt = 0; mt < MT; ++mt) store_rows<T, D>(o[mt], m[mt], l[mt], q0 + (warp * MT + mt) * 16, heads, nq, out, sp);
}

// Rows [row0, row0 + R) of a [rows, 64] matrix (row stride `stride` elements) into a 128-byte-swizzled shared tile
// (wgmma_util.cuh) by THREADS threads; rows past `rows` are zeroed.
template <typename T, int R, int THREADS>
__device__ __forceinline__ void load_tile_sw128(unsigned char* dst, const T* src, int row0, int rows, int stride,
                                                int tid) {
  for (int i = tid; i < R * 8; i += THREADS) {
    const int r = i / 8, c = i % 8;
    unsigned char* d = dst + wgmma::swizzle128(r, c);
    if (row0 + r < rows) {
      cp_async16(d, src + static_cast<int64_t>(row0 + r) * stride + c * 8);
    } else {
      *reinterpret_cast<uint4*>(d) = make_uint4(0, 0, 0, 0);
    }
  }
}

#if DACPP_HAS_WGMMA
// The steps of one key tile for a warpgroup's 64 query rows (Hopper, D = 64), tiles in 128-byte-swizzled shared
// memory. issue_qk: S = Q·Kᵀ (Q at desc_q, the tile's BC keys at sk) started as one wgmma group, four K steps of 16
// (32 bytes along the swizzled rows); its scores are ready after the matching wgmma::wait.
template <typename T, int BC>
__device__ __forceinline__ void issue_qk(uint64_t desc_q, const unsigned char* sk, float (&s)[BC / 8][4]) {
  const uint64_t desc_k = wgmma::desc_sw128(smem_addr(sk));
  wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    if constexpr (BC == 64) {
      wgmma::wgmma_ss_n64<T>(s, desc_q + 2 * kk, desc_k + 2 * kk, kk);
    } else {
      wgmma::wgmma_ss_n128<T>(s, desc_q + 2 * kk, desc_k + 2 * kk, kk);
    }
  }
  wgmma::commit();
  wgmma::fence_operands(s);
}

// Scores of keys from key0 on past nk to -inf (only the last tile has any).
template <int BC>
__device__ __forceinline__ void mask_keys(float (&s)[BC / 8][4], int key0, int nk) {
  if (key0 + BC <= nk) return;
  const int t = threadIdx.x % 4;
#pragma unroll
  for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (key0 + nt * 8 + 2 * t + (e & 1) >= nk) s[nt][e] = -INFINITY;
}

// The softmax weights as the A fragments of P·V, 16 keys each, rounded to T.
template <typename T, int BC>
__device__ __forceinline__ void pack_weights(const float (&s)[BC / 8][4], uint32_t (&pa)[BC / 16][4]) {
#pragma unroll
  for (int kc = 0; kc < BC / 16; ++kc) {
    pa[kc][0] = pack2<T>(s[2 * kc][0], s[2 * kc][1]);
    pa[kc][1] = pack2<T>(s[2 * kc][2], s[2 * kc][3]);
    pa[kc][2] = pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]);
    pa[kc][3] = pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3]);
  }
}

// O += P·V started as one wgmma group: P from registers, V rows (keys, MN-major) at sv 16 at a time (2048 bytes).
// pa and o must stay untouched until the matching wgmma::wait.
template <typename T, int BC>
__device__ __forceinline__ void issue_pv(const uint32_t (&pa)[BC / 16][4], const unsigned char* sv,
                                         float (&o)[8][4]) {
  const uint64_t desc_v = wgmma::desc_sw128(smem_addr(sv));
  wgmma::fence_operands(o);
  wgmma::fence();
#pragma unroll
  for (int kc = 0; kc < BC / 16; ++kc) wgmma::wgmma_rs_n64<T>(o, pa[kc], desc_v + kc * (2048 >> 4));
  wgmma::commit();
  wgmma::fence_operands(o);
}

// One key tile, step after step: S = Q·Kᵀ, the keys from key0 on past nk masked, the online softmax of
// flash_attention_tc on the accumulators, O += P·V. When it returns the warpgroup no longer reads sk / sv.
template <typename T, int BC>
__device__ __forceinline__ void wgmma_key_tile(uint64_t desc_q, const unsigned char* sk, const unsigned char* sv,
                                               int key0, int nk, float (&o)[8][4], float (&m)[2], float (&l)[2],
                                               float scale_log2) {
  float s[BC / 8][4];
  issue_qk<T, BC>(desc_q, sk, s);
  wgmma::wait<0>();
  wgmma::fence_operands(s);
  mask_keys<BC>(s, key0, nk);
  softmax_update<BC, 64>(s, o, m, l, scale_log2);
  uint32_t pa[BC / 16][4];
  pack_weights<T, BC>(s, pa);
  issue_pv<T, BC>(pa, sv, o);
  wgmma::wait<0>();
  wgmma::fence_operands(o);
}
#endif  // DACPP_HAS_WGMMA

// Hopper kernel (sm_90a, D = 64): WG warpgroups of 64 query rows each share double-buffered K / V tiles of BC keys
// (cp.async into 128-byte-swizzled shared memory); per tile each warpgroup runs wgmma_key_tile. Overlapping the
// next tile's Q·Kᵀ with this tile's softmax and P·V (FA3-style, a second set of score registers) measured no faster
// on the H200 (DA2-L 35.4 vs 35.3 us, DA2-S 20.1 vs 20.6 us) and was dropped. Shared memory:
// (64·WG + 4·BC)·128 bytes + 1 KiB for alignment. Compiled empty for other targets; the host launches it only
// where CudaContext::hopper_mma().
template <typename T, int WG, int BC>
__global__ void __launch_bounds__(WG * 128)
    flash_attention_wgmma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                          T* __restrict__ out, int heads, int nq, int nk, float scale_log2, Strides st, Split sp) {
  pdl_enter();
#if DACPP_HAS_WGMMA
  constexpr int D = 64, kRows = 64 * WG, kThreads = 128 * WG, kTile = BC * 128;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* sq = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);  // swizzle atoms are 1 KiB
  unsigned char* sk = sq + kRows * 128;  // [2][BC rows]
  unsigned char* sv = sk + 2 * kTile;    // [2][BC rows]
  const int tid = threadIdx.x, wg = tid / 128, warp = tid % 128 / 32;
  const int q0 = blockIdx.x * kRows;
  const BlockHeads<T> hb = block_heads(q, k, v, heads, nk, BC, st, sp);
  const T *qb = hb.q, *kb = hb.k, *vb = hb.v;
  const int j0 = hb.j0, j1 = hb.j1;

  load_tile_sw128<T, kRows, kThreads>(sq, qb, q0, nq, st.row, tid);
  load_tile_sw128<T, BC, kThreads>(sk, kb, j0 * BC, nk, st.row, tid);
  load_tile_sw128<T, BC, kThreads>(sv, vb, j0 * BC, nk, st.row, tid);
  cp_async_commit();

  float o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const uint64_t desc_q = wgmma::desc_sw128(smem_addr(sq + wg * 64 * 128));

  for (int j = j0; j < j1; ++j) {
    const int buf = (j - j0) & 1;
    cp_async_wait<0>();           // tile j (and Q) landed for this thread's copies
    wgmma::fence_proxy_async();   // ... and are visible to the tensor cores
    __syncthreads();              // every thread's copies; every warpgroup is done with the other buffer
    if (j + 1 < j1) {
      load_tile_sw128<T, BC, kThreads>(sk + (buf ^ 1) * kTile, kb, (j + 1) * BC, nk, st.row, tid);
      load_tile_sw128<T, BC, kThreads>(sv + (buf ^ 1) * kTile, vb, (j + 1) * BC, nk, st.row, tid);
      cp_async_commit();
    }
    wgmma_key_tile<T, BC>(desc_q, sk + buf * kTile, sv + buf * kTile, j * BC, nk, o, m, l, scale_log2);
  }
  store_rows<T, D>(o, m, l, q0 + wg * 64 + warp * 16, heads, nq, out, sp);
#endif
}

// Stages of the TMA kernel's K / V ring for key tiles of BC keys: 64 KiB of tiles either way, or 96 KiB when the
// warpgroup overlaps tiles (OV: a stage is held one tile longer).
template <int BC, bool OV>
constexpr int kTmaStages = (BC == 64 ? 4 : 2) + (OV ? (BC == 64 ? 2 : 1) : 0);

// Hopper kernel fed by the tensor memory accelerator (sm_90a, D = 64): flash_attention_wgmma's tiling, but the
// warpgroups never wait for one another. K / V tiles stream through a ring of S stages; thread 0 starts Q and the
// first S tiles, each load completing on its stage's barrier, and afterwards the last warp to finish with a stage
// (a shared count of releases per stage) refills it with the tile S further on. A warpgroup waits only for its next
// tile to land, so the warpgroups drift out of step and one's softmax runs under another's MMAs, where
// flash_attention_wgmma's block barrier per tile holds them in step (tensor cores idle while all take softmax).
// With OV each warpgroup also overlaps its own tiles (FA3's intra-warpgroup pipelining): the scores of tile i are
// started, with P·V of tile i - 1, before the softmax of tile i runs, which then overlaps that P·V; the output is
// rescaled once P·V has landed. Two blocks of one warpgroup share a multiprocessor (the second set of scores needs
// the registers), three with a lean ring of S = 2 stages (a stage's refill then starts only one tile ahead, the
// other blocks covering its latency); a block of two or three overlapping warpgroups has one to itself and loads
// each K / V tile once for all of them. Without OV, two blocks of two warpgroups share one (128 registers).
// q / k / v are read through 4-D maps (D, rows, heads, batch): rows past nq / nk of a head read as zero (keys
// masked), never a neighbouring head's or batch's. Shared memory: (64·WG + 2·S·BC)·128 bytes + 1 KiB for alignment.
// stagger > 0 (OV, WG > 1): warpgroup w starts its first tile w·stagger clock cycles after the first. Sharing each
// K / V stage, the warpgroups otherwise stay in step (all in the softmax while the tensor cores idle, then all in
// the MMAs); a head start of a fraction of a tile keeps one's softmax under another's MMAs for the whole loop, since
// no stage is refilled before every warpgroup has released it.
// turns (OV, WG > 1; FA3's ping-pong): the warpgroups issue their MMAs in turn, warpgroup 0 first, each waiting on
// its named barrier (1 + w) for the one before it to have issued, and so each one's softmax runs while the next
// one's MMAs hold the tensor cores, an order kept by the barriers rather than by a head start.
template <typename T, int WG, int BC, int S, bool OV>
__global__ void __launch_bounds__(WG * 128, WG == 1 ? (OV ? (S == 2 ? 3 : 2) : 1) : WG == 2 && !OV ? 2 : 1)
    flash_attention_tma(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                        const __grid_constant__ CUtensorMap map_v, T* __restrict__ out, int heads, int nq, int nk,
                        float scale_log2, Split sp, int stagger, bool turns) {
  pdl_enter();
#if DACPP_HAS_WGMMA
  constexpr int D = 64, kRows = 64 * WG, kTile = BC * 128, kWarps = 4 * WG;
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[S + 1];  // [S]: Q
  __shared__ int released[S];
  unsigned char* sq = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);  // swizzle atoms are 1 KiB
  unsigned char* sk = sq + kRows * 128;  // [S][BC rows]
  unsigned char* sv = sk + S * kTile;    // [S][BC rows]
  const int tid = threadIdx.x, wg = tid / 128, warp = tid % 128 / 32, lane = tid % 32;
  const int q0 = blockIdx.x * kRows, b = blockIdx.y / heads, h = blockIdx.y % heads;
  const int ntiles = (nk + BC - 1) / BC, j0 = blockIdx.z * sp.tiles, count = min(ntiles, j0 + sp.tiles) - j0;
  const auto load_kv = [&](int i) {  // tile j0 + i into stage i % S
    const uint32_t bar = smem_addr(&full[i % S]);
    tma::arrive_expect_tx(bar, 2 * kTile);
    tma::load_4d(smem_addr(sk + i % S * kTile), &map_k, 0, (j0 + i) * BC, h, b, bar);
    tma::load_4d(smem_addr(sv + i % S * kTile), &map_v, 0, (j0 + i) * BC, h, b, bar);
  };
  // The warp is done with tile i's stage (its wgmma reading it have completed): the last warp of the block to say
  // so refills the stage with tile i + S.
  const auto release = [&](int i) {
    __syncwarp();
    if (lane == 0 && atomicAdd(&released[i % S], 1) == (i / S + 1) * kWarps - 1 && i + S < count) load_kv(i + S);
  };
  const auto wait_tile = [&](int i) {
    tma::wait(smem_addr(&full[i % S]), (i / S) & 1);
    __syncwarp();
  };
  if (tid == 0) {
    tma::prefetch_map(&map_q);
    tma::prefetch_map(&map_k);
    tma::prefetch_map(&map_v);
    for (int i = 0; i <= S; ++i) tma::barrier_init(smem_addr(&full[i]), 1);
    for (int i = 0; i < S; ++i) released[i] = 0;
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    tma::arrive_expect_tx(smem_addr(&full[S]), kRows * 128);
    tma::load_4d(smem_addr(sq), &map_q, 0, q0, h, b, smem_addr(&full[S]));
    for (int i = 0; i < S && i < count; ++i) load_kv(i);
  }

  float o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const uint64_t desc_q = wgmma::desc_sw128(smem_addr(sq + wg * 64 * 128));
  tma::wait(smem_addr(&full[S]), 0);

  if constexpr (!OV) {
    for (int i = 0; i < count; ++i) {
      wait_tile(i);
      wgmma_key_tile<T, BC>(desc_q, sk + i % S * kTile, sv + i % S * kTile, (j0 + i) * BC, nk, o, m, l, scale_log2);
      release(i);
    }
  } else if (count > 0) {
    if (WG > 1 && stagger > 0 && wg > 0) {
      const long long start = clock64(), wait = static_cast<long long>(wg) * stagger;
      while (clock64() - start < wait) {
      }
    }
    // Named barrier 1 + w: warpgroup w's turn. Counted over the 128 threads taking it and the 128 passing it; the
    // last warpgroup gives warpgroup 0 its first turn and does not pass on after its last.
    const bool in_turns = WG > 1 && turns;
    const auto take_turn = [&] {
      if (in_turns) asm volatile("bar.sync %0, 256;\n" ::"r"(1 + wg) : "memory");
    };
    const auto pass_turn = [&](bool last) {
      if (in_turns && !(last && wg == WG - 1))
        asm volatile("bar.arrive %0, 256;\n" ::"r"(1 + (wg + 1) % WG) : "memory");
    };
    if (in_turns && wg == WG - 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");
    float s[BC / 8][4], alpha[2];
    uint32_t pa[BC / 16][4];
    wait_tile(0);
    take_turn();
    issue_qk<T, BC>(desc_q, sk, s);
    pass_turn(false);
    wgmma::wait<0>();
    wgmma::fence_operands(s);
    mask_keys<BC>(s, j0 * BC, nk);
    softmax_weights<BC>(s, m, l, scale_log2, alpha);  // o is still zero
    pack_weights<T, BC>(s, pa);
    for (int i = 1; i < count; ++i) {
      wait_tile(i);
      take_turn();
      issue_qk<T, BC>(desc_q, sk + i % S * kTile, s);             // scores of tile i ...
      issue_pv<T, BC>(pa, sv + (i - 1) % S * kTile, o);           // ... and P·V of tile i - 1 in flight
      pass_turn(false);
      wgmma::wait<1>();
      wgmma::fence_operands(s);
      mask_keys<BC>(s, (j0 + i) * BC, nk);
      softmax_weights<BC>(s, m, l, scale_log2, alpha);            // under P·V of tile i - 1
      wgmma::wait<0>();
      wgmma::fence_operands(o);
      rescale<D>(o, alpha);
      pack_weights<T, BC>(s, pa);
      release(i - 1);
    }
    take_turn();
    issue_pv<T, BC>(pa, sv + (count - 1) % S * kTile, o);
    pass_turn(true);
    wgmma::wait<0>();
    wgmma::fence_operands(o);
  }
  store_rows<T, D>(o, m, l, q0 + wg * 64 + warp * 16, heads, nq, out, sp);
#endif
}

// The split-KV results of flash_attention_tc weighed into out [B, nq, H, D]: one warp per row r = bh·nq + row,
// lane c of each 32 columns; weights 2^(lse_z - max lse), all in f32.
constexpr int kCombineWarps = 8;

template <typename T, int D>
__global__ void __launch_bounds__(kCombineWarps * 32)
    attention_combine(const float* __restrict__ o, const float* __restrict__ lse, T* __restrict__ out, int splits,
                      int heads, int nq, int64_t rows) {
  pdl_enter();
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kCombineWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  float mx = -INFINITY;
  for (int z = 0; z < splits; ++z) mx = fmaxf(mx, lse[z * rows + r]);
  float acc[D / 32] = {};
  float wsum = 0.f;
  for (int z = 0; z < splits; ++z) {
    const float lz = lse[z * rows + r];
    const float w = lz == -INFINITY ? 0.f : exp2f(lz - mx);
    wsum += w;
    const float* oz = o + (z * rows + r) * D;
#pragma unroll
    for (int c = 0; c < D / 32; ++c) acc[c] = fmaf(w, oz[lane + 32 * c], acc[c]);
  }
  const float inv = wsum > 0.f ? 1.f / wsum : 0.f;
  const int64_t bh = r / nq, row = r % nq;
  T* orow = out + (((bh / heads) * nq + row) * heads + bh % heads) * D;
#pragma unroll
  for (int c = 0; c < D / 32; ++c) orow[lane + 32 * c] = from_float<T>(acc[c] * inv);
}

constexpr int kSimtWarps = 4, kSimtRows = 4, kSimtKeys = 32;  // rows per warp; keys per tile

// DC = output columns per lane (D <= 32·DC).
template <typename T, int DC>
__global__ void __launch_bounds__(kSimtWarps * 32)
    attention_simt(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                   int heads, int nq, int nk, int d, float scale) {
  pdl_enter();
  constexpr int kRows = kSimtWarps * kSimtRows;
  extern __shared__ float smem_f[];
  float* sq = smem_f;                       // [kRows][d]
  float* sk = sq + kRows * d;               // [kSimtKeys][d + 1]
  float* sv = sk + kSimtKeys * (d + 1);     // [kSimtKeys][d]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int bh = blockIdx.y, q0 = blockIdx.x * kRows;
  const T* qb = q + static_cast<int64_t>(bh) * nq * d;
  const T* kb = k + static_cast<int64_t>(bh) * nk * d;
  const T* vb = v + static_cast<int64_t>(bh) * nk * d;
  for (int i = tid; i < kRows * d; i += blockDim.x) {
    const int r = i / d;
    sq[i] = q0 + r < nq ? to_float(qb[static_cast<int64_t>(q0) * d + i]) : 0.f;
  }
  float o[kSimtRows][DC], m[kSimtRows], l[kSimtRows];
#pragma unroll
  for (int r = 0; r < kSimtRows; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int c = 0; c < DC; ++c) o[r][c] = 0.f;
  }
  for (int key0 = 0; key0 < nk; key0 += kSimtKeys) {
    __syncthreads();
    for (int i = tid; i < kSimtKeys * d; i += blockDim.x) {
      const int r = i / d, c = i % d;
      const bool ok = key0 + r < nk;
      sk[r * (d + 1) + c] = ok ? to_float(kb[static_cast<int64_t>(key0) * d + i]) : 0.f;
      sv[i] = ok ? to_float(vb[static_cast<int64_t>(key0) * d + i]) : 0.f;
    }
    __syncthreads();
    float sc[kSimtRows] = {};
    for (int c = 0; c < d; ++c) {
      const float kv = sk[lane * (d + 1) + c];
#pragma unroll
      for (int r = 0; r < kSimtRows; ++r) sc[r] = fmaf(sq[(warp * kSimtRows + r) * d + c], kv, sc[r]);
    }
    const bool valid = key0 + lane < nk;
#pragma unroll
    for (int r = 0; r < kSimtRows; ++r) {
      float x = valid ? sc[r] * scale : -INFINITY;
      float mx = x;
      for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[r], mx);
      const float alpha = expf(m[r] - m_new);  // m_new is finite: this tile has a valid key
      sc[r] = valid ? expf(x - m_new) : 0.f;
      l[r] = l[r] * alpha + sc[r];
      m[r] = m_new;
#pragma unroll
      for (int c = 0; c < DC; ++c) o[r][c] *= alpha;
    }
    for (int jj = 0; jj < kSimtKeys; ++jj) {
      float vv[DC];
#pragma unroll
      for (int c = 0; c < DC; ++c) vv[c] = lane + 32 * c < d ? sv[jj * d + lane + 32 * c] : 0.f;
#pragma unroll
      for (int r = 0; r < kSimtRows; ++r) {
        const float p = __shfl_sync(0xffffffffu, sc[r], jj);
#pragma unroll
        for (int c = 0; c < DC; ++c) o[r][c] = fmaf(p, vv[c], o[r][c]);
      }
    }
  }
  const int b = bh / heads, h = bh % heads;
#pragma unroll
  for (int r = 0; r < kSimtRows; ++r) {
    float sum = l[r];
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const int row = q0 + warp * kSimtRows + r;
    if (row >= nq) continue;
    T* orow = out + ((static_cast<int64_t>(b) * nq + row) * heads + h) * d;
#pragma unroll
    for (int c = 0; c < DC; ++c)
      if (lane + 32 * c < d) orow[lane + 32 * c] = from_float<T>(o[r][c] / sum);
  }
}

struct Dims {
  int b, h, nq, nk, d;
};

void set_smem(const void* kernel, size_t bytes, const char* name) {
  if (bytes > 48 * 1024)
    DACPP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)),
                     "attention: shared memory opt-in of ", bytes, " bytes for kernel ", name);
}

// The tensor-core kernel's operands: q / k / v base pointers and where their rows live, the output, the dtype, and
// device memory for split-KV partial results (partial_bytes(g); may be null when no split is asked for).
struct TcArgs {
  const void *q, *k, *v;
  void* out;
  Strides st;
  DType dtype;
  bool packed;  // q, k, v are column blocks of one fused qkv projection (attention_qkv)
  float* partials = nullptr;
};

constexpr int kMaxSplits = 4;

// Device bytes split-KV launches of g may use: kMaxSplits × (D f32 outputs + 1 lse) per query row.
size_t partial_bytes(const Dims& g) {
  return sizeof(float) * kMaxSplits * static_cast<size_t>(g.b) * g.h * g.nq * (g.d + 1);
}

// q [B, H, nq, D], k / v [B, H, nk, D], each contiguous.
TcArgs separate_args(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, const Dims& g) {
  const int64_t h = g.h, nq = g.nq, nk = g.nk, d = g.d;
  return {q.raw(), k.raw(), v.raw(), out.raw(), Strides{h * nq * d, nq * d, h * nk * d, nk * d, g.d}, q.dtype(),
          false};
}

// q, k and v as column blocks of the fused projection qkv [B, N, 3·H·D] (row stride 3·H·D); the queries are the
// g.nq tokens from row0 on, the keys and values all N.
TcArgs packed_args(const Tensor& qkv, int64_t heads, Tensor& out, const Dims& g, int64_t row0 = 0) {
  const int64_t n = qkv.dim(1), hd = heads * g.d;
  const auto* base = static_cast<const char*>(qkv.raw());
  const int64_t block = static_cast<int64_t>(dtype_nbytes(qkv.dtype(), hd));  // bytes of one of q / k / v per token
  return {base + row0 * 3 * block,
          base + block,
          base + 2 * block,
          out.raw(),
          Strides{n * 3 * hd, g.d, n * 3 * hd, g.d, static_cast<int>(3 * hd)},
          qkv.dtype(),
          true};
}

// The split actually launched for `splits` asked with key tiles of `tile` keys: every split gets at least one tile.
Split make_split(const TcArgs& a, const Dims& g, int splits, int tile) {
  const int ntiles = (g.nk + tile - 1) / tile;
  if (splits <= 1 || ntiles <= 1) return Split{1, ntiles, nullptr, nullptr};
  const int per = (ntiles + splits - 1) / splits;
  const int count = (ntiles + per - 1) / per;
  if (count <= 1) return Split{1, ntiles, nullptr, nullptr};
  const int64_t rows = int64_t{g.b} * g.h * g.nq;
  return Split{count, per, a.partials, a.partials + count * rows * g.d};
}

// After a split-KV launch: the partial results combined into a.out (nothing for an unsplit one).
template <typename T, int D>
void launch_combine(const CudaContext& c, const TcArgs& a, const Dims& g, const Split& sp) {
  if (sp.splits == 1) return;
  const int64_t rows = int64_t{g.b} * g.h * g.nq;
  launch_kernel(c, "attention_combine", attention_combine<T, D>,
                static_cast<unsigned>((rows + kCombineWarps - 1) / kCombineWarps), kCombineWarps * 32, 0, sp.o, sp.lse,
                static_cast<T*>(a.out), sp.splits, g.h, g.nq, rows);
}

// One launch of a flash kernel over row blocks of `rows` queries with `threads` threads and `smem` bytes (opted in
// for `kernel`), the keys split in tiles of `tile` when `splits` > 1, then the combine pass of a split launch.
// launch(grid, threads, smem, scale_log2, split) enqueues the kernel itself (its parameters differ per kernel).
template <typename T, int D, typename Launch>
void launch_split_kv(const CudaContext& c, const void* kernel, const char* name, int rows, int threads, size_t smem,
                     int tile, const TcArgs& a, float scale, const Dims& g, int splits, const Launch& launch) {
  set_smem(kernel, smem, name);
  const Split sp = make_split(a, g, splits, tile);
  DACPP_CHECK(sp.splits == 1 || a.partials != nullptr, ErrorCode::Internal, name,
              ": a split-KV launch without partial-result memory");
  const dim3 grid((g.nq + rows - 1) / rows, g.b * g.h, sp.splits);
  launch(grid, threads, smem, scale * 1.4426950408889634f, sp);
  launch_combine<T, D>(c, a, g, sp);
}

// launch_split_kv of a kernel reading q / k / v by pointer (flash_attention_tc or flash_attention_wgmma: same
// parameters).
template <typename T, int D, typename Kernel>
void launch_flash(const CudaContext& c, Kernel kernel, const char* name, int rows, int threads, size_t smem, int tile,
                  const TcArgs& a, float scale, const Dims& g, int splits) {
  launch_split_kv<T, D>(c, reinterpret_cast<const void*>(kernel), name, rows, threads, smem, tile, a, scale, g, splits,
                        [&](dim3 grid, int block, size_t bytes, float scale_log2, const Split& sp) {
                          launch_kernel(c, name, kernel, grid, block, bytes, static_cast<const T*>(a.q),
                                        static_cast<const T*>(a.k), static_cast<const T*>(a.v), static_cast<T*>(a.out),
                                        g.h, g.nq, g.nk, scale_log2, a.st, sp);
                        });
}

template <typename T, int D, int MT, int WARPS>
void launch_tc(const CudaContext& c, const TcArgs& a, float scale, const Dims& g, int splits) {
  constexpr int kRows = 16 * MT * WARPS;
  const size_t smem = static_cast<size_t>(kRows + 4 * kBc) * (D + 8) * sizeof(T);
  launch_flash<T, D>(c, flash_attention_tc<T, D, MT, WARPS>, "flash_attention_tc", kRows, WARPS * 32, smem, kBc, a,
                     scale, g, splits);
}

template <typename T, int WG, int BC>
void launch_wgmma(const CudaContext& c, const TcArgs& a, float scale, const Dims& g, int splits) {
  constexpr int kRows = 64 * WG;
  const size_t smem = static_cast<size_t>(kRows + 4 * BC) * 128 + 1024;  // + 1 KiB to align the tiles
  launch_flash<T, 64>(c, flash_attention_wgmma<T, WG, BC>, "flash_attention_wgmma", kRows, WG * 128, smem, BC, a, scale,
                      g, splits);
}

// The TMA kernel's map of q, k or v (`rows` rows per head, `head` / `batch` elements apart, rows a.st.row apart):
// dims (D, rows, heads, batch), box (64, box_rows, 1, 1).
CUtensorMap head_map(const void* base, const TcArgs& a, const Dims& g, int rows, int64_t head, int64_t batch,
                     uint32_t box_rows, const char* what) {
  constexpr uint64_t kElem = 2;
  const uint64_t dims[4] = {static_cast<uint64_t>(g.d), static_cast<uint64_t>(rows), static_cast<uint64_t>(g.h),
                            static_cast<uint64_t>(g.b)};
  const uint64_t strides[3] = {kElem * static_cast<uint64_t>(a.st.row), kElem * static_cast<uint64_t>(head),
                               kElem * static_cast<uint64_t>(batch)};
  const uint32_t box[4] = {64, box_rows, 1, 1};
  return tma_map_4d(base, dims, strides, box, what);
}

// flash_attention_tma's head start per warpgroup in the staggered variants: about a fifth of a 64 × 128 key tile's
// step on DA2-L. Session 38 (H100): DA2-L's attention 24.2 -> 23.4 µs in the tuner; a forward 3.157 -> 3.141 ms on
// one machine, no change measurable on another; 1400 cycles no better. The tuner keeps them where they time faster.
constexpr int kStaggerCycles = 700;

template <typename T, int WG, int BC, bool OV = false, int kStages = kTmaStages<BC, OV>>
void launch_tma(const CudaContext& c, const TcArgs& a, float scale, const Dims& g, int splits, int stagger = 0,
                bool turns = false) {
  constexpr int kRows = 64 * WG;
  const auto kernel = flash_attention_tma<T, WG, BC, kStages, OV>;
  const size_t smem = static_cast<size_t>(kRows + 2 * kStages * BC) * 128 + 1024;  // + 1 KiB to align the tiles
  const CUtensorMap mq = head_map(a.q, a, g, g.nq, a.st.q_head, a.st.q_batch, kRows, "attention q");
  const CUtensorMap mk = head_map(a.k, a, g, g.nk, a.st.kv_head, a.st.kv_batch, BC, "attention k");
  const CUtensorMap mv = head_map(a.v, a, g, g.nk, a.st.kv_head, a.st.kv_batch, BC, "attention v");
  launch_split_kv<T, 64>(c, reinterpret_cast<const void*>(kernel), "flash_attention_tma", kRows, WG * 128, smem, BC, a,
                         scale, g, splits, [&](dim3 grid, int block, size_t bytes, float scale_log2, const Split& sp) {
                           launch_kernel(c, "flash_attention_tma", kernel, grid, block, bytes, mq, mk, mv,
                                         static_cast<T*>(a.out), g.h, g.nq, g.nk, scale_log2, sp, stagger, turns);
                         });
}

template <typename T, int DC>
void launch_simt(const CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out,
                 const Dims& g) {
  const auto kernel = attention_simt<T, DC>;
  constexpr int kRows = kSimtWarps * kSimtRows;
  const size_t smem = sizeof(float) * (static_cast<size_t>(kRows) * g.d + kSimtKeys * (g.d + 1) + kSimtKeys * g.d);
  set_smem(reinterpret_cast<const void*>(kernel), smem, "attention_simt");
  const dim3 grid((g.nq + kRows - 1) / kRows, g.b * g.h);
  launch_kernel(c, "attention_simt", kernel, grid, kSimtWarps * 32, smem, static_cast<const T*>(q.raw()),
                static_cast<const T*>(k.raw()), static_cast<const T*>(v.raw()), static_cast<T*>(out.raw()), g.h, g.nq,
                g.nk, g.d, scale);
}

template <typename T>
void dispatch_simt(const CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out,
                   const Dims& g) {
  if (g.d <= 32) return launch_simt<T, 1>(c, q, k, v, scale, out, g);
  if (g.d <= 64) return launch_simt<T, 2>(c, q, k, v, scale, out, g);
  if (g.d <= 128) return launch_simt<T, 4>(c, q, k, v, scale, out, g);
  return launch_simt<T, 8>(c, q, k, v, scale, out, g);
}

// The tensor-core kernels' variants: flash_attention_tc's 16-row m-tiles per warp × warps per block, and the
// warpgroups per block × keys per tile of flash_attention_wgmma (G) and flash_attention_tma (T; V: one warpgroup
// overlapping its own tiles; L: the same with a two-stage ring; S: V with the warpgroups started out of step)
// (D = 64 where CudaContext::hopper_mma()).
enum class TcVariant : int {
  M1W4, M2W4, M2W2, M1W2, M1W1,
  G1K64, G1K128, G2K64, G2K128, G3K64, G3K128,
  T1K64, T1K128, T2K64, T2K128, T3K64, T3K128,
  V1K64, V1K128, V2K64, V2K128, V3K64, V3K128,
  L1K64, L1K128, L2K64, L2K128, L3K64, L3K128,
  S2K64, S2K128, S3K64, S3K128,
  P2K64, P2K128, P3K64, P3K128
};

const char* variant_name(TcVariant v) {
  switch (v) {
    case TcVariant::M1W4: return "64 rows/4 warps";
    case TcVariant::M2W4: return "128 rows/4 warps";
    case TcVariant::M2W2: return "64 rows/2 warps";
    case TcVariant::M1W2: return "32 rows/2 warps";
    case TcVariant::M1W1: return "16 rows/1 warp";
    case TcVariant::G1K64: return "wgmma 64 rows/64 keys";
    case TcVariant::G1K128: return "wgmma 64 rows/128 keys";
    case TcVariant::G2K64: return "wgmma 128 rows/64 keys";
    case TcVariant::G2K128: return "wgmma 128 rows/128 keys";
    case TcVariant::G3K64: return "wgmma 192 rows/64 keys";
    case TcVariant::G3K128: return "wgmma 192 rows/128 keys";
    case TcVariant::T1K64: return "tma 64 rows/64 keys";
    case TcVariant::T1K128: return "tma 64 rows/128 keys";
    case TcVariant::T2K64: return "tma 128 rows/64 keys";
    case TcVariant::T2K128: return "tma 128 rows/128 keys";
    case TcVariant::T3K64: return "tma 192 rows/64 keys";
    case TcVariant::T3K128: return "tma 192 rows/128 keys";
    case TcVariant::V1K64: return "tma overlapped 64 rows/64 keys";
    case TcVariant::V1K128: return "tma overlapped 64 rows/128 keys";
    case TcVariant::V2K64: return "tma overlapped 128 rows/64 keys";
    case TcVariant::V2K128: return "tma overlapped 128 rows/128 keys";
    case TcVariant::V3K64: return "tma overlapped 192 rows/64 keys";
    case TcVariant::V3K128: return "tma overlapped 192 rows/128 keys";
    case TcVariant::L1K64: return "tma overlapped lean 64 rows/64 keys";
    case TcVariant::L1K128: return "tma overlapped lean 64 rows/128 keys";
    case TcVariant::L2K64: return "tma overlapped lean 128 rows/64 keys";
    case TcVariant::L2K128: return "tma overlapped lean 128 rows/128 keys";
    case TcVariant::L3K64: return "tma overlapped lean 192 rows/64 keys";
    case TcVariant::L3K128: return "tma overlapped lean 192 rows/128 keys";
    case TcVariant::S2K64: return "tma overlapped staggered 128 rows/64 keys";
    case TcVariant::S2K128: return "tma overlapped staggered 128 rows/128 keys";
    case TcVariant::S3K64: return "tma overlapped staggered 192 rows/64 keys";
    case TcVariant::S3K128: return "tma overlapped staggered 192 rows/128 keys";
    case TcVariant::P2K64: return "tma overlapped in turns 128 rows/64 keys";
    case TcVariant::P2K128: return "tma overlapped in turns 128 rows/128 keys";
    case TcVariant::P3K64: return "tma overlapped in turns 192 rows/64 keys";
    case TcVariant::P3K128: return "tma overlapped in turns 192 rows/128 keys";
  }
  return "?";
}

// The tensor-core kernel takes bf16 / f16 with D in {32, 64, 128}, 16-byte aligned bases and row strides, and a
// positive finite scale (its softmax takes the maximum of the unscaled scores).
bool tc_applies(const TcArgs& a, const Dims& g, float scale) {
  if (a.dtype == DType::F32 || (g.d != 32 && g.d != 64 && g.d != 128) || (a.st.row * 2) % 16 != 0) return false;
  if (!(scale > 0.f) || !std::isfinite(scale)) return false;
  for (const void* p : {a.q, a.k, a.v, static_cast<const void*>(a.out)})
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// A launch: the tiling and how many blocks share each row block's keys.
struct TcPlan {
  TcVariant var;
  int splits;
};

template <typename T, int D>
void launch_variant(const CudaContext& c, const TcArgs& a, float scale, const Dims& g, TcPlan p) {
  if constexpr (D == 64) {
    if (p.var == TcVariant::G1K64) return launch_wgmma<T, 1, 64>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::G1K128) return launch_wgmma<T, 1, 128>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::G2K64) return launch_wgmma<T, 2, 64>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::G2K128) return launch_wgmma<T, 2, 128>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::G3K64) return launch_wgmma<T, 3, 64>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::G3K128) return launch_wgmma<T, 3, 128>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::T1K64) return launch_tma<T, 1, 64>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::T1K128) return launch_tma<T, 1, 128>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::T2K64) return launch_tma<T, 2, 64>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::T2K128) return launch_tma<T, 2, 128>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::T3K64) return launch_tma<T, 3, 64>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::T3K128) return launch_tma<T, 3, 128>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::V1K64) return launch_tma<T, 1, 64, true>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::V1K128) return launch_tma<T, 1, 128, true>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::V2K64) return launch_tma<T, 2, 64, true>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::V2K128) return launch_tma<T, 2, 128, true>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::V3K64) return launch_tma<T, 3, 64, true>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::V3K128) return launch_tma<T, 3, 128, true>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::L1K64) return launch_tma<T, 1, 64, true, 2>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::L1K128) return launch_tma<T, 1, 128, true, 2>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::L2K64) return launch_tma<T, 2, 64, true, 2>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::L2K128) return launch_tma<T, 2, 128, true, 2>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::L3K64) return launch_tma<T, 3, 64, true, 2>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::L3K128) return launch_tma<T, 3, 128, true, 2>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::S2K64) return launch_tma<T, 2, 64, true>(c, a, scale, g, p.splits, kStaggerCycles);
    if (p.var == TcVariant::S2K128) return launch_tma<T, 2, 128, true>(c, a, scale, g, p.splits, kStaggerCycles);
    if (p.var == TcVariant::S3K64) return launch_tma<T, 3, 64, true>(c, a, scale, g, p.splits, kStaggerCycles);
    if (p.var == TcVariant::S3K128) return launch_tma<T, 3, 128, true>(c, a, scale, g, p.splits, kStaggerCycles);
    if (p.var == TcVariant::P2K64) return launch_tma<T, 2, 64, true>(c, a, scale, g, p.splits, 0, true);
    if (p.var == TcVariant::P2K128) return launch_tma<T, 2, 128, true>(c, a, scale, g, p.splits, 0, true);
    if (p.var == TcVariant::P3K64) return launch_tma<T, 3, 64, true>(c, a, scale, g, p.splits, 0, true);
    if (p.var == TcVariant::P3K128) return launch_tma<T, 3, 128, true>(c, a, scale, g, p.splits, 0, true);
  }
  if constexpr (D <= 64) {  // two m-tiles per warp double the accumulators: D = 128 would spill
    if (p.var == TcVariant::M2W4) return launch_tc<T, D, 2, 4>(c, a, scale, g, p.splits);
    if (p.var == TcVariant::M2W2) return launch_tc<T, D, 2, 2>(c, a, scale, g, p.splits);
  }
  if (p.var == TcVariant::M1W2) return launch_tc<T, D, 1, 2>(c, a, scale, g, p.splits);
  if (p.var == TcVariant::M1W1) return launch_tc<T, D, 1, 1>(c, a, scale, g, p.splits);
  launch_tc<T, D, 1, 4>(c, a, scale, g, p.splits);
}

template <typename T>
void run_tc(const CudaContext& c, const TcArgs& a, float scale, const Dims& g, TcPlan p) {
  if (g.d == 64) return launch_variant<T, 64>(c, a, scale, g, p);
  if (g.d == 32) return launch_variant<T, 32>(c, a, scale, g, p);
  launch_variant<T, 128>(c, a, scale, g, p);
}

void run_tc_any(CudaContext& c, const TcArgs& a, float scale, const Dims& g, TcPlan p) {
  if (a.dtype == DType::BF16) return run_tc<__nv_bfloat16>(c, a, scale, g, p);
  run_tc<__half>(c, a, scale, g, p);
}

// The plan for this shape: tuned on first use (tuned_choice), 64 rows / 4 warps unsplit when tuning cannot run.
// D = 128 chooses among the one-m-tile variants (two m-tiles would spill); D = 64 on Hopper (an sm_90a build) also
// tries the six tilings of each of the wgmma and TMA kernels and the TMA kernel's twenty overlapped ones (1-3
// warpgroups × 64 / 128 keys, default or lean ring; 2-3 staggered or in turns). Splitting the keys is tried only
// when the unsplit 64-row grid gives fewer than four blocks per multiprocessor (with more, the grid already hides
// latency and a split only adds the combine pass).
TcPlan choose_plan(CudaContext& c, const TcArgs& a, float scale, const Dims& g) {
  constexpr TcVariant kVariants[] = {TcVariant::M1W4,   TcVariant::M1W2,   TcVariant::M1W1,   TcVariant::M2W4,
                                     TcVariant::M2W2,   TcVariant::G1K64,  TcVariant::G1K128, TcVariant::G2K64,
                                     TcVariant::G2K128, TcVariant::G3K64,  TcVariant::G3K128, TcVariant::T1K64,
                                     TcVariant::T1K128, TcVariant::T2K64,  TcVariant::T2K128, TcVariant::T3K64,
                                     TcVariant::T3K128, TcVariant::V1K64,  TcVariant::V1K128, TcVariant::V2K64,
                                     TcVariant::V2K128, TcVariant::V3K64,  TcVariant::V3K128, TcVariant::L1K64,
                                     TcVariant::L1K128, TcVariant::L2K64,  TcVariant::L2K128, TcVariant::L3K64,
                                     TcVariant::L3K128, TcVariant::S2K64,  TcVariant::S2K128, TcVariant::S3K64,
                                     TcVariant::S3K128, TcVariant::P2K64,  TcVariant::P2K128, TcVariant::P3K64,
                                     TcVariant::P3K128};
  constexpr int kAll = static_cast<int>(std::size(kVariants));
  const int variants = g.d > 64 ? 3 : g.d == 64 && c.hopper_mma() ? kAll : 5;
  const int64_t blocks64 = int64_t{g.b} * g.h * ((g.nq + 63) / 64);
  const int splits = a.partials != nullptr && blocks64 < 4 * int64_t{c.sm_count()} ? kMaxSplits : 1;
  const auto plan = [&](int i) { return TcPlan{kVariants[i % variants], 1 + i / variants}; };
  const std::string key = str_cat("attention ", g.b, ",", g.h, ",", g.nq, ",", g.nk, ",", g.d, ",",
                                  dtype_name(a.dtype), a.packed ? ",packed" : "");
  return plan(tuned_choice(
      c, key, variants * splits, 0,
      [&](int i) {
        run_tc_any(c, a, scale, g, plan(i));
        return true;
      },
      3,
      [&](int i) {
        const TcPlan p = plan(i);
        return p.splits == 1 ? std::string(variant_name(p.var)) : str_cat(variant_name(p.var), " /", p.splits);
      }));
}

// The kernels' dims, checked against their limits before narrowing to int (Unsupported naming the op and shape).
Dims checked_dims(int64_t b, int64_t h, int64_t nq, int64_t nk, int64_t d, const char* what, const Shape& shape) {
  DACPP_CHECK(d <= 256, ErrorCode::Unsupported, what, " (cuda): head dim D = ", d, " is not supported (D <= 256)");
  DACPP_CHECK(nq < (int64_t{1} << 30) && nk < (int64_t{1} << 30) && b * h <= 65535, ErrorCode::Unsupported, what,
              " (cuda): shape ", shape_str(shape), " exceeds the kernel's grid limits (B·H <= 65535)");
  return Dims{static_cast<int>(b), static_cast<int>(h), static_cast<int>(nq), static_cast<int>(nk),
              static_cast<int>(d)};
}

}  // namespace

namespace {

Dims separate_dims(const Tensor& q, const Tensor& k, const char* what) {
  return checked_dims(q.dim(0), q.dim(1), q.dim(2), k.dim(2), q.dim(3), what, q.shape());
}

// attention() with the split-KV partial results in `partials` (partial_bytes of the shape), or in scratch() when null.
void attention_into(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out,
                    float* partials) {
  if (out.numel() == 0) return;
  const Dims g = separate_dims(q, k, "attention");
  c.make_current();
  TcArgs a = separate_args(q, k, v, out, g);
  if (tc_applies(a, g, scale)) {
    a.partials = partials ? partials
                          : static_cast<float*>(c.scratch(partial_bytes(g), "attention split-KV partial results"));
    return run_tc_any(c, a, scale, g, choose_plan(c, a, scale, g));
  }
  switch (q.dtype()) {
    case DType::BF16:
      return dispatch_simt<__nv_bfloat16>(c, q, k, v, scale, out, g);
    case DType::F16:
      return dispatch_simt<__half>(c, q, k, v, scale, out, g);
    case DType::F32:
      return dispatch_simt<float>(c, q, k, v, scale, out, g);
    default:
      break;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "attention (cuda): dtype ", dtype_name(q.dtype()), " is not supported");
}

size_t round_up_256(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

void attention(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out) {
  attention_into(c, q, k, v, scale, out, nullptr);
}

void attention_qkv(CudaContext& c, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t b = qkv.dim(0), n = qkv.dim(1), hd = qkv.dim(2) / 3, d = hd / heads, nq = out.dim(1);
  const Dims g = checked_dims(b, heads, nq, n, d, "attention_qkv", qkv.shape());
  c.make_current();
  TcArgs a = packed_args(qkv, heads, out, g, row0);
  if (tc_applies(a, g, scale)) {
    a.partials = static_cast<float*>(c.scratch(partial_bytes(g), "attention split-KV partial results"));
    return run_tc_any(c, a, scale, g, choose_plan(c, a, scale, g));
  }
  // Other dtypes and head dims: the heads permuted into scratch (the split-KV results after them), then the
  // general kernels over every row; a row range is attended in full behind them and its rows copied out.
  const Dims all = checked_dims(b, heads, n, n, d, "attention_qkv", qkv.shape());
  const bool chunk = row0 != 0 || nq != n;
  const size_t heads_bytes = round_up_256(qkv.nbytes()), partials = round_up_256(partial_bytes(all));
  const size_t full_bytes = chunk ? dtype_nbytes(qkv.dtype(), b * n * hd) : 0;
  auto* mem = static_cast<char*>(c.scratch(heads_bytes + partials + full_bytes, "attention_qkv heads"));
  Tensor split = Tensor::view(mem, {3, b, heads, n, d}, qkv.dtype(), qkv.device(), nullptr, "attention_qkv heads");
  permute(c, qkv.reshape({b, n, 3, heads, d}), {2, 0, 3, 1, 4}, split);
  const Shape hs{b, heads, n, d};
  Tensor full = chunk ? Tensor::view(mem + heads_bytes + partials, {b, n, heads, d}, qkv.dtype(), qkv.device(), nullptr,
                                     "attention_qkv every row")
                      : out;
  attention_into(c, split.slice0(0, 1).reshape(hs), split.slice0(1, 2).reshape(hs), split.slice0(2, 3).reshape(hs),
                 scale, full, reinterpret_cast<float*>(mem + heads_bytes));
  if (!chunk) return;
  const size_t row_bytes = dtype_nbytes(qkv.dtype(), hd);
  DACPP_CUDA_CHECK(cudaMemcpy2DAsync(out.raw(), nq * row_bytes, static_cast<const char*>(full.raw()) + row0 * row_bytes,
                                     n * row_bytes, nq * row_bytes, b, cudaMemcpyDeviceToDevice, c.stream()),
                   "attention_qkv: copying query rows [", row0, ", ", row0 + nq, ") of ", n);
}

void attention_variant(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out,
                       int m_tiles, int warps, int splits) {
  const Dims g = separate_dims(q, k, "attention_variant");
  const bool known = (m_tiles == 1 && (warps == 4 || warps == 2 || warps == 1)) ||
                     (m_tiles == 2 && (warps == 4 || warps == 2));
  TcArgs a = separate_args(q, k, v, out, g);
  DACPP_CHECK(tc_applies(a, g, scale) && known && (m_tiles == 1 || g.d <= 64) && splits >= 1 && splits <= kMaxSplits,
              ErrorCode::InvalidArgument, "attention_variant (cuda): q ", shape_str(q.shape()), " variant ", m_tiles,
              "x", warps, " /", splits, " not supported");
  if (out.numel() == 0) return;
  c.make_current();
  const TcVariant var = m_tiles == 2 ? (warps == 4 ? TcVariant::M2W4 : TcVariant::M2W2)
                                     : warps == 4 ? TcVariant::M1W4 : warps == 2 ? TcVariant::M1W2 : TcVariant::M1W1;
  a.partials = static_cast<float*>(c.scratch(partial_bytes(g), "attention split-KV partial results"));
  run_tc_any(c, a, scale, g, TcPlan{var, splits});
}

bool attention_wgmma_available(const CudaContext& c) { return c.hopper_mma(); }

namespace {

// The Hopper variant (kernel, warpgroups × key_tile) of a, checked as attention_wgmma_variant documents.
void run_hopper_variant(CudaContext& c, TcArgs a, const Dims& g, float scale, const Shape& shape, int64_t out_numel,
                        HopperAttention kernel, int warpgroups, int key_tile, int splits, const char* what) {
  DACPP_CHECK(c.hopper_mma(), ErrorCode::Unsupported, what, " (cuda): the wgmma kernels need an ",
              "sm_90 GPU and a build with CMAKE_CUDA_ARCHITECTURES holding 90a (", c.device_name(), ", sm_",
              c.sm_version(), ")");
  DACPP_CHECK(tc_applies(a, g, scale) && g.d == 64 && warpgroups >= 1 && warpgroups <= 3 &&
                  (key_tile == 64 || key_tile == 128) && splits >= 1 && splits <= kMaxSplits,
              ErrorCode::InvalidArgument, what, " (cuda): ", shape_str(shape), " variant ", warpgroups,
              " warpgroups, ", key_tile, " keys /", splits, " not supported");
  // [kernel][warpgroups - 1][key_tile == 128], in HopperAttention's order.
  constexpr TcVariant kByShape[6][3][2] = {{{TcVariant::G1K64, TcVariant::G1K128},
                                            {TcVariant::G2K64, TcVariant::G2K128},
                                            {TcVariant::G3K64, TcVariant::G3K128}},
                                           {{TcVariant::T1K64, TcVariant::T1K128},
                                            {TcVariant::T2K64, TcVariant::T2K128},
                                            {TcVariant::T3K64, TcVariant::T3K128}},
                                           {{TcVariant::V1K64, TcVariant::V1K128},
                                            {TcVariant::V2K64, TcVariant::V2K128},
                                            {TcVariant::V3K64, TcVariant::V3K128}},
                                           {{TcVariant::L1K64, TcVariant::L1K128},
                                            {TcVariant::L2K64, TcVariant::L2K128},
                                            {TcVariant::L3K64, TcVariant::L3K128}},
                                           {{TcVariant::V1K64, TcVariant::V1K128},
                                            {TcVariant::S2K64, TcVariant::S2K128},
                                            {TcVariant::S3K64, TcVariant::S3K128}},
                                           {{TcVariant::V1K64, TcVariant::V1K128},
                                            {TcVariant::P2K64, TcVariant::P2K128},
                                            {TcVariant::P3K64, TcVariant::P3K128}}};
  const TcVariant var = kByShape[static_cast<int>(kernel)][warpgroups - 1][key_tile == 128];
  if (out_numel == 0) return;
  c.make_current();
  a.partials = static_cast<float*>(c.scratch(partial_bytes(g), "attention split-KV partial results"));
  run_tc_any(c, a, scale, g, TcPlan{var, splits});
}

}  // namespace

void attention_wgmma_variant(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                             Tensor& out, int warpgroups, int key_tile, int splits, HopperAttention kernel) {
  const Dims g = separate_dims(q, k, "attention_wgmma_variant");
  const TcArgs a = separate_args(q, k, v, out, g);
  run_hopper_variant(c, a, g, scale, q.shape(), out.numel(), kernel, warpgroups, key_tile, splits,
                     "attention_wgmma_variant");
}

void attention_qkv_wgmma_variant(CudaContext& c, const Tensor& qkv, int64_t heads, float scale, Tensor& out,
                                 int warpgroups, int key_tile, int splits, HopperAttention kernel) {
  const int64_t b = qkv.dim(0), n = qkv.dim(1), hd = qkv.dim(2) / 3, d = hd / heads;
  const Dims g = checked_dims(b, heads, n, n, d, "attention_qkv_wgmma_variant", qkv.shape());
  const TcArgs a = packed_args(qkv, heads, out, g);
  run_hopper_variant(c, a, g, scale, qkv.shape(), out.numel(), kernel, warpgroups, key_tile, splits,
                     "attention_qkv_wgmma_variant");
}

// Every tensor-core variant launch_variant can run for (T, D): one m-tile per warp with 4 / 2 / 1 warps, for
// D <= 64 two m-tiles with 4 / 2 warps, for D = 64 the wgmma kernel's six tilings.
template <typename T, int D>
void add_tc_variants(std::vector<KernelInfo>& out, const char* type) {
  const auto add = [&](const void* kernel, int m_tiles, int warps) {
    out.push_back({str_cat("flash_attention_tc<", type, ",", D, ",", m_tiles, "x", warps, ">"), kernel});
  };
  add(reinterpret_cast<const void*>(&flash_attention_tc<T, D, 1, 4>), 1, 4);
  add(reinterpret_cast<const void*>(&flash_attention_tc<T, D, 1, 2>), 1, 2);
  add(reinterpret_cast<const void*>(&flash_attention_tc<T, D, 1, 1>), 1, 1);
  if constexpr (D <= 64) {
    add(reinterpret_cast<const void*>(&flash_attention_tc<T, D, 2, 4>), 2, 4);
    add(reinterpret_cast<const void*>(&flash_attention_tc<T, D, 2, 2>), 2, 2);
  }
  if constexpr (D == 64) {  // compiled empty outside sm_90a, launched only where CudaContext::hopper_mma()
    const auto add_wg = [&](const void* kernel, int warpgroups, int keys) {
      out.push_back({str_cat("flash_attention_wgmma<", type, ",", warpgroups, "x", keys, ">"), kernel});
    };
    add_wg(reinterpret_cast<const void*>(&flash_attention_wgmma<T, 1, 64>), 1, 64);
    add_wg(reinterpret_cast<const void*>(&flash_attention_wgmma<T, 1, 128>), 1, 128);
    add_wg(reinterpret_cast<const void*>(&flash_attention_wgmma<T, 2, 64>), 2, 64);
    add_wg(reinterpret_cast<const void*>(&flash_attention_wgmma<T, 2, 128>), 2, 128);
    add_wg(reinterpret_cast<const void*>(&flash_attention_wgmma<T, 3, 64>), 3, 64);
    add_wg(reinterpret_cast<const void*>(&flash_attention_wgmma<T, 3, 128>), 3, 128);
    const auto add_tma = [&](const void* kernel, int warpgroups, int keys) {
      out.push_back({str_cat("flash_attention_tma<", type, ",", warpgroups, "x", keys, ">"), kernel});
    };
    add_tma(reinterpret_cast<const void*>(&flash_attention_tma<T, 1, 64, kTmaStages<64, false>, false>), 1, 64);
    add_tma(reinterpret_cast<const void*>(&flash_attention_tma<T, 1, 128, kTmaStages<128, false>, false>), 1, 128);
    add_tma(reinterpret_cast<const void*>(&flash_attention_tma<T, 2, 64, kTmaStages<64, false>, false>), 2, 64);
    add_tma(reinterpret_cast<const void*>(&flash_attention_tma<T, 2, 128, kTmaStages<128, false>, false>), 2, 128);
    add_tma(reinterpret_cast<const void*>(&flash_attention_tma<T, 3, 64, kTmaStages<64, false>, false>), 3, 64);
    add_tma(reinterpret_cast<const void*>(&flash_attention_tma<T, 3, 128, kTmaStages<128, false>, false>), 3, 128);
    const auto add_ov = [&](const void* kernel, int warpgroups, int keys, const char* ring) {
      out.push_back({str_cat("flash_attention_tma<", type, ",", warpgroups, "x", keys, ",overlapped", ring, ">"), kernel});
    };
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 1, 64, kTmaStages<64, true>, true>), 1, 64, "");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 1, 128, kTmaStages<128, true>, true>), 1, 128, "");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 2, 64, kTmaStages<64, true>, true>), 2, 64, "");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 2, 128, kTmaStages<128, true>, true>), 2, 128, "");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 3, 64, kTmaStages<64, true>, true>), 3, 64, "");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 3, 128, kTmaStages<128, true>, true>), 3, 128, "");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 1, 64, 2, true>), 1, 64, ",2 stages");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 1, 128, 2, true>), 1, 128, ",2 stages");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 2, 64, 2, true>), 2, 64, ",2 stages");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 2, 128, 2, true>), 2, 128, ",2 stages");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 3, 64, 2, true>), 3, 64, ",2 stages");
    add_ov(reinterpret_cast<const void*>(&flash_attention_tma<T, 3, 128, 2, true>), 3, 128, ",2 stages");
  }
}

std::vector<KernelInfo> attention_kernels() {
  std::vector<KernelInfo> out = {
      {"attention_simt<f32,1>", reinterpret_cast<const void*>(&attention_simt<float, 1>)},
      {"attention_simt<f32,2>", reinterpret_cast<const void*>(&attention_simt<float, 2>)},
      {"attention_simt<f32,4>", reinterpret_cast<const void*>(&attention_simt<float, 4>)},
      {"attention_simt<f32,8>", reinterpret_cast<const void*>(&attention_simt<float, 8>)},
      {"attention_simt<bf16,2>", reinterpret_cast<const void*>(&attention_simt<__nv_bfloat16, 2>)},
      {"attention_simt<f16,2>", reinterpret_cast<const void*>(&attention_simt<__half, 2>)},
  };
  for (auto [name, kernel] : {
           std::pair{"attention_combine<bf16,32>", reinterpret_cast<const void*>(&attention_combine<__nv_bfloat16, 32>)},
           std::pair{"attention_combine<bf16,64>", reinterpret_cast<const void*>(&attention_combine<__nv_bfloat16, 64>)},
           std::pair{"attention_combine<bf16,128>", reinterpret_cast<const void*>(&attention_combine<__nv_bfloat16, 128>)},
           std::pair{"attention_combine<f16,32>", reinterpret_cast<const void*>(&attention_combine<__half, 32>)},
           std::pair{"attention_combine<f16,64>", reinterpret_cast<const void*>(&attention_combine<__half, 64>)},
           std::pair{"attention_combine<f16,128>", reinterpret_cast<const void*>(&attention_combine<__half, 128>)}})
    out.push_back({name, kernel});
  add_tc_variants<__nv_bfloat16, 32>(out, "bf16");
  add_tc_variants<__nv_bfloat16, 64>(out, "bf16");
  add_tc_variants<__nv_bfloat16, 128>(out, "bf16");
  add_tc_variants<__half, 32>(out, "f16");
  add_tc_variants<__half, 64>(out, "f16");
  add_tc_variants<__half, 128>(out, "f16");
  return out;
}

}  // namespace dacpp::cuda
