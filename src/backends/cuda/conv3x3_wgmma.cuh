// 3×3, stride-1, pad-1 convolution on Hopper warpgroup MMAs (sm_90a; bf16 / f16, C and O multiples of 64), for
// conv2d.cu. An implicit GEMM per image:
//   Y[o, q] = Σ_tap Σ_c Wt[tap, o, c] · X_kx[c, q + ky·Wp],   tap = 3·ky + kx,
// over the output pixels q = (oy - row0)·Wp + ox of a band of output rows [row0, row0 + rows), row pitch Wp = W
// rounded up to 8, where X_kx (shift_pad_kernel) is the band's input rows shifted by kx - 1 columns, zero-padded,
// with rows of Wp elements: X_kx[c, r·Wp + x] = x[c, row0 + r - 1, x + kx - 1] (zero outside the image). Each tap's
// B tile is then a plain 16-byte-aligned run of Wp-pitched pixels (the column shift, which would misalign it, is in
// the copy), so it loads with cp.async; the columns ox >= W of the pitch are computed and never stored. The three
// copies are 3× the band's input (im2col's matrix is 9×).
//
// conv3x3_wgmma_kernel: a block computes 64·WG output channels × 128 pixels of one image: WG warpgroups of 64 channels
// each; K steps of 64 input channels of one tap (9·C/64 steps), a STAGES-deep cp.async ring of A (weights, K-major,
// 64·WG × 64) and B (pixels, MN-major, 64 × 128 as two 64-column halves) tiles in 128-byte-swizzled shared memory
// (wgmma_util.cuh), STAGES - 2 steps loading ahead while one step's four m64n128k16 wgmma per warpgroup stay in
// flight. Epilogue: + bias (f32), optional ReLU, rounded once to T, stored to NCHW y for ox < W.
//
// conv3x3_wgmma_tma_kernel (further down): the same GEMM fed by the tensor memory accelerator from one
// channels-innermost padded copy (pad_nhwc_kernel) through a producer warp and mbarriers, with an optional split of
// the K steps over several blocks (split_reduce_kernel adds the f32 partials). The tuner picks among both kernels.
// The TMA kernel also runs 3×3 stride-2 pad-1 convs, from a copy of the padded input split by row and column parity
// (phase_pad_nhwc_kernel), where each tap again reads a run of consecutive pixels.
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/mma_util.cuh"
#include "backends/cuda/tma_util.cuh"
#include "backends/cuda/wgmma_util.cuh"

namespace dacpp::cuda::conv3x3_wg {

constexpr int kTileN = 128, kTileK = 64;
constexpr int kTileNWide = 176;  // the TMA row-step kernel's wide pixel tiles (m64n176k16)

struct Args {
  int c, h, w, o;       // input channels, rows, columns; output channels
  int row0, rows;       // the band of output rows
  int wp;               // row pitch of the shifted copies and of q (W rounded up to 8)
  long long plane;      // shifted copies: elements per (kx, image, channel) plane, a multiple of 8 covering every
                        // read; TMA's padded copy: pixels per image ((rows + 2) · Wq)
  long long kx_stride;  // elements between the kx copies: images · C · plane
  int relu;
  int splits = 1;  // TMA kernel: the K steps split over this many blocks per tile (f32 partials, split_reduce)
  int phase = 0;   // TMA kernel, stride 2: pixels per phase of the phase copy (phase_pad_nhwc_kernel); 0: stride 1
  int relu_in = 0;     // pad_nhwc_kernel: the copy holds relu(x)
  int padded_out = 0;  // TMA kernel, unsplit, whole images: y is the next 3×3 conv's padded copy (store_tile_padded)
};

// Row pitch and plane size for a band of `rows` output rows of width w: the last pixel tile reads up to 127 pixels
// past rows·Wp plus two rows.
inline int pitch_of(int w) {
  return (w + 7) / 8 * 8;
}
inline long long plane_of(int rows, int w) {
  return (static_cast<long long>(rows + 2) * pitch_of(w) + kTileN + 7) / 8 * 8;
}
// The TMA kernel's one padded copy, channels innermost: pixels of pitch Wq = W + 2 (a zero column each side), rows + 2
// rows (a zero row above and below the band).
inline int padded_pitch_of(int w) {
  return w + 2;
}
inline long long padded_plane_of(int rows, int w) {
  return static_cast<long long>(rows + 2) * padded_pitch_of(w);
}
// The stride-2 phase copy (phase_pad_nhwc_kernel) for `rows` output rows of width ow: four phases of rows + 1 rows
// of pitch Wq = OW + 1.
inline int phase_pitch_of(int ow) {
  return ow + 1;
}
inline long long phase_plane_of(int rows, int ow) {
  return 4LL * (rows + 1) * phase_pitch_of(ow);
}

// xs[kx][n][c][r·Wp + x] = x[n][c][row0 + r - 1][x + kx - 1] (zero outside the image and past the band's rows).
// One thread writes 8 consecutive elements (one 16-byte store) of a plane for each of the three kx: Wp is a multiple
// of 8, so they share a row, and they read the 10 input columns col0 - 1 .. col0 + 8. grid.x walks the plane's
// 8-element chunks, grid.y the images · C planes.
template <typename T>
__global__ void shift_pad_kernel(const T* __restrict__ x, T* __restrict__ xs, Args a, int images) {
  pdl_enter();
  const int chunks = static_cast<int>(a.plane / 8);
  const long long planes = static_cast<long long>(images) * a.c;
  for (long long p = blockIdx.y; p < planes; p += gridDim.y)
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < chunks; k += gridDim.x * blockDim.x) {
      const int e0 = 8 * k, r = e0 / a.wp, col0 = e0 - r * a.wp, row = a.row0 + r - 1;
      const bool row_in = r <= a.rows + 1 && row >= 0 && row < a.h;
      const T* src = x + (p * a.h + (row_in ? row : 0)) * a.w;
      T v[10];
#pragma unroll
      for (int i = 0; i < 10; ++i) {
        const int col = col0 - 1 + i;
        v[i] = row_in && col >= 0 && col < a.w ? src[col] : mma::from_float<T>(0.f);
      }
#pragma unroll
      for (int kx = 0; kx < 3; ++kx) {
        alignas(16) T out[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) out[j] = v[j + kx];
        *reinterpret_cast<uint4*>(xs + kx * a.kx_stride + p * a.plane + e0) = *reinterpret_cast<const uint4*>(out);
      }
    }
}

// The write-out of both padded-copy kernels: pixels x0 .. x0 + 63 (within the pitch) of the staged tile
// [pixel][64 channels], 16-byte runs of 8 channels, to a padded row whose pixels are C channels apart.
template <typename T>
__device__ __forceinline__ void store_padded_run(const T (&tile)[64][66], T* __restrict__ out, int x0, const Args& a) {
  const int pixels = min(64, a.wp - x0);
  for (int i = threadIdx.x; i < pixels * 8; i += blockDim.x) {
    const int pl = i / 8, ch = i % 8;
    alignas(16) T v[8];
#pragma unroll
    for (int jj = 0; jj < 8; ++jj)
      v[jj] = a.relu_in ? mma::from_float<T>(fmaxf(mma::to_float(tile[pl][ch * 8 + jj]), 0.f)) : tile[pl][ch * 8 + jj];
    *reinterpret_cast<uint4*>(out + static_cast<long long>(x0 + pl) * a.c + ch * 8) =
        *reinterpret_cast<const uint4*>(v);
  }
}

// Row r of a channels-innermost copy for the TMA kernel, xp[n][r·Wq + j][c0 + cl] = x[n][c0 + cl][row][step·j + off]
// (zero outside the in_h × in_w image), for the block's 64 channels c0 = 64·blockIdx.y and image blockIdx.z / runs.
// The block transposes runs of 64 pixels through shared memory: each of its four 64-thread groups reads 16 channels
// along 64 columns (coalesced at step 1, 16 loads in flight per thread), then 16-byte runs of 8 channels are
// written. The row's runs are shared by `runs` blocks (blockIdx.z % runs).
template <typename T>
__device__ __forceinline__ void pad_row_nhwc(const T* __restrict__ x, T* __restrict__ xp, const Args& a, int r, int row,
                                             int in_h, int in_w, int step, int off, int runs) {
  __shared__ T tile[64][66];  // [pixel][channel]; 33-word rows: a warp's column of writes hits 32 banks
  const int c0 = blockIdx.y * 64, n = blockIdx.z / runs, run = blockIdx.z % runs;
  const bool row_in = row >= 0 && row < in_h;
  const long long plane_in = static_cast<long long>(in_h) * in_w;
  const T* src =
      x + (static_cast<long long>(n) * a.c + c0) * plane_in + static_cast<long long>(row_in ? row : 0) * in_w;
  T* out = xp + (static_cast<long long>(n) * a.plane + static_cast<long long>(r) * a.wp) * a.c + c0;
  const int lane = threadIdx.x % 64, group = threadIdx.x / 64;
  for (int x0 = 64 * run; x0 < a.wp; x0 += 64 * runs) {
    const int col = step * (x0 + lane) + off;
    const bool in = row_in && col >= 0 && col < in_w;
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const int cl = group * 16 + k;
      tile[lane][cl] = in ? src[cl * plane_in + col] : mma::from_float<T>(0.f);
    }
    __syncthreads();
    store_padded_run(tile, out, x0, a);
    __syncthreads();
  }
}

// pad_row_nhwc for an even input width and a 4-byte-aligned x (pad_nhwc_kernel's common case): each thread reads
// two adjacent columns of 8 channels as one 4-byte load per channel, half the load instructions (Nsight Compute,
// session 20, DA2-L's 148² copies at batch 16: issuing on 46 % of cycles, 1.6 TB/s). The runs hold padded pixels
// 1 + 64k .. 64 + 64k, whose source columns 64k .. 64k + 63 are pairs of even start; run 0 also writes the zero
// pixel 0 of the row.
template <typename T>
__device__ __forceinline__ void pad_row_nhwc_pairs(const T* __restrict__ x, T* __restrict__ xp, const Args& a, int r,
                                                   int row, int runs) {
  __shared__ T tile[64][66];
  const int c0 = blockIdx.y * 64, n = blockIdx.z / runs, run = blockIdx.z % runs;
  const bool row_in = row >= 0 && row < a.h;
  const long long plane_in = static_cast<long long>(a.h) * a.w;
  const T* src = x + (static_cast<long long>(n) * a.c + c0) * plane_in + static_cast<long long>(row_in ? row : 0) * a.w;
  T* out = xp + (static_cast<long long>(n) * a.plane + static_cast<long long>(r) * a.wp) * a.c + c0;
  const int p = threadIdx.x % 32, cg = threadIdx.x / 32;  // column pair, 8-channel group
  if (run == 0 && threadIdx.x < 8) *reinterpret_cast<uint4*>(out + threadIdx.x * 8) = make_uint4(0, 0, 0, 0);
  for (int x0 = 1 + 64 * run; x0 < a.wp; x0 += 64 * runs) {
    const int col = x0 - 1 + 2 * p;  // even; a.w even, so col + 1 is inside whenever col is
    const bool in = row_in && col < a.w;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int cl = cg * 8 + k;
      alignas(4) T v[2] = {mma::from_float<T>(0.f), mma::from_float<T>(0.f)};
      if (in) *reinterpret_cast<uint32_t*>(v) = *reinterpret_cast<const uint32_t*>(src + cl * plane_in + col);
      tile[2 * p][cl] = v[0];
      tile[2 * p + 1][cl] = v[1];
    }
    __syncthreads();
    store_padded_run(tile, out, x0, a);
    __syncthreads();
  }
}

// xp[n][r·Wq + x'][c] = x[n][c][row0 + r - 1][x' - 1] (zero outside the image and past the band's rows): NCHW to
// the TMA kernel's channels-innermost padded copy, one padded row r per blockIdx.x (pad_row_nhwc, or
// pad_row_nhwc_pairs where `pairs`: W even and x 4-byte aligned). Grid (rows + 2, C / 64, images · runs): one row
// per block left DA2-S's 148² copies with 150 blocks, 5.7 µs under ncu for 5.7 MB.
template <typename T>
__global__ void __launch_bounds__(256)
    pad_nhwc_kernel(const T* __restrict__ x, T* __restrict__ xp, Args a, int runs, int pairs) {
  pdl_enter();
  const int r = blockIdx.x, row = a.row0 + r - 1;
  if (pairs)
    pad_row_nhwc_pairs(x, xp, a, r, row, runs);
  else
    pad_row_nhwc(x, xp, a, r, row, a.h, a.w, 1, -1, runs);
}

// The stride-2 conv's phase copy (3×3, pad 1): the padded input split by row and column parity,
//   xp[n][ph·Hq·Wq + i·Wq + j][c] = x[n][c][2i + r - 1][2j + s - 1],   ph = 2r + s, r, s ∈ {0, 1},
// i < Hq = OH + 1, j < Wq = OW + 1 (zero outside the image). Tap (ky, kx) of output (oy, ox) reads phase
// (ky % 2, kx % 2) at (oy + ky / 2, ox + kx / 2): with q = oy·Wq + ox, the pixels q + ph·Hq·Wq + (ky / 2)·Wq + kx / 2,
// a run of consecutive pixels as in the stride-1 copy, so the same TMA kernel runs it (Args::phase = Hq·Wq; a.h,
// a.w, a.wp are the output's rows, columns and Wq; in_h, in_w the input's). Grid (4·Hq, C / 64, images · runs): one
// phase row ph·Hq + i per blockIdx.x (pad_row_nhwc, the source columns two apart).
template <typename T>
__global__ void __launch_bounds__(256)
    phase_pad_nhwc_kernel(const T* __restrict__ x, T* __restrict__ xp, Args a, int in_h, int in_w, int runs) {
  pdl_enter();
  const int hq = a.rows + 1, pr = blockIdx.x, ph = pr / hq, i = pr - ph * hq;
  pad_row_nhwc(x, xp, a, pr, 2 * i + ph / 2 - 1, in_h, in_w, 2, ph % 2 - 1, runs);
}

// The bilinear (align_corners) source of conv2d_upsampled: the conv's input is x resampled from sh × sw to the
// conv's H × W (Args::h, w), computed while making the padded copy instead of being stored at H × W first.
struct Upsample {
  int sh, sw;              // source rows, columns
  float scale_h, scale_w;  // (s - 1) / (out - 1), 0 for a one-pixel output
};

// The align_corners source step of an axis resampled from `in` to `out` pixels: (in - 1) / (out - 1), 0 for a
// one-pixel output (resize.cu's source_scale with align_corners, in the same f32 operations).
inline float align_corners_scale(int in, int out) {
  return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
}

// One axis of a bilinear tap with align_corners, in resize.cu's operations (the same source indices and weights,
// so the values below equal resize_bilinear's bit for bit before rounding).
__device__ __forceinline__ void upsample_tap(int in, float scale, int o, int& i0, int& i1, float& w0, float& w1) {
  const float src = __fmul_rn(scale, static_cast<float>(o));
  i0 = min(static_cast<int>(floorf(src)), in - 1);
  const float l1 = fminf(fmaxf(__fsub_rn(src, static_cast<float>(i0)), 0.f), 1.f);
  i1 = i0 < in - 1 ? i0 + 1 : i0;
  w0 = __fsub_rn(1.f, l1);
  w1 = l1;
}

// One axis of a bilinear blend, w0·a + w1·b, in resize_kernel's operations (two rounded products, one rounded sum,
// no FMA).
__device__ __forceinline__ float mix(float w0, float a, float w1, float b) {
  return __fadd_rn(__fmul_rn(w0, a), __fmul_rn(w1, b));
}

// An upsampled value from its four source values (top / bottom at column i0, then at i1) in resize_kernel's order:
// each column blended vertically, then across; rounded once to T.
template <typename T>
__device__ __forceinline__ T blend(float wy0, float wy1, float wx0, float wx1, T v00, T v10, T v01, T v11) {
  using mma::to_float;
  return mma::from_float<T>(
      mix(wx0, mix(wy0, to_float(v00), wy1, to_float(v10)), wx1, mix(wy0, to_float(v01), wy1, to_float(v11))));
}

// pad_nhwc_kernel on the upsampled input: xp[n][r·Wq + x'][c] = up(x)[n][c][row0 + r - 1][x' - 1] with x the
// source [N][C][sh][sw] (zero outside H × W), each value blended as resize_kernel blends it (each column vertically,
// then across) and rounded once to T. Same blocks, grid and write-out as pad_nhwc_kernel. A padded row's two source
// rows are shared by the block, so per 64 output pixels it first blends the source columns they reach vertically
// (at most kSpan of them when upsampling: coalesced loads, two per channel and column) into shared memory, then
// blends across from there. A run reaching more columns (a downsampled axis) gathers its four taps per output from
// global memory instead. (Gathering always — four scalar loads per output — took 74.8 µs under ncu for DA2-L's
// 148² → 296² of 256 channels in session 15, 0.76 TB/s.)
constexpr int kSpan = 66;

template <typename T>
__global__ void __launch_bounds__(256)
    upsample_pad_nhwc_kernel(const T* __restrict__ x, T* __restrict__ xp, Args a, Upsample u, int runs) {
  pdl_enter();
  __shared__ T tile[64][66];
  __shared__ float cols[64][kSpan + 1];  // [channel][source column - lo], vertically blended
  const int r = blockIdx.x, c0 = blockIdx.y * 64, n = blockIdx.z / runs, run = blockIdx.z % runs;
  const int row = a.row0 + r - 1;
  const bool row_in = row >= 0 && row < a.h;
  int y0 = 0, y1 = 0;
  float wy0 = 0.f, wy1 = 0.f;
  if (row_in) upsample_tap(u.sh, u.scale_h, row, y0, y1, wy0, wy1);
  const long long plane_in = static_cast<long long>(u.sh) * u.sw;
  const T* src = x + (static_cast<long long>(n) * a.c + c0) * plane_in;
  T* out = xp + (static_cast<long long>(n) * a.plane + static_cast<long long>(r) * a.wp) * a.c + c0;
  const int lane = threadIdx.x % 64, group = threadIdx.x / 64;
  for (int x0 = 64 * run; x0 < a.wp; x0 += 64 * runs) {
    const int col = x0 + lane - 1;
    const bool in = row_in && col >= 0 && col < a.w;
    int x0i = 0, x1i = 0;
    float wx0 = 0.f, wx1 = 0.f;
    if (in) upsample_tap(u.sw, u.scale_w, col, x0i, x1i, wx0, wx1);
    // The source columns of this run's image pixels (columns x0 - 1 .. x0 + 62, clipped to the image).
    const int first = max(x0 - 1, 0), last = min(x0 + 62, a.w - 1);
    int lo = 0, hi = -1;
    if (row_in && first <= last) {
      int i1 = 0;
      float w0 = 0.f, w1 = 0.f;
      upsample_tap(u.sw, u.scale_w, first, lo, i1, w0, w1);
      int hi0 = 0;
      upsample_tap(u.sw, u.scale_w, last, hi0, hi, w0, w1);
    }
    const int span = hi - lo + 1;
    if (span <= kSpan) {
      for (int j = lane; j < span; j += 64) {
        const T* s0 = src + static_cast<long long>(y0) * u.sw + lo + j;
        const T* s1 = src + static_cast<long long>(y1) * u.sw + lo + j;
#pragma unroll 8
        for (int k = 0; k < 16; ++k) {
          const int cl = group * 16 + k;
          cols[cl][j] = mix(wy0, mma::to_float(s0[cl * plane_in]), wy1, mma::to_float(s1[cl * plane_in]));
        }
      }
      __syncthreads();
#pragma unroll 4
      for (int k = 0; k < 16; ++k) {
        const int cl = group * 16 + k;
        tile[lane][cl] =
            in ? mma::from_float<T>(mix(wx0, cols[cl][x0i - lo], wx1, cols[cl][x1i - lo])) : mma::from_float<T>(0.f);
      }
    } else {
      __syncthreads();  // the previous run's write-out has read tile
      const int o00 = y0 * u.sw + x0i, o10 = y1 * u.sw + x0i, o01 = y0 * u.sw + x1i, o11 = y1 * u.sw + x1i;
#pragma unroll 4
      for (int k = 0; k < 16; ++k) {
        const int cl = group * 16 + k;
        const T* s = src + cl * plane_in;
        tile[lane][cl] = in ? blend(wy0, wy1, wx0, wx1, s[o00], s[o10], s[o01], s[o11]) : mma::from_float<T>(0.f);
      }
    }
    // tile is complete, and this run's reads of cols are done before the next run writes them; the next run writes
    // tile only after a barrier that follows this run's write-out.
    __syncthreads();
    store_padded_run(tile, out, x0, a);
  }
}

// w [O, C, 3, 3] -> wt [tap][O][C].
template <typename T>
__global__ void tap_weights_kernel(const T* __restrict__ w, T* __restrict__ wt, int o, int c) {
  const long long total = 9LL * o * c;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int tap = static_cast<int>(i / (static_cast<long long>(o) * c));
    const long long oc = i % (static_cast<long long>(o) * c);
    wt[i] = w[oc * 9 + tap];
  }
}

// The cp.async kernel's epilogue: accumulator rows orow and orow + 8 (output channels) of the tile's 128 pixels from
// q0, + bias (f32), optional ReLU, rounded once to T, stored to NCHW y for the pixels inside the band and the image
// (the TMA kernel stores through shared memory: store_tile_staged).
template <typename T>
__device__ __forceinline__ void store_tile(const float (&d)[kTileN / 8][4], const float* __restrict__ bias,
                                           T* __restrict__ y, const Args& a, int q0, int orow, int n, int t) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int o = orow + 8 * i;
    const float b = bias ? bias[o] : 0.f;
    T* yo = y + (static_cast<long long>(n) * a.o + o) * a.h * a.w;
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int q = q0 + 8 * j + 2 * t + e, oy = q / a.wp, ox = q - oy * a.wp;
        if (oy >= a.rows || ox >= a.w) continue;
        float v = d[j][2 * i + e] + b;
        if (a.relu) v = fmaxf(v, 0.f);
        yo[static_cast<long long>(a.row0 + oy) * a.w + ox] = mma::from_float<T>(v);
      }
  }
}

// The TMA kernel's epilogue through shared memory (the ring, free once every wgmma has completed): the consumers
// write their accumulators + bias (f32), optional ReLU, rounded once to T, as rows of output channels [64·WG][kPitch]
// (pitch 136 elements: a warp's 4-byte writes, rows g and columns 2t, fall in 32 different banks), meet at a named
// barrier, and each warp then stores whole channel rows: 32 consecutive pixels per store instruction, where the
// accumulator layout stores 4 bytes of each of 8 channel rows (Nsight Compute, session 20, DA2-L's 148² conv at batch
// 16: 5.8 of each 32-byte sector used, 680 MB sent to L2 for 123 MB of output). Same values as store_tile.
// NT: pixels per tile (kTileN, or the TMA kernel's 176, whose last store instruction has 16 pixels; pitch 184).

template <typename T, int WG, int NT = kTileN>
__device__ __forceinline__ void store_tile_staged(const float (&d)[NT / 8][4], const float* __restrict__ bias,
                                                  T* __restrict__ y, const Args& a, unsigned char* smem, int q0, int o0,
                                                  int n) {
  constexpr int kConsumers = WG * 128, kPitch = NT + 8, kRuns = (NT + 31) / 32;
  const int tid = threadIdx.x, lane = tid % 32, g = lane / 4, t = lane % 4;
  T* tile = reinterpret_cast<T*>(smem);
  // Every consumer's wgmma has completed (each waited for its own): the ring is no longer read.
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = tid / 32 * 16 + g + 8 * i;  // warp tid / 32 holds rows 16·warp .. + 15 of the block's channels
    const float b = bias ? bias[o0 + r] : 0.f;
#pragma unroll
    for (int j = 0; j < NT / 8; ++j) {
      float v0 = d[j][2 * i] + b, v1 = d[j][2 * i + 1] + b;
      if (a.relu) {
        v0 = fmaxf(v0, 0.f);
        v1 = fmaxf(v1, 0.f);
      }
      alignas(4) T pair[2] = {mma::from_float<T>(v0), mma::from_float<T>(v1)};
      *reinterpret_cast<uint32_t*>(tile + r * kPitch + 8 * j + 2 * t) = *reinterpret_cast<const uint32_t*>(pair);
    }
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
  int oy[kRuns], ox[kRuns];
#pragma unroll
  for (int k = 0; k < kRuns; ++k) {
    const int q = q0 + lane + 32 * k;
    oy[k] = q / a.wp;
    ox[k] = q - oy[k] * a.wp;
  }
  for (int r = tid / 32; r < 64 * WG; r += kConsumers / 32) {
    T* yo = y + (static_cast<long long>(n) * a.o + o0 + r) * a.h * a.w;
#pragma unroll
    for (int k = 0; k < kRuns; ++k)
      if ((NT % 32 == 0 || lane + 32 * k < NT) && oy[k] < a.rows && ox[k] < a.w)
        yo[static_cast<long long>(a.row0 + oy[k]) * a.w + ox[k]] = tile[r * kPitch + lane + 32 * k];
  }
}

// store_tile_staged's alternative for a conv whose output is the next 3×3 conv's input (a.padded_out: unsplit, whole
// images, stride 1): y is that conv's channels-innermost padded copy, y[n][(oy + 1)·Wq + ox + 1][o] (Wq = W + 2 = the
// pitch of q, so pixel q goes to q + Wq + 1), with its zero border: the pitch's two extra columns of each row are the
// right border of that row and the left border of the next, stored as zeros; the first tile also zeroes the top row
// and the first pixel of row 1, the last tile the rest of the bottom row. The consumers stage the tile pixel-major,
// [128 pixels][64·WG channels + 8] (a warp's 2-byte writes, pixels 2t and channel rows g, fall in 16 different
// words of 16 different banks), then store 16-byte runs of 8 channels. Same values as store_tile_staged.
template <typename T, int WG, int NT = kTileN>
__device__ __forceinline__ void store_tile_padded(const float (&d)[NT / 8][4], const float* __restrict__ bias,
                                                  T* __restrict__ y, const Args& a, unsigned char* smem, int q0, int o0,
                                                  int n) {
  constexpr int kConsumers = WG * 128, kRows = 64 * WG, kPitch = kRows + 8, kChunks = kRows / 8;
  const int tid = threadIdx.x, lane = tid % 32, g = lane / 4, t = lane % 4;
  T* tile = reinterpret_cast<T*>(smem);
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = tid / 32 * 16 + g + 8 * i;
    const float b = bias ? bias[o0 + r] : 0.f;
#pragma unroll
    for (int j = 0; j < NT / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int p = 8 * j + 2 * t + e, q = q0 + p;
        float v = d[j][2 * i + e] + b;
        if (a.relu) v = fmaxf(v, 0.f);
        if (q % a.wp >= a.w) v = 0.f;  // a border column
        tile[p * kPitch + r] = mma::from_float<T>(v);
      }
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
  const int limit = a.rows * a.wp;  // q past the image's rows: not stored
  T* img = y + static_cast<long long>(n) * a.plane * a.o + o0;
  for (int i = tid; i < NT * kChunks; i += kConsumers) {
    const int p = i / kChunks, ch = i % kChunks, q = q0 + p;
    if (q < limit)
      *reinterpret_cast<uint4*>(img + static_cast<long long>(q + a.wp + 1) * a.o + ch * 8) =
          *reinterpret_cast<const uint4*>(tile + p * kPitch + ch * 8);
  }
  const auto zero = [&](int from, int to) {  // padded pixels [from, to) of the block's channels
    for (int i = tid; i < (to - from) * kChunks; i += kConsumers)
      *reinterpret_cast<uint4*>(img + static_cast<long long>(from + i / kChunks) * a.o + (i % kChunks) * 8) =
          make_uint4(0, 0, 0, 0);
  };
  if (q0 == 0) zero(0, a.wp + 1);
  if (q0 + NT >= limit) zero((a.rows + 1) * a.wp + 1, (a.rows + 2) * a.wp);
}

template <int WG, int STAGES>
constexpr int smem_bytes() {
  return STAGES * (64 * WG * kTileK * 2 + kTileK * kTileN * 2) + 1024;  // + 1 KiB to align the ring
}

// The TMA kernel's ring: per stage KX tap tiles of weights and one pixel tile of kTileN + KX - 1 rows (rounded up to
// whole 8-row swizzle atoms).
template <int KX, int NT = kTileN>
__host__ __device__ constexpr int tma_rows_b() {
  return (NT + KX - 1 + 7) / 8 * 8;
}
template <int WG, int STAGES, int KX, int NT = kTileN>
constexpr int tma_smem_bytes() {
  return STAGES * (KX * 64 * WG * kTileK * 2 + tma_rows_b<KX, NT>() * kTileK * 2) + 1024;
}

template <typename T, int WG, int STAGES>
__global__ void __launch_bounds__(WG * 128)
    conv3x3_wgmma_kernel(const T* __restrict__ xs, const T* __restrict__ wt, const float* __restrict__ bias,
                         T* __restrict__ y, Args a) {
  pdl_enter();
#if DACPP_HAS_WGMMA
  static_assert(STAGES >= 3,
                "the ring holds the step being read, the one still read by the wgmma in flight, and "
                "at least one being loaded");
  constexpr int kThreads = WG * 128, kRowsA = 64 * WG, kAhead = STAGES - 2;
  constexpr int kBytesA = kRowsA * kTileK * 2, kBytesB = kTileK * kTileN * 2, kStage = kBytesA + kBytesB;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = smem_raw + ((1024 - (mma::smem_addr(smem_raw) & 1023)) & 1023);
  const int tid = threadIdx.x, wg = tid / 128, warp = tid % 128 / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int q0 = blockIdx.x * kTileN;
  const int o0 = blockIdx.y * kRowsA, n = blockIdx.z;
  const int csteps = a.c / kTileK, steps = 9 * csteps;

  // Step s: tap s / csteps, input channels (s % csteps)·64 .. + 63.
  const auto load = [&](int s, int stage) {
    const int tap = s / csteps, c0 = (s % csteps) * kTileK, ky = tap / 3, kx = tap % 3;
    unsigned char* sa = ring + stage * kStage;
    unsigned char* sb = sa + kBytesA;
    const T* wa = wt + (static_cast<long long>(tap) * a.o + o0) * a.c + c0;
    for (int i = tid; i < kRowsA * 8; i += kThreads) {  // A: kRowsA rows of 64 channels (8 chunks)
      const int r = i / 8, ch = i % 8;
      mma::cp_async16(sa + wgmma::swizzle128(r, ch), wa + r * a.c + ch * 8);
    }
    const T* xb = xs + kx * a.kx_stride + (static_cast<long long>(n) * a.c + c0) * a.plane + q0 + ky * a.wp;
    for (int i = tid; i < kTileK * 16; i += kThreads) {  // B: 64 channel rows of 128 pixels (two 64-pixel halves)
      const int r = i / 16, ch = i % 16, half = ch / 8;
      mma::cp_async16(sb + half * (kTileK * 128) + wgmma::swizzle128(r, ch % 8), xb + r * a.plane + ch * 8);
    }
  };

  float d[kTileN / 8][4];  // the first step's first wgmma overwrites it (scale_d = 0)

  // Steps s .. s + kAhead - 1 are in flight as cp.async groups while step s's wgmma runs; one wgmma group stays in
  // flight across the loop's barrier. The stage refilled at step s, (s + kAhead) % STAGES = (s - 2) % STAGES, was
  // last read by step s - 2's wgmma, which every warpgroup waited for (wait<1> at the end of step s - 1) before
  // this step's barrier.
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < steps) load(s, s);
    mma::cp_async_commit();
  }
  for (int s = 0; s < steps; ++s) {
    mma::cp_async_wait<kAhead - 1>();  // step s landed (this thread's copies)
    wgmma::fence_proxy_async();
    __syncthreads();  // every thread's copies of step s; every warpgroup done with step s - 2's stage
    if (s + kAhead < steps) load(s + kAhead, (s + kAhead) % STAGES);
    mma::cp_async_commit();
    const int stage = s % STAGES;
    const uint32_t sa = mma::smem_addr(ring + stage * kStage) + wg * 64 * 128;
    const uint32_t sb = mma::smem_addr(ring + stage * kStage + kBytesA);
    const uint64_t desc_a = wgmma::desc_sw128(sa);
    const uint64_t desc_b = wgmma::desc_sw128(sb, kTileK * 128);
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < kTileK / 16; ++kk)  // A: +32 bytes along the swizzled rows; B: +16 rows of 128 bytes
      wgmma::wgmma_ss_n128<T, 1>(d, desc_a + 2 * kk, desc_b + kk * (2048 >> 4), s > 0 || kk > 0);
    wgmma::commit();
    wgmma::fence_operands(d);
    wgmma::wait<1>();
    wgmma::fence_operands(d);
  }
  wgmma::wait<0>();
  wgmma::fence_operands(d);
  mma::cp_async_wait<0>();

  store_tile<T>(d, bias, y, a, q0, o0 + wg * 64 + warp * 16 + g, n, t);
#endif
}

// The same GEMM fed by the tensor memory accelerator. Input: one zero-padded copy with the channels innermost,
// Xp[n][r·Wq + x'][c] = x[n][c][row0 + r - 1][x' - 1] (pad_nhwc_kernel), Wq = W + 2; output pixel q = oy·Wq + ox, so
// tap (ky, kx) reads the pixels q + ky·Wq + kx. A box's innermost coordinate must be 16-byte aligned (a misaligned
// one is an illegal instruction: the H200 said so when the first version of this kernel shifted the pixels along
// the innermost dimension), so the pixels are the outer dimension, where any start is allowed, and no shifted
// copies are needed. Per step a producer warp (the block's last) loads the tap weights (box of 64 channels × 64·WG
// rows of Wt viewed as [9·O][C]) and the pixels (box of 64 channels × 128 pixels of Xp viewed as [images·plane][C])
// into a STAGES-deep ring, each stage counted on a `full` barrier (one arrival plus its bytes). Both operands are
// K-major (channels contiguous, 128-byte swizzle, the maps' swizzle). The WG consumer warpgroups wait on it, run
// four m64n128k16 wgmma, and release the stage one step later, when the wgmma that read it has completed (an
// `empty` barrier of one arrival per consumer warp), so one wgmma group stays in flight. No block-wide barrier after
// the set-up.
// Split K (a.splits > 1, for maps with too few pixel tiles to fill the GPU): blockIdx.z = n · splits + split, each
// block runs its share of the 9·C/64 steps and writes f32 partials; split_reduce_kernel sums them. Shared memory:
// tma_smem_bytes<WG, STAGES, KX>() plus the barriers.
// KX = 3 (row reuse): a step is one kernel row ky and 64 channels: the three kx taps' weight tiles and one pixel
// tile of kTileN + 2 rows (pixels q0 + ky·Wq .. + 129), of which tap kx reads rows kx .. kx + 127 (its wgmma
// descriptor starts kx rows in). The three taps' pixels are loaded once instead of three times: a third of the
// pixel tiles read from L2 (for DA2-L's 148² 256 → 256, ~410 MB of weight and pixel tiles per conv at one tap per
// step, ~270 MB so): 86.4 → 79.6 µs in the tuner on the H200 (session 16).
// NT = 176 (KX = 3, unsplit, 2 warpgroups; ConvAlgo::WgmmaTmaRowsWide): pixel tiles of 176 (m64n176k16, 88
// accumulators per thread, a 178-row pixel box), so that DA2-L's 148² maps take two waves of blocks instead of
// three: 60.9 → 56.6 µs per 148² 256 → 256 conv in the tuner, DA2-L −19 µs on the H100 (session 44).
template <typename T, int WG, int STAGES, int KX = 1, int NT = kTileN>
__global__ void __launch_bounds__(WG * 128 + 32)
    conv3x3_wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                             const float* __restrict__ bias, T* __restrict__ y, float* __restrict__ partial, Args a) {
  pdl_enter();
#if DACPP_HAS_WGMMA
  static_assert(STAGES >= 2, "one stage read by the wgmma in flight, one being read or loaded");
  static_assert(KX == 1 || KX == 3, "one tap or a kernel row per step");
  static_assert(NT == kTileN || NT == kTileNWide, "pixel tiles of 128 or 176 (m64n128k16 / m64n176k16)");
  constexpr int kRowsA = 64 * WG, kConsumers = WG * 128;
  constexpr int kBytesA = kRowsA * kTileK * 2, kBytesB = tma_rows_b<KX, NT>() * kTileK * 2;
  constexpr int kStage = KX * kBytesA + kBytesB, kLoaded = KX * kBytesA + (NT + KX - 1) * kTileK * 2;
  extern __shared__ unsigned char smem_raw[];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  unsigned char* ring = smem_raw + ((1024 - (mma::smem_addr(smem_raw) & 1023)) & 1023);
  const uint32_t ring_addr = mma::smem_addr(ring);
  const int tid = threadIdx.x;
  const int q0 = blockIdx.x * NT, o0 = blockIdx.y * kRowsA, n = blockIdx.z / a.splits;
  const int split = blockIdx.z % a.splits, csteps = a.c / kTileK, steps = 9 / KX * csteps;
  const int first = split * steps / a.splits, count = (split + 1) * steps / a.splits - first;  // this block's steps
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      tma::barrier_init(mma::smem_addr(&full[s]), 1);
      tma::barrier_init(mma::smem_addr(&empty[s]), kConsumers / 32);
    }
    tma::fence_barrier_init();
  }
  __syncthreads();

  if (tid >= kConsumers) {  // the producer warp: one thread issues every load
    if (tid == kConsumers) {
      tma::prefetch_map(&map_w);
      tma::prefetch_map(&map_x);
      for (int i = 0; i < count; ++i) {
        // Step s: taps tap0 .. tap0 + KX - 1 (KX = 3: kernel row ky, all kx) of channels c0 .. c0 + 63.
        const int s = first + i, stage = i % STAGES, tap0 = s / csteps * KX, c0 = (s % csteps) * kTileK;
        const int ky = tap0 / 3, kx = tap0 % 3;
        // Where tap (ky, kx) starts: ky rows and kx pixels on, or in its phase of the stride-2 copy (KX = 1 only).
        const int shift = a.phase ? ((ky & 1) * 2 + (kx & 1)) * a.phase + (ky >> 1) * a.wp + (kx >> 1) : ky * a.wp + kx;
        tma::wait(mma::smem_addr(&empty[stage]), ((i / STAGES) & 1) ^ 1);  // released by step i - STAGES's readers
        const uint32_t bar = mma::smem_addr(&full[stage]), sa = ring_addr + stage * kStage, sb = sa + KX * kBytesA;
        tma::arrive_expect_tx(bar, kLoaded);
#pragma unroll
        for (int j = 0; j < KX; ++j) tma::load_2d(sa + j * kBytesA, &map_w, c0, (tap0 + j) * a.o + o0, bar);
        tma::load_2d(sb, &map_x, c0, n * static_cast<int>(a.plane) + q0 + shift, bar);
      }
    }
    return;
  }

  const int wg = tid / 128, warp = tid % 128 / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  float d[NT / 8][4];  // the first step's first wgmma overwrites it (scale_d = 0)
  for (int s = 0; s < count; ++s) {
    const int stage = s % STAGES;
    tma::wait(mma::smem_addr(&full[stage]), (s / STAGES) & 1);
    __syncwarp();  // the wgmma below are .sync.aligned: the warp must reach them converged
    const uint32_t sa = ring_addr + stage * kStage;
    wgmma::fence();
#pragma unroll
    for (int j = 0; j < KX; ++j) {
      const uint64_t desc_a = wgmma::desc_sw128(sa + j * kBytesA + wg * 64 * 128);
      // Tap kx = j reads the pixel tile from row j, inside a swizzle atom: the 128-byte swizzle is a function of the
      // shared address (as the TMA wrote it), so the plain descriptor of that address reads the right chunks (on the
      // H200 in session 16; with the descriptor's base offset set to j instead, the GPU tests failed).
      const uint64_t desc_b = wgmma::desc_sw128(sa + KX * kBytesA + j * 128);
#pragma unroll
      for (int kk = 0; kk < kTileK / 16; ++kk) {  // both K-major: +32 bytes along the swizzled rows
        if constexpr (NT == kTileNWide)
          wgmma::wgmma_ss_n176<T>(d, desc_a + 2 * kk, desc_b + 2 * kk, s > 0 || j > 0 || kk > 0);
        else
          wgmma::wgmma_ss_n128<T, 0>(d, desc_a + 2 * kk, desc_b + 2 * kk, s > 0 || j > 0 || kk > 0);
      }
    }
    wgmma::commit();
    wgmma::fence_operands(d);
    wgmma::wait<1>();  // step s - 1's wgmma has completed: its stage may be refilled
    wgmma::fence_operands(d);
    if (s > 0 && lane == 0) tma::arrive(mma::smem_addr(&empty[(s - 1) % STAGES]));
  }
  wgmma::wait<0>();
  wgmma::fence_operands(d);
  const int orow = o0 + wg * 64 + warp * 16 + g;
  if (NT != kTileN || a.splits == 1) {  // the host splits only 128-pixel tiles
    static_assert(STAGES * kStage >= 64 * WG * (NT + 8) * 2, "the staged output tile fits the ring");
    static_assert(STAGES * kStage >= NT * (64 * WG + 8) * 2, "the pixel-major output tile fits the ring");
    if (a.padded_out)
      store_tile_padded<T, WG, NT>(d, bias, y, a, ring, q0, o0, n);
    else
      store_tile_staged<T, WG, NT>(d, bias, y, a, ring, q0, o0, n);
  } else if constexpr (NT == kTileN) {
    // partial[n][split][o][q] (blockIdx.z = n · splits + split), q over the grid's whole pixel tiles
    const long long pq = static_cast<long long>(gridDim.x) * kTileN;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float* po = partial + ((static_cast<long long>(blockIdx.z) * a.o) + orow + 8 * i) * pq + q0 + 2 * t;
#pragma unroll
      for (int j = 0; j < kTileN / 8; ++j)
        *reinterpret_cast<float2*>(po + 8 * j) = make_float2(d[j][2 * i], d[j][2 * i + 1]);
    }
  }
#endif
}

// The split TMA kernel's partials summed: y[n][o][row0 + oy][ox] = Σ_split partial[n·splits + split][o][oy·Wq + ox]
// + bias, optional ReLU, rounded once to T (one thread per output element of the band).
template <typename T>
__global__ void split_reduce_kernel(const float* __restrict__ partial, const float* __restrict__ bias,
                                    T* __restrict__ y, Args a, int images, long long pq) {
  pdl_enter();
  const long long total = static_cast<long long>(images) * a.o * a.rows * a.w;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int ox = static_cast<int>(i % a.w);
    const long long r = i / a.w;
    const int oy = static_cast<int>(r % a.rows);
    const long long no = r / a.rows;  // n · O + o
    const int o = static_cast<int>(no % a.o), n = static_cast<int>(no / a.o);
    const float* p = partial + (static_cast<long long>(n) * a.splits * a.o + o) * pq + oy * a.wp + ox;
    float v = bias ? bias[o] : 0.f;
    for (int s = 0; s < a.splits; ++s) v += p[static_cast<long long>(s) * a.o * pq];
    if (a.relu) v = fmaxf(v, 0.f);
    y[(no * a.h + a.row0 + oy) * a.w + ox] = mma::from_float<T>(v);
  }
}

}  // namespace dacpp::cuda::conv3x3_wg
