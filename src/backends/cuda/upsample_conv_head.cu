// upsample_conv_head (cuda_ops_nn.h): the DPT head's output stage in one kernel, with nothing stored at the output
// resolution:
//   y[n, 0, oy, ox] = b1 + Σ_m w1[m] · relu(b3[m] + Σ_tap Σ_c w3[m, c, tap] · up[n, c, oy + ky - 1, ox + kx - 1])
// where up = x resampled bilinearly (align_corners) to the output size and zero outside it (the 3×3 conv's padding),
// M = 32 hidden channels. Unfused, DA2-L spent ~0.3 ms here under ncu (session 11): the 518² × 128-channel
// upsampled map written and read back (0.14 ms), the 3×3 conv over it (0.14), the 32-channel map and the 1×1 conv.
//
// Block: an output tile of 8 rows × 48 columns of one image, 8 warps (one output row of 48 pixels each: three
// m16 tiles × four n8 tiles of the 32 hidden channels, mma.m16n8k16 with f32 accumulation). The input channels run
// in chunks of KC = 64 (or 32 when C % 64 != 0); per chunk, shared memory holds
//   halo [10 rows × 50 columns][KC]  the tile's upsampled input with its one-pixel border, computed here from x
//                                    (each value exactly as resize_bilinear computes and rounds it: the same taps,
//                                    the same f32 operations in the same order), then rounded to T;
//   taps [9 × 32][KC]                the chunk's weights, tap-major (copied with cp.async from [tap][32][C], made
//                                    once per weight: CudaContext::derived).
// Rows of both are KC·2 bytes of 16-byte chunks stored XOR-swizzled (chunk c of row r at c ^ (r / (8 / R) % R),
// R = KC / 8 chunks per row), so the ldmatrix of eight consecutive rows, whatever row it starts at, touches eight
// different bank groups: a tap's A tile starts kx pixels into a halo row. A fragments (pixels × channels) and B
// fragments (channels × hidden) both come from ldmatrix. One barrier after the fill, one before the next chunk's.
// The halo is filled 8 channels at a time in resize_kernel's two steps kept apart (the separable fill): each source
// column the tile reaches is blended vertically once per halo row into an f32 table, then each halo pixel across
// from it — the same operations as blending every pixel from its four sources, without repeating the vertical
// step per pixel (DA2-L's 518² stage: 65 → 46 M instructions, 140.7 → 124.5 µs under Nsight Compute). It needs the
// tile's columns to reach at most 32 source columns (scale ≤ 30/49; a DPT head's ×1.75 has 0.571); beyond that the
// source patch is staged (8 channels per pixel) and each pixel blended from it, and a downsampled axis gathers.
// ~111 KB of shared memory per block at KC = 64: two blocks per multiprocessor, one filling while the other
// multiplies.
// Epilogue: + b3, ReLU, the 1×1 conv to one channel (each lane's 8 hidden channels, then two shuffles across the
// quad that holds a row's 32), + b1, rounded once to T. (Unfused, the 32-channel map was rounded to T first.)
//
// The second path, taps first (namespace taps below), computes the same sum in another order: a GEMM at the source
// resolution, then a blend kernel. Neither path applies everywhere the other does; where both do, the faster one
// for the shape is timed on first use (DA2-L's 128 channels at 296² → 518²: taps first, 73 against 113 µs; DA2-S's
// 32 and DA2-B's 64 channels: the fused kernel).
// Taps first also serves conv2d_upsampled (cuda_ops_nn.h: a 3×3 conv of an upsampled map to O channels, no head
// epilogue), 32 output channels per block: the DPT heads' out1, which takes refinenet1's ×2 upsample (DA2-L's
// 148² 256 → 296² 128: 89 µs against the TMA conv's 151, tuned per shape in conv2d.cu).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/conv3x3_wgmma.cuh"
#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/mma_util.cuh"
#include "backends/cuda/tuning.h"

namespace dacpp::cuda {
namespace {

namespace head {

constexpr int kHidden = 32, kTileH = 8, kTileW = 48, kHaloH = kTileH + 2, kHaloW = kTileW + 2;
constexpr int kHalo = kHaloH * kHaloW, kThreads = 256;

struct Args {
  int c, h, w;             // x: [N, C, h, w]
  int oh, ow;              // y: [N, 1, oh, ow]
  float scale_h, scale_w;  // source pixels per output pixel (align_corners: (in - 1) / (out - 1))
  int final = 0;           // the head's activation on y: 0 none, 1 ReLU, 2 exp (ops::HeadFinal)
};

// The output value with the head's activation applied (Args::final), in f32 before y's rounding.
__device__ __forceinline__ float final_value(float v, int final) {
  return final == 1 ? fmaxf(v, 0.f) : final == 2 ? expf(v) : v;
}

// One axis of a halo tap: source indices i0, i1 and weights (1 - l, l), or outside the output (zero padding).
struct Tap {
  int i0, i1;
  float w0, w1;
  int inside;
};

// A halo tap (conv3x3_wg::upsample_tap: resize.cu's linear_taps with align_corners, in the same operations).
__device__ __forceinline__ Tap make_tap(int in, float scale, int o, int out) {
  Tap t{0, 0, 0.f, 0.f, o >= 0 && o < out};
  if (t.inside) conv3x3_wg::upsample_tap(in, scale, o, t.i0, t.i1, t.w0, t.w1);
  return t;
}

// The source patch a tile's halo taps reach, from the first and the last tap inside the output on each axis (taps
// are monotonic): its first row and column and its extent; all zero when no tap is inside.
struct Patch {
  int r0 = 0, c0 = 0, h = 0, w = 0;
};
__device__ __forceinline__ Patch patch_of(const Tap* rows, int n_rows, const Tap* cols, int n_cols) {
  int r_first = -1, r_last = -1, c_first = -1, c_last = -1;
  for (int i = 0; i < n_rows; ++i)
    if (rows[i].inside) r_first = r_first < 0 ? i : r_first, r_last = i;
  for (int i = 0; i < n_cols; ++i)
    if (cols[i].inside) c_first = c_first < 0 ? i : c_first, c_last = i;
  Patch p;
  if (r_first >= 0 && c_first >= 0) {
    p.r0 = rows[r_first].i0;
    p.c0 = cols[c_first].i0;
    p.h = rows[r_last].i1 - p.r0 + 1;
    p.w = cols[c_last].i1 - p.c0 + 1;
  }
  return p;
}

// Byte offset of 16-byte chunk `c` of row `r` in rows of KC 16-bit elements (KC / 8 chunks).
template <int KC>
__device__ __forceinline__ int swz(int r, int c) {
  constexpr int kChunks = KC / 8, kRowsPerLine = 8 / kChunks;
  return r * (KC * 2) + ((c ^ ((r / kRowsPerLine) % kChunks)) << 4);
}

// The source patch a tile's halo reaches when neither axis is downsampled: at most 9·scale + 2 rows and 49·scale + 2
// columns, kept 8 channels (16 bytes) per pixel.
constexpr int kPatchH = kHaloH + 1, kPatchW = kHaloW + 1;

// The separable fill's column bound: the halo's 50 columns reach at most 49·scale + 2 source columns, ≤ 32 up to
// scale 30/49 (a DPT head's last upsample, patch·8 → patch·14 pixels, has scale ≈ 0.571).
constexpr int kVcolW = 32;

template <int KC>
constexpr int smem_bytes() {
  return (kHalo + 9 * kHidden) * KC * 2 + std::max(kPatchH * kPatchW * 16, kHaloH * kVcolW * 32);
}

template <typename T, int KC>
__global__ void __launch_bounds__(kThreads, 2)
    upsample_conv_head_kernel(const T* __restrict__ x, const T* __restrict__ wt, const float* __restrict__ b3,
                              const T* __restrict__ w1, const float* __restrict__ b1, T* __restrict__ y, Args a) {
  pdl_enter();
  extern __shared__ uint4 head_smem[];
  unsigned char* halo = reinterpret_cast<unsigned char*>(head_smem);
  unsigned char* taps = halo + kHalo * KC * 2;
  uint4* patch = reinterpret_cast<uint4*>(taps + 9 * kHidden * KC * 2);
  // The separable fill's vertical blends: [channels 0-3 / 4-7][halo row][column - patch_c0], four f32 per entry.
  float4* vcol = reinterpret_cast<float4*>(patch);
  constexpr int kVcol = kHaloH * kVcolW;
  __shared__ Tap rows[kHaloH], cols[kHaloW];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int oy0 = blockIdx.y * kTileH, ox0 = blockIdx.x * kTileW, n = blockIdx.z;
  if (tid < kHaloH) rows[tid] = make_tap(a.h, a.scale_h, oy0 - 1 + tid, a.oh);
  if (tid >= 64 && tid < 64 + kHaloW) cols[tid - 64] = make_tap(a.w, a.scale_w, ox0 - 1 + tid - 64, a.ow);

  constexpr int kChunks = KC / 8;
  const long long plane = static_cast<long long>(a.h) * a.w;
  float acc[3][4][4] = {};
  // The source rows and columns the tile's halo reaches (the taps are monotonic: the first and the last halo pixel
  // inside the output bound them). Staged through shared memory when they fit the patch (no axis downsampled).
  __syncthreads();
  const Patch extent = patch_of(rows, kHaloH, cols, kHaloW);
  const int patch_r0 = extent.r0, patch_c0 = extent.c0, patch_h = extent.h, patch_w = extent.w;
  const bool staged = patch_h <= kPatchH && patch_w <= kPatchW;
  const bool separable = patch_w <= kVcolW;
  // The separable fill's fixed work per thread: vertical items (halo row, patch column) tid and tid + 256, horizontal
  // items (halo pixels) tid and tid + 256; the same for every chunk and unit.
  constexpr int kItems = 2;
  static_assert(kItems * kThreads >= kHalo && kItems * kThreads >= kHaloH * kVcolW, "two items per thread");
  // v_row0: the top source's offset in a plane, v_down: the bottom one's rows below it (0 or 1); h_col0: the left
  // vertical blend's entry (-1: a zero pixel), h_right: the right one's columns further (0 or 1); h_addr: the pixel's
  // halo row with its swizzle in bits 4-6 (swz<KC>(p, unit) = h_addr ^ unit << 4; -1: no pixel).
  int v_row0[kItems], v_slot[kItems], h_col0[kItems], h_addr[kItems];
  bool v_down[kItems], h_right[kItems];
  float h_w0[kItems], h_w1[kItems];
  if (separable) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = tid + k * kThreads, hr = i / kVcolW, pc = i % kVcolW;
      const bool live = i < kHaloH * kVcolW && pc < patch_w && rows[min(hr, kHaloH - 1)].inside;
      const Tap ty = rows[min(hr, kHaloH - 1)];
      v_slot[k] = live ? i : -1;
      v_row0[k] = ty.i0 * a.w + patch_c0 + pc;
      v_down[k] = ty.i1 != ty.i0;
      const int p = tid + k * kThreads, phr = min(p / kHaloW, kHaloH - 1), phc = p % kHaloW;
      const Tap ry = rows[phr], tx = cols[phc];
      h_addr[k] = p < kHalo ? swz<KC>(p, 0) : -1;
      h_col0[k] = ry.inside && tx.inside ? phr * kVcolW + tx.i0 - patch_c0 : -1;
      h_right[k] = tx.i1 != tx.i0;
      h_w0[k] = tx.w0;
      h_w1[k] = tx.w1;
    }
  }
  for (int c0 = 0; c0 < a.c; c0 += KC) {
    __syncthreads();  // the tables are written; the previous chunk's tiles are read
    for (int i = tid; i < 9 * kHidden * kChunks; i += kThreads) {
      const int r = i / kChunks, ch = i % kChunks;  // r = tap · 32 + m
      mma::cp_async16(taps + swz<KC>(r, ch), wt + static_cast<long long>(r) * a.c + c0 + ch * 8);
    }
    mma::cp_async_commit();
    if (separable) {
      // Per unit of 8 channels, resize_kernel's two steps apart: each source column the tile reaches blended
      // vertically once per halo row (f32, in shared memory), then each halo pixel across from there and rounded —
      // the same operations in the same order as blend(), which repeats the vertical step for every halo pixel.
      for (int unit = 0; unit < kChunks; ++unit) {
        const T* src = x + (static_cast<long long>(n) * a.c + c0 + unit * 8) * plane;
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          if (v_slot[k] < 0) continue;
          const float w0 = rows[v_slot[k] / kVcolW].w0, w1 = rows[v_slot[k] / kVcolW].w1;
          const T* top = src + v_row0[k];
          const T* bottom = top + (v_down[k] ? a.w : 0);
          float v[8];
#pragma unroll
          for (int j = 0; j < 8; ++j)
            v[j] = conv3x3_wg::mix(w0, mma::to_float(__ldg(top + j * plane)), w1,
                                   mma::to_float(__ldg(bottom + j * plane)));
          vcol[v_slot[k]] = make_float4(v[0], v[1], v[2], v[3]);
          vcol[kVcol + v_slot[k]] = make_float4(v[4], v[5], v[6], v[7]);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          if (h_addr[k] < 0) continue;
          uint4 out = make_uint4(0, 0, 0, 0);
          if (h_col0[k] >= 0) {
            const int col1 = h_col0[k] + (h_right[k] ? 1 : 0);
            const float4 a0 = vcol[h_col0[k]], a1 = vcol[kVcol + h_col0[k]];
            const float4 b0 = vcol[col1], b1 = vcol[kVcol + col1];
            const float w0 = h_w0[k], w1 = h_w1[k];
            using conv3x3_wg::mix;
            out.x = mma::pack2<T>(mix(w0, a0.x, w1, b0.x), mix(w0, a0.y, w1, b0.y));
            out.y = mma::pack2<T>(mix(w0, a0.z, w1, b0.z), mix(w0, a0.w, w1, b0.w));
            out.z = mma::pack2<T>(mix(w0, a1.x, w1, b1.x), mix(w0, a1.y, w1, b1.y));
            out.w = mma::pack2<T>(mix(w0, a1.z, w1, b1.z), mix(w0, a1.w, w1, b1.w));
          }
          *reinterpret_cast<uint4*>(halo + (h_addr[k] ^ unit << 4)) = out;
        }
        __syncthreads();  // vcol is read before the next unit's
      }
    } else if (staged) {
      // Per unit of 8 channels: the source patch into shared memory (coalesced along its columns), then the halo's
      // values blended from there.
      for (int unit = 0; unit < kChunks; ++unit) {
        const T* src = x + (static_cast<long long>(n) * a.c + c0 + unit * 8) * plane + patch_r0 * a.w + patch_c0;
        for (int i = tid; i < patch_h * patch_w; i += kThreads) {
          const int pr = i / patch_w, pc = i - pr * patch_w;
          alignas(16) T v[8];
#pragma unroll
          for (int j = 0; j < 8; ++j) v[j] = __ldg(src + j * plane + pr * a.w + pc);
          patch[pr * kPatchW + pc] = *reinterpret_cast<const uint4*>(v);
        }
        __syncthreads();
        for (int p = tid; p < kHalo; p += kThreads) {
          const int hr = p / kHaloW, hc = p - hr * kHaloW;
          const Tap ty = rows[hr], tx = cols[hc];
          alignas(16) T v[8];
          if (ty.inside && tx.inside) {
            const int r0 = (ty.i0 - patch_r0) * kPatchW - patch_c0, r1 = (ty.i1 - patch_r0) * kPatchW - patch_c0;
            const uint4 q00 = patch[r0 + tx.i0], q10 = patch[r1 + tx.i0], q01 = patch[r0 + tx.i1],
                        q11 = patch[r1 + tx.i1];
            const T* e00 = reinterpret_cast<const T*>(&q00);
            const T* e10 = reinterpret_cast<const T*>(&q10);
            const T* e01 = reinterpret_cast<const T*>(&q01);
            const T* e11 = reinterpret_cast<const T*>(&q11);
#pragma unroll
            for (int j = 0; j < 8; ++j)
              v[j] = conv3x3_wg::blend(ty.w0, ty.w1, tx.w0, tx.w1, e00[j], e10[j], e01[j], e11[j]);
          } else {
#pragma unroll
            for (int j = 0; j < 8; ++j) v[j] = mma::from_float<T>(0.f);
          }
          *reinterpret_cast<uint4*>(halo + swz<KC>(p, unit)) = *reinterpret_cast<const uint4*>(v);
        }
        __syncthreads();  // the patch is read before the next unit's
      }
    } else {
      for (int i = tid; i < kHalo * kChunks; i += kThreads) {
        const int unit = i / kHalo, p = i - unit * kHalo, hr = p / kHaloW, hc = p - hr * kHaloW;
        const Tap ty = rows[hr], tx = cols[hc];
        alignas(16) T v[8];
        if (ty.inside && tx.inside) {
          const T* src = x + (static_cast<long long>(n) * a.c + c0 + unit * 8) * plane;
          const int r0 = ty.i0 * a.w, r1 = ty.i1 * a.w;
          T in[8][4];
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const T* s = src + j * plane;
            in[j][0] = __ldg(s + r0 + tx.i0);
            in[j][1] = __ldg(s + r1 + tx.i0);
            in[j][2] = __ldg(s + r0 + tx.i1);
            in[j][3] = __ldg(s + r1 + tx.i1);
          }
#pragma unroll
          for (int j = 0; j < 8; ++j)
            v[j] = conv3x3_wg::blend(ty.w0, ty.w1, tx.w0, tx.w1, in[j][0], in[j][1], in[j][2], in[j][3]);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) v[j] = mma::from_float<T>(0.f);
        }
        *reinterpret_cast<uint4*>(halo + swz<KC>(p, unit)) = *reinterpret_cast<const uint4*>(v);
      }
    }
    mma::cp_async_wait<0>();
    __syncthreads();
#pragma unroll 1
    for (int tap = 0; tap < 9; ++tap) {
      const int ky = tap / 3, kx = tap % 3;
      const int prow = (warp + ky) * kHaloW + kx + lane % 16;  // this lane's A row (pixel) for m tile 0
#pragma unroll
      for (int k16 = 0; k16 < KC / 16; ++k16) {
        uint32_t bf[4][2];
#pragma unroll
        for (int half = 0; half < 2; ++half) {  // matrices (n tile 2·half + q / 2, k half q % 2), q = lane / 8
          const int q = lane / 8, m = 8 * (2 * half + q / 2) + lane % 8;
          uint32_t r[4];
          mma::ldmatrix_x4(r, taps + swz<KC>(tap * kHidden + m, 2 * k16 + q % 2));
          bf[2 * half][0] = r[0];
          bf[2 * half][1] = r[1];
          bf[2 * half + 1][0] = r[2];
          bf[2 * half + 1][1] = r[3];
        }
#pragma unroll
        for (int mt = 0; mt < 3; ++mt) {
          uint32_t af[4];  // matrices (rows 0-7 / 8-15) × (k half 0 / 1): pixel lane % 16, k half lane / 16
          mma::ldmatrix_x4(af, halo + swz<KC>(prow + 16 * mt, 2 * k16 + lane / 16));
#pragma unroll
          for (int nt = 0; nt < 4; ++nt) mma::mma16816<T>(acc[mt][nt], af, bf[nt][0], bf[nt][1]);
        }
      }
    }
  }

  // Epilogue constants of this lane's hidden channels m = 8·nt + 2t + e (read here: registers are short in the loop).
  float bias3[4][2], proj[4][2];
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int m = 8 * nt + 2 * t + e;
      bias3[nt][e] = b3 ? b3[m] : 0.f;
      proj[nt][e] = mma::to_float(w1[m]);
    }
  const float bias1 = b1 ? b1[0] : 0.f;
  const int oy = oy0 + warp;
#pragma unroll
  for (int mt = 0; mt < 3; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float s = 0.f;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) s += fmaxf(acc[mt][nt][2 * half + e] + bias3[nt][e], 0.f) * proj[nt][e];
      s += __shfl_xor_sync(0xffffffffu, s, 1);
      s += __shfl_xor_sync(0xffffffffu, s, 2);
      const int ox = ox0 + 16 * mt + 8 * half + g;
      if (t == 0 && oy < a.oh && ox < a.ow)
        y[(static_cast<long long>(n) * a.oh + oy) * a.ow + ox] = mma::from_float<T>(final_value(s + bias1, a.final));
    }
}

constexpr int kDerivedHeadTaps = 4;  // CudaContext::derived kind: w as [O / 32][tap][32][C]

// w [O, C, 3, 3] (O a multiple of 32) as rows (j · 9 + tap) · 32 + m = w[32 j + m, :, tap] (tap = 3·ky + kx), made
// once per weight: for the head's w3 (O = 32, [tap][32][C]) the fused kernel's B tiles and the taps-first GEMM's A;
// for conv2d_upsampled taps first the GEMM's A, so that output chunk j's 288 rows of z are consecutive in a pixel's.
// borrowed_at: CudaContext::derived's, for a caller that uses scratch() itself.
template <typename T>
size_t tap_bytes(const Tensor& w) {
  return sizeof(T) * 9 * static_cast<size_t>(w.dim(0)) * static_cast<size_t>(w.dim(1));
}
template <typename T>
std::shared_ptr<const void> tap_weights(CudaContext& c, const Tensor& w, void* borrowed_at = nullptr) {
  const int ch = static_cast<int>(w.dim(1)), chunks = static_cast<int>(w.dim(0)) / kHidden;
  const long long chunk_n = 9LL * kHidden * ch;
  return c.derived(
      w, kDerivedHeadTaps, tap_bytes<T>(w),
      [&](void* dst) {
        for (int j = 0; j < chunks; ++j) {
          conv3x3_wg::tap_weights_kernel<T><<<grid_for(c, chunk_n, 256), 256, 0, c.stream()>>>(
              static_cast<const T*>(w.raw()) + j * chunk_n, static_cast<T*>(dst) + j * chunk_n, kHidden, ch);
          DACPP_CUDA_LAUNCH_CHECK("upsample_conv_head tap weights");
        }
      },
      "upsample_conv_head tap weights", nullptr, borrowed_at);
}

Args args_of(const Tensor& x, const Tensor& y) {
  Args a{};
  a.c = static_cast<int>(x.dim(1));
  a.h = static_cast<int>(x.dim(2));
  a.w = static_cast<int>(x.dim(3));
  a.oh = static_cast<int>(y.dim(2));
  a.ow = static_cast<int>(y.dim(3));
  a.scale_h = conv3x3_wg::align_corners_scale(a.h, a.oh);
  a.scale_w = conv3x3_wg::align_corners_scale(a.w, a.ow);
  return a;
}

template <typename T, int KC>
void launch(CudaContext& c, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1, const Tensor& b1,
            Tensor& y, int final) {
  const std::shared_ptr<const void> wt = tap_weights<T>(c, w3);
  Args a = args_of(x, y);
  a.final = final;
  constexpr int smem = smem_bytes<KC>();
  auto* kernel = &upsample_conv_head_kernel<T, KC>;
  DACPP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "upsample_conv_head: shared memory of ", smem, " bytes");
  const dim3 grid(static_cast<unsigned>((a.ow + kTileW - 1) / kTileW),
                  static_cast<unsigned>((a.oh + kTileH - 1) / kTileH), static_cast<unsigned>(x.dim(0)));
  launch_kernel(c, "upsample_conv_head", kernel, grid, kThreads, smem, static_cast<const T*>(x.raw()),
                static_cast<const T*>(wt.get()), b3.defined() ? static_cast<const float*>(b3.raw()) : nullptr,
                static_cast<const T*>(w1.raw()), b1.defined() ? static_cast<const float*>(b1.raw()) : nullptr,
                static_cast<T*>(y.raw()), a);
}

}  // namespace head

// The taps-first path. The resize and the 3×3 conv are both linear and act on different axes (pixels, channels), so
//   Σ_c w3[m, c, tap] · up(x)[c, p + d_tap] = up(z_tap)[m, p + d_tap],   z_tap[m, q] = Σ_c w3[m, c, tap] · x[c, q]
// (d_tap the tap's offset, zero outside the output as the conv's padding): the 3×3 conv's 32 × 9 channel mixes run
// at the source resolution as one GEMM, z = W · x with W = w3 as [tap · 32 + m][c] (9 × 32 rows), stored pixel by
// pixel ([n][q][tap · 32 + m], T), and a second kernel blends each output pixel's nine shifted taps from z's four
// nearest source pixels and applies b3, ReLU and the 1×1 conv. DA2's 296² → 518² (×1.75 per axis) makes the 3×3
// conv's multiplies 3.06× fewer (128 → 288 channels at 296², against 128 → 32 at 518²), on cuBLASLt's kernels.
// The values differ from the fused kernel's by rounding only: z is rounded to T where the upsampled map was.
namespace taps {

constexpr int kTile = 16, kThreads = kTile * kTile, kSpan = kTile + 2;  // output tile, its one-pixel border
constexpr int kChannels = 9 * head::kHidden;                            // z's channels per pixel
constexpr int kPatch = 13;  // source rows / columns staged per block (host: ceil(17·scale) + 3 <= kPatch)
// A smaller frame where the exact extent allows (patch_extent; any ×2 upsample: ≤ 11): 72 KB instead of 100, so
// three blocks share a multiprocessor instead of two. DA2-L's out1 (148² → 296², 4 chunks) on an H100: 71.4 → 63.3
// µs; DA2-S's 21.3 → 18.7 µs (session 41).
constexpr int kSmallPatch = 11;
constexpr int kPixelBytes = kChannels * 2 + 16;  // one staged pixel, padded: 8 pixels in a row hit 8 bank groups
constexpr int smem_bytes(int patch) { return patch * patch * kPixelBytes; }

// The source extent of kSpan consecutive output positions of an axis: at most ceil((kSpan - 1) · scale) + 2 source
// pixels in reals; one more for the f32 rounding of the products.
inline bool patch_fits(float scale) {
  return std::ceil(static_cast<double>(kSpan - 1) * scale) + 3 <= kPatch;
}

// The largest source extent of any tile's kSpan positions on an axis of `out` outputs resampled from `in`, in the
// kernel's own arithmetic (conv3x3_wg::upsample_tap: one rounded f32 product, floor, the clamps; x86-64 float
// arithmetic rounds as the device's __fmul_rn), so the kernel's extent never exceeds it.
inline int patch_extent(int in, int out, float scale) {
  const auto first = [&](int o) { return std::min(static_cast<int>(std::floor(scale * static_cast<float>(o))), in - 1); };
  int most = 0;
  for (int o0 = 0; o0 < out; o0 += kTile) {
    const int f = std::max(o0 - 1, 0), l = std::min(o0 + kTile, out - 1);
    const int i0 = first(f), i1 = first(l) < in - 1 ? first(l) + 1 : first(l);
    most = std::max(most, i1 - i0 + 1);
  }
  return most;
}

// Two 16-bit values of a 32-bit word as floats (lo in the low half).
template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t u);
template <>
__device__ __forceinline__ float2 unpack2<__nv_bfloat16>(uint32_t u) {
  return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xffff0000u));
}
template <>
__device__ __forceinline__ float2 unpack2<__half>(uint32_t u) {
  __half2 h;
  *reinterpret_cast<uint32_t*>(&h) = u;
  return __half22float2(h);
}

// acc[0..7] += Σ corners w · v (8 channels, each corner one 16-byte chunk).
template <typename T>
__device__ __forceinline__ void blend8(float* acc, const uint4& v00, const uint4& v10, const uint4& v01,
                                       const uint4& v11, float w00, float w10, float w01, float w11) {
  const uint32_t* a = reinterpret_cast<const uint32_t*>(&v00);
  const uint32_t* b = reinterpret_cast<const uint32_t*>(&v10);
  const uint32_t* c = reinterpret_cast<const uint32_t*>(&v01);
  const uint32_t* d = reinterpret_cast<const uint32_t*>(&v11);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 fa = unpack2<T>(a[j]), fb = unpack2<T>(b[j]), fc = unpack2<T>(c[j]), fd = unpack2<T>(d[j]);
    acc[2 * j] = fmaf(w11, fd.x, fmaf(w01, fc.x, fmaf(w10, fb.x, fmaf(w00, fa.x, acc[2 * j]))));
    acc[2 * j + 1] = fmaf(w11, fd.y, fmaf(w01, fc.y, fmaf(w10, fb.y, fmaf(w00, fa.y, acc[2 * j + 1]))));
  }
}

// What the blend kernel reads and writes beside the head's Args: z's channels per pixel (9 · 32 · chunks), the
// chunks of 32 output channels (blockIdx.z = image · chunks + chunk; chunk j's 288 channels start at j · 288 in a
// pixel's), and for a conv (not the head's epilogue) whether to apply ReLU.
struct Blend {
  int z_channels = kChannels;
  int chunks = 1;
  int relu = 0;
  // A 1×1 conv folded into z (conv only): its bias's share per tap row, f32 [chunks][9][32] (null: none). Each output
  // pixel adds the shares of its taps inside the map: all nine (summed once per block into the bias) less those of
  // the taps outside, at the border.
  const float* tap_bias = nullptr;
};

// Block: a 16 × 16 output tile of one image, a thread per pixel, for 32 output channels. The source patch its taps
// reach (≤ 13 × 13 pixels, the chunk's 288 channels) is staged in shared memory once; then each thread sums its nine
// taps' bilinear blends into 32 f32 channels. kHead: the fused kernel's epilogue (+ b3, ReLU, the 1×1 conv to one
// channel, + b1); otherwise a conv's (+ bias, optional ReLU, the 32 channels stored to NCHW y). (Staging the patch
// in three phases, one per kernel row, so that the first row's blends start while the others load, measured slower:
// 50 → 59 µs at DA2-L's 518².)
template <typename T, bool kHead, int kPatch>
__global__ void __launch_bounds__(kThreads, kPatch <= kSmallPatch ? 3 : 2)
    upsample_taps_kernel(const T* __restrict__ z, const float* __restrict__ b3, const T* __restrict__ w1,
                         const float* __restrict__ b1, T* __restrict__ y, head::Args a, Blend bl) {
  extern __shared__ uint4 taps_smem[];
  unsigned char* patch = reinterpret_cast<unsigned char*>(taps_smem);
  __shared__ head::Tap rows[kSpan], cols[kSpan];
  __shared__ float bias3[head::kHidden], proj[head::kHidden];
  __shared__ float tap_bias[kHead ? 1 : 9 * head::kHidden];
  const int tid = threadIdx.x;
  const int oy0 = blockIdx.y * kTile, ox0 = blockIdx.x * kTile;
  const int n = kHead ? blockIdx.z : blockIdx.z / bl.chunks, chunk = kHead ? 0 : blockIdx.z % bl.chunks;
  if (tid < kSpan) rows[tid] = head::make_tap(a.h, a.scale_h, oy0 - 1 + tid, a.oh);
  if (tid >= 32 && tid < 32 + kSpan) cols[tid - 32] = head::make_tap(a.w, a.scale_w, ox0 - 1 + tid - 32, a.ow);
  __syncthreads();
  const head::Patch extent = head::patch_of(rows, kSpan, cols, kSpan);
  // The host's bound keeps the extent within kPatch; the clamp only keeps a wrong bound inside shared memory.
  const int r0 = extent.r0, c0 = extent.c0, ph = min(extent.h, kPatch), pw = min(extent.w, kPatch);
  pdl_enter();
  // The patch's chunks over its full 13 × 13 frame, skipping those outside ph × pw, so every divisor is a constant.
  // (DA2-L's 518², 50.7 µs: Nsight Compute counts 35 M instructions issued, 70 % of issue slots, nearly all the
  // blends' conversions and FMAs — yet the blends on tensor cores, a few times fewer instructions, took as long:
  // what holds it is each block's ~98 KB patch, about half of it from DRAM. docs/PERFORMANCE.md, version 1.15.)
  constexpr int kChunks = kChannels / 8;   // 16-byte chunks per pixel and output chunk
  const int zc = kHead ? kChannels : bl.z_channels;  // z's channels per pixel (a constant for the head)
  const T* img = z + (static_cast<long long>(n) * a.h * a.w + static_cast<long long>(r0) * a.w + c0) * zc +
                 chunk * kChannels;
  for (int i = tid; i < kPatch * kPatch * kChunks; i += kThreads) {
    const int pix = i / kChunks, ch = i - pix * kChunks, pr = pix / kPatch, pc = pix - pr * kPatch;
    if (pr < ph && pc < pw)
      mma::cp_async16(patch + pix * kPixelBytes + ch * 16, img + (static_cast<long long>(pr) * a.w + pc) * zc + ch * 8);
  }
  mma::cp_async_commit();
  if (tid < head::kHidden) {
    float b = b3 ? b3[chunk * head::kHidden + tid] : 0.f;
    if constexpr (kHead) {
      proj[tid] = mma::to_float(w1[tid]);
    } else if (bl.tap_bias != nullptr) {
      const float* tb = bl.tap_bias + chunk * 9 * head::kHidden + tid;
#pragma unroll
      for (int t = 0; t < 9; ++t) {
        tap_bias[t * head::kHidden + tid] = tb[t * head::kHidden];
        b += tb[t * head::kHidden];
      }
    }
    bias3[tid] = b;
  }
  const int ty = tid / kTile, tx = tid % kTile;
  mma::cp_async_wait<0>();
  __syncthreads();

  float acc[head::kHidden];
#pragma unroll
  for (int m = 0; m < head::kHidden; ++m) acc[m] = 0.f;
#pragma unroll 1
  for (int ky = 0; ky < 3; ++ky) {
    const head::Tap ry = rows[ty + ky];
    if (!ry.inside) continue;
    const int top = min(ry.i0 - r0, kPatch - 1) * kPatch * kPixelBytes;
    const int bottom = min(ry.i1 - r0, kPatch - 1) * kPatch * kPixelBytes;
#pragma unroll
    for (int kx = 0; kx < 3; ++kx) {
      const head::Tap rx = cols[tx + kx];
      if (!rx.inside) continue;
      const int left = min(rx.i0 - c0, kPatch - 1) * kPixelBytes, right = min(rx.i1 - c0, kPatch - 1) * kPixelBytes;
      const int tap = (3 * ky + kx) * head::kHidden * 2;
      const unsigned char* p00 = patch + top + left + tap;
      const unsigned char* p10 = patch + bottom + left + tap;
      const unsigned char* p01 = patch + top + right + tap;
      const unsigned char* p11 = patch + bottom + right + tap;
      const float w00 = ry.w0 * rx.w0, w10 = ry.w1 * rx.w0, w01 = ry.w0 * rx.w1, w11 = ry.w1 * rx.w1;
#pragma unroll
      for (int q = 0; q < head::kHidden / 8; ++q)
        blend8<T>(acc + 8 * q, *reinterpret_cast<const uint4*>(p00 + 16 * q),
                  *reinterpret_cast<const uint4*>(p10 + 16 * q), *reinterpret_cast<const uint4*>(p01 + 16 * q),
                  *reinterpret_cast<const uint4*>(p11 + 16 * q), w00, w10, w01, w11);
    }
  }
  if constexpr (!kHead) {
    // A tap outside the map takes its folded bias share back out (border pixels only).
    if (bl.tap_bias != nullptr) {
#pragma unroll 1
      for (int tap = 0; tap < 9; ++tap)
        if (!rows[ty + tap / 3].inside || !cols[tx + tap % 3].inside) {
#pragma unroll
          for (int m = 0; m < head::kHidden; ++m) acc[m] -= tap_bias[tap * head::kHidden + m];
        }
    }
  }
  const int oy = oy0 + ty, ox = ox0 + tx;
  if (oy >= a.oh || ox >= a.ow) return;
  if constexpr (kHead) {
    float s = 0.f;
#pragma unroll
    for (int m = 0; m < head::kHidden; ++m) s += fmaxf(acc[m] + bias3[m], 0.f) * proj[m];
    y[(static_cast<long long>(n) * a.oh + oy) * a.ow + ox] =
        mma::from_float<T>(head::final_value(s + (b1 ? __ldg(b1) : 0.f), a.final));
  } else {
    const long long plane = static_cast<long long>(a.oh) * a.ow;
    T* out = y + (static_cast<long long>(n) * bl.chunks + chunk) * head::kHidden * plane +
             static_cast<long long>(oy) * a.ow + ox;
#pragma unroll
    for (int m = 0; m < head::kHidden; ++m) {
      const float v = acc[m] + bias3[m];
      out[m * plane] = mma::from_float<T>(bl.relu ? fmaxf(v, 0.f) : v);
    }
  }
}

// z for images [n0, n0 + nb) by cuBLASLt (column-major: z_n as [Z, P] = W^T-stored [C, Z]^T · x_n-stored [P, C]^T,
// Z = 288 · chunks channels per pixel from the GEMM's A rows wt [Z][C]), then the blend kernel; images in chunks so
// that z stays within kZBytes of scratch (ZPlan). b3: the head's b3 or the conv's bias (f32, or null); tap_bias:
// Blend::tap_bias (or null).
constexpr size_t kZBytes = size_t{256} << 20;

struct ZPlan {
  size_t per_image;  // bytes of one image's z
  int64_t chunk;     // images per GEMM
  size_t bytes() const { return per_image * static_cast<size_t>(chunk); }
};
template <typename T>
ZPlan z_plan(const Tensor& x, int chunks) {
  const size_t per_image = sizeof(T) * static_cast<size_t>(x.dim(2) * x.dim(3)) * kChannels * chunks;
  return {per_image, std::max<int64_t>(1, std::min<int64_t>(x.dim(0), static_cast<int64_t>(kZBytes / per_image)))};
}

inline size_t align256(size_t b) {
  return (b + 255) / 256 * 256;
}

template <typename T, bool kHead>
void run(CudaContext& c, const Tensor& x, const void* wt, const float* tap_bias, T* zbuf, const ZPlan& zp, int chunks,
         const float* b3, const T* w1, const float* b1, Tensor& y, bool relu, const char* what, int final = 0) {
  head::Args a = head::args_of(x, y);
  a.final = final;
  Blend bl{kChannels * chunks, chunks, relu ? 1 : 0};
  bl.tap_bias = tap_bias;
  const int64_t n = x.dim(0), p = static_cast<int64_t>(a.h) * a.w;
  // The conv's blend in the small frame where every tile's patch fits it (out1's ×2). The head's ×1.75 reaches 12.
  auto* kernel = &upsample_taps_kernel<T, kHead, kPatch>;
  int smem = smem_bytes(kPatch);
  if constexpr (!kHead) {
    if (patch_extent(a.h, a.oh, a.scale_h) <= kSmallPatch && patch_extent(a.w, a.ow, a.scale_w) <= kSmallPatch) {
      kernel = &upsample_taps_kernel<T, false, kSmallPatch>;
      smem = smem_bytes(kSmallPatch);
    }
  }
  DACPP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), what,
                   " taps: shared memory of ", smem, " bytes");
  const int64_t y_image = y.dim(1) * a.oh * a.ow;
  for (int64_t n0 = 0; n0 < n; n0 += zp.chunk) {
    const int64_t nb = std::min(zp.chunk, n - n0);
    GemmSpec s;
    s.m = bl.z_channels;
    s.n = p;
    s.k = a.c;
    s.trans_a = true;
    s.lda = a.c;
    s.trans_b = true;
    s.ldb = p;
    s.ldd = bl.z_channels;
    s.batch = nb;
    s.stride_a = 0;
    s.stride_b = a.c * p;
    s.stride_d = bl.z_channels * p;
    s.dtype = x.dtype();
    gemm(c, s, wt, static_cast<const T*>(x.raw()) + n0 * a.c * p, zbuf, nullptr, what);
    const dim3 grid(static_cast<unsigned>((a.ow + kTile - 1) / kTile),
                    static_cast<unsigned>((a.oh + kTile - 1) / kTile), static_cast<unsigned>(nb * chunks));
    launch_kernel(c, "upsample_taps", kernel, grid, kThreads, smem, zbuf, b3, w1, b1,
                  static_cast<T*>(y.raw()) + n0 * y_image, a, bl);
  }
}

// Taps first on head::tap_weights' rows of w (O = 32 · chunks output channels).
template <typename T, bool kHead>
void run_taps(CudaContext& c, const Tensor& x, const Tensor& w, const float* b3, const T* w1, const float* b1,
              Tensor& y, bool relu, const char* what, int final = 0) {
  const int chunks = static_cast<int>(w.dim(0)) / head::kHidden;
  const ZPlan zp = z_plan<T>(x, chunks);
  // A borrowed w's rows are made ahead of z in the same scratch (CudaContext::derived's borrowed_at).
  const size_t front = CudaContext::keeps(w) ? 0 : align256(head::tap_bytes<T>(w));
  char* base = static_cast<char*>(c.scratch(front + zp.bytes(), what));
  const std::shared_ptr<const void> wt = head::tap_weights<T>(c, w, base);
  run<T, kHead>(c, x, wt.get(), nullptr, reinterpret_cast<T*>(base + front), zp, chunks, b3, w1, b1, y, relu, what,
                final);
}

template <typename T>
void launch(CudaContext& c, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1, const Tensor& b1,
            Tensor& y, int final) {
  run_taps<T, true>(c, x, w3, b3.defined() ? static_cast<const float*>(b3.raw()) : nullptr,
                    static_cast<const T*>(w1.raw()), b1.defined() ? static_cast<const float*>(b1.raw()) : nullptr, y,
                    false, "upsample_conv_head taps z", final);
}

constexpr int kDerivedFoldedTaps = 7;  // CudaContext::derived kind: tap rows with a 1×1 conv folded in, [Z][C0]
constexpr int kDerivedFoldedBias = 8;  // CudaContext::derived kind: the folded 1×1 conv's bias per tap row, f32 [Z]

// A 1×1 conv (pw [C, C0], pb [C] f32) folded into the tap rows of w [O, C, 3, 3] (head::tap_weights' order: row
// r = (j · 9 + tap) · 32 + m holds w[32 j + m, :, tap]): wf[r][c0] = Σ_c w[32 j + m, c, tap] · pw[c, c0] and
// bf[r] = Σ_c w[32 j + m, c, tap] · pb[c] (kept f32); f32 sums, wf rounded once to T.
__device__ __forceinline__ long long folded_row_base(long long r, int ch) {
  const int j = static_cast<int>(r / (9 * head::kHidden)), rem = static_cast<int>(r % (9 * head::kHidden));
  const int tap = rem / head::kHidden, m = rem % head::kHidden;
  return static_cast<long long>(head::kHidden * j + m) * ch * 9 + tap;  // w[oc, c, tap] is at this + 9 c
}

template <typename T>
__global__ void fold_weights_kernel(const T* __restrict__ w, const T* __restrict__ pw, T* __restrict__ wf, int o,
                                    int ch, int c0) {
  const long long total = 9LL * o * c0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / c0;
    const int col = static_cast<int>(i - r * c0);
    const T* wr = w + folded_row_base(r, ch);
    float acc = 0.f;
    for (int k = 0; k < ch; ++k)
      acc = fmaf(mma::to_float(wr[9 * k]), mma::to_float(pw[static_cast<long long>(k) * c0 + col]), acc);
    wf[i] = mma::from_float<T>(acc);
  }
}

template <typename T>
__global__ void fold_bias_kernel(const T* __restrict__ w, const float* __restrict__ pb, float* __restrict__ bf, int o,
                                 int ch) {
  const long long total = 9LL * o;
  for (long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; r < total;
       r += static_cast<long long>(gridDim.x) * blockDim.x) {
    const T* wr = w + folded_row_base(r, ch);
    float acc = 0.f;
    for (int k = 0; k < ch; ++k) acc = fmaf(mma::to_float(wr[9 * k]), pb[k], acc);
    bf[r] = acc;
  }
}

// conv2d_upsampled taps first, on head::tap_weights' chunked layout; with a 1×1 conv before the upsample (pre_w
// [C, C0, 1, 1] of x's dtype, pre_b [C] f32 or undefined), on the fold above: the GEMM reads x's C0 channels, and
// the blend adds the 1×1 conv's bias as each tap's share, f32, for the taps inside the map only (as the conv's zero
// padding of the 1×1 conv's output has it; a GEMM bias epilogue would put it in z, at bf16, and cuBLASLt's kernels
// with one ran slower). Each fold is kept per pair of sources (CudaContext::derived); with a borrowed source, made
// into the call's scratch each time.
template <typename T>
void launch_conv(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, bool relu,
                 const Tensor* pre_w, const Tensor* pre_b) {
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  if (pre_w == nullptr) return run_taps<T, false>(c, x, w, bp, nullptr, nullptr, y, relu, "conv2d_upsampled taps z");
  const int o = static_cast<int>(w.dim(0)), ch = static_cast<int>(w.dim(1)), c0 = static_cast<int>(pre_w->dim(1));
  const int chunks = o / head::kHidden;
  const long long rows = 9LL * o;
  const bool has_bias = pre_b != nullptr && pre_b->defined();
  const size_t w_bytes = sizeof(T) * static_cast<size_t>(rows * c0),
               b_bytes = sizeof(float) * static_cast<size_t>(rows);
  const T* wp = static_cast<const T*>(w.raw());
  const char* what = "conv2d_upsampled folded taps z";
  const ZPlan zp = z_plan<T>(x, chunks);
  const size_t w_front = CudaContext::keeps(w, pre_w) ? 0 : align256(w_bytes);
  const size_t b_front = has_bias && !CudaContext::keeps(w, pre_b) ? align256(b_bytes) : 0;
  char* base = static_cast<char*>(c.scratch(w_front + b_front + zp.bytes(), what));
  const std::shared_ptr<const void> wf = c.derived(
      w, kDerivedFoldedTaps, w_bytes,
      [&](void* dst) {
        fold_weights_kernel<T><<<grid_for(c, rows * c0, 256), 256, 0, c.stream()>>>(
            wp, static_cast<const T*>(pre_w->raw()), static_cast<T*>(dst), o, ch, c0);
        DACPP_CUDA_LAUNCH_CHECK("conv2d_upsampled: folding the 1x1 conv into the tap rows");
      },
      "conv2d_upsampled folded tap rows", pre_w, base);
  std::shared_ptr<const void> bf;
  if (has_bias)
    bf = c.derived(
        w, kDerivedFoldedBias, b_bytes,
        [&](void* dst) {
          fold_bias_kernel<T><<<grid_for(c, rows, 256), 256, 0, c.stream()>>>(
              wp, static_cast<const float*>(pre_b->raw()), static_cast<float*>(dst), o, ch);
          DACPP_CUDA_LAUNCH_CHECK("conv2d_upsampled: folding the 1x1 conv's bias into the tap rows");
        },
        "conv2d_upsampled folded tap bias", pre_b, base + w_front);
  run<T, false>(c, x, wf.get(), static_cast<const float*>(bf.get()), reinterpret_cast<T*>(base + w_front + b_front), zp,
                chunks, bp, nullptr, nullptr, y, relu, what);
}

}  // namespace taps

}  // namespace

std::string upsample_conv_head_refusal(const Tensor& x, const Tensor& w3, const Tensor& y) {
  if (x.dtype() != DType::BF16 && x.dtype() != DType::F16)
    return str_cat("dtype ", dtype_name(x.dtype()), " (the fused kernel is bf16 / f16)");
  if (w3.dim(0) != head::kHidden)
    return str_cat(w3.dim(0), " hidden channels (the fused kernel has ", head::kHidden, ")");
  if (x.dim(1) % 32 != 0) return str_cat(x.dim(1), " input channels (the fused kernel needs a multiple of 32)");
  if (x.dim(0) > 65535 || y.dim(2) > 65535 * head::kTileH || x.dim(2) * x.dim(3) >= INT_MAX / 2 ||
      x.dim(1) * x.dim(2) * x.dim(3) >= (int64_t{1} << 40))
    return str_cat("x ", shape_str(x.shape()), " / y ", shape_str(y.shape()), " exceed the fused kernel's grid");
  return {};
}

namespace {

// Why the taps-first path cannot run operands the fused kernel takes ("" when it can): its staged source patch
// bounds the scale: (in - 1) / (out - 1) <= 10 / 17 per axis (DPT heads upsample by 1.75: 295 / 517 at 518²).
std::string taps_refusal(const Tensor& x, const Tensor& y) {
  const head::Args a = head::args_of(x, y);
  if (!taps::patch_fits(a.scale_h) || !taps::patch_fits(a.scale_w))
    return str_cat("resampling ", a.h, "×", a.w, " to ", a.oh, "×", a.ow,
                   " (taps first needs (in - 1) / (out - 1) <= 10 / 17 per axis)");
  return {};
}

void run_path(CudaContext& c, HeadPath path, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
              const Tensor& b1, Tensor& y, int final) {
  const bool bf16 = x.dtype() == DType::BF16;
  if (path == HeadPath::TapsFirst) {
    if (bf16) return taps::launch<__nv_bfloat16>(c, x, w3, b3, w1, b1, y, final);
    return taps::launch<__half>(c, x, w3, b3, w1, b1, y, final);
  }
  const bool wide = x.dim(1) % 64 == 0;
  if (bf16) {
    if (wide) return head::launch<__nv_bfloat16, 64>(c, x, w3, b3, w1, b1, y, final);
    return head::launch<__nv_bfloat16, 32>(c, x, w3, b3, w1, b1, y, final);
  }
  if (wide) return head::launch<__half, 64>(c, x, w3, b3, w1, b1, y, final);
  head::launch<__half, 32>(c, x, w3, b3, w1, b1, y, final);
}

const char* path_name(HeadPath path) {
  return path == HeadPath::TapsFirst ? "taps first" : "fused";
}

}  // namespace

void upsample_conv_head(CudaContext& c, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                        const Tensor& b1, Tensor& y, int final) {
  const std::string why = upsample_conv_head_refusal(x, w3, y);
  DACPP_CHECK(why.empty(), ErrorCode::Unsupported, "upsample_conv_head (cuda): ", why);
  if (y.numel() == 0) return;
  c.make_current();
  HeadPath path = HeadPath::Fused;
  if (taps_refusal(x, y).empty()) {
    // Which is faster depends on the channels (the GEMM's z is 288 channels whatever C) and the map sizes: timed on
    // first use of the shape.
    const std::string key = str_cat("upsample_conv_head,", dtype_name(x.dtype()), ",", x.dim(0), ",", x.dim(1), ",",
                                    x.dim(2), ",", x.dim(3), ",", y.dim(2), ",", y.dim(3));
    const HeadPath paths[] = {HeadPath::Fused, HeadPath::TapsFirst};
    path = paths[tuned_choice(
        c, key, 2, 0,
        [&](int i) {
          run_path(c, paths[i], x, w3, b3, w1, b1, y, final);
          return true;
        },
        3, [&](int i) { return std::string(path_name(paths[i])); })];
  }
  run_path(c, path, x, w3, b3, w1, b1, y, final);
}

void upsample_conv_head_path(CudaContext& c, HeadPath path, const Tensor& x, const Tensor& w3, const Tensor& b3,
                             const Tensor& w1, const Tensor& b1, Tensor& y, int final) {
  std::string why = upsample_conv_head_refusal(x, w3, y);
  if (why.empty() && path == HeadPath::TapsFirst) why = taps_refusal(x, y);
  DACPP_CHECK(why.empty(), ErrorCode::Unsupported, "upsample_conv_head (cuda, ", path_name(path), "): ", why);
  if (y.numel() == 0) return;
  c.make_current();
  run_path(c, path, x, w3, b3, w1, b1, y, final);
}

std::string conv2d_upsampled_taps_refusal(const Tensor& x, const Tensor& w, const Tensor& y, Epilogue act) {
  if (x.dtype() != DType::BF16 && x.dtype() != DType::F16) return str_cat("dtype ", dtype_name(x.dtype()));
  if (w.dim(2) != 3 || w.dim(3) != 3) return str_cat("a ", w.dim(2), "x", w.dim(3), " kernel (it runs 3x3)");
  if (act == Epilogue::Gelu) return "a GELU epilogue";
  if (w.dim(0) % head::kHidden != 0 || x.dim(1) % 8 != 0)
    return str_cat(x.dim(1), " -> ", w.dim(0), " channels (taps first needs multiples of 8 -> 32)");
  const int64_t z_image = x.dim(2) * x.dim(3) * 9 * w.dim(0);
  if (x.dim(0) * (w.dim(0) / head::kHidden) > 65535 || y.dim(2) > 65535 * int64_t{taps::kTile} ||
      x.dim(2) * x.dim(3) >= INT_MAX / 2 || z_image * static_cast<int64_t>(sizeof(uint16_t)) > int64_t{taps::kZBytes})
    return str_cat("x ", shape_str(x.shape()), " / y ", shape_str(y.shape()), " exceed taps first's range");
  return taps_refusal(x, y);
}

void conv2d_upsampled_taps(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                           Epilogue act, const Tensor* pre_w, const Tensor* pre_b) {
  const std::string why = conv2d_upsampled_taps_refusal(x, w, y, act);
  DACPP_CHECK(why.empty(), ErrorCode::Unsupported, "conv2d_upsampled (cuda, taps first): ", why);
  if (y.numel() == 0) return;
  c.make_current();
  const bool relu = act == Epilogue::Relu;
  if (x.dtype() == DType::BF16) return taps::launch_conv<__nv_bfloat16>(c, x, w, bias, y, relu, pre_w, pre_b);
  taps::launch_conv<__half>(c, x, w, bias, y, relu, pre_w, pre_b);
}

std::vector<KernelInfo> upsample_conv_head_kernels() {
  return {
      {"upsample_conv_head<bf16,64>",
       reinterpret_cast<const void*>(&head::upsample_conv_head_kernel<__nv_bfloat16, 64>)},
      {"upsample_conv_head<bf16,32>",
       reinterpret_cast<const void*>(&head::upsample_conv_head_kernel<__nv_bfloat16, 32>)},
      {"upsample_conv_head<f16,64>", reinterpret_cast<const void*>(&head::upsample_conv_head_kernel<__half, 64>)},
      {"upsample_conv_head<f16,32>", reinterpret_cast<const void*>(&head::upsample_conv_head_kernel<__half, 32>)},
      {"upsample_taps<bf16>",
       reinterpret_cast<const void*>(&taps::upsample_taps_kernel<__nv_bfloat16, true, taps::kPatch>)},
      {"upsample_taps<f16>", reinterpret_cast<const void*>(&taps::upsample_taps_kernel<__half, true, taps::kPatch>)},
      {"upsample_taps_conv<bf16>",
       reinterpret_cast<const void*>(&taps::upsample_taps_kernel<__nv_bfloat16, false, taps::kPatch>)},
      {"upsample_taps_conv<f16>",
       reinterpret_cast<const void*>(&taps::upsample_taps_kernel<__half, false, taps::kPatch>)},
      {"upsample_taps_conv<bf16,11>",
       reinterpret_cast<const void*>(&taps::upsample_taps_kernel<__nv_bfloat16, false, taps::kSmallPatch>)},
      {"upsample_taps_conv<f16,11>",
       reinterpret_cast<const void*>(&taps::upsample_taps_kernel<__half, false, taps::kSmallPatch>)},
  };
}

}  // namespace dacpp::cuda
