// conv3x3_tc: 3×3, stride 1, pad 1 convolution (bf16/f16, C % 16 == 0) as a direct conv on tensor cores.
//
// Block: an output tile of TH × 16 pixels of one image × 32·WM output channels; 256 threads = 8 warps, WM along
// the channels, 8 / WM along the pixel rows (warp tile 32 channels × 2·TH·WM pixels, NT = TH·WM/4 n-tiles of 8).
// The K loop runs over 16-channel chunks; per chunk two things are staged in shared memory once and read by all
// 9 taps:
//   input  [(TH+2)·18 halo pixels][16 channels + 8 pad]   (a tap reads the window shifted by (ky, kx); B fragments
//                                                          via ldmatrix, 48-byte rows: conflict-free)
//   weight [9 taps][32·WM rows][16 channels + 8 pad]  (A fragments via ldmatrix), copied with cp.async from the
//          tap-major layout wt[C/16][9][O][16] that relayout_weights builds once per weight (CudaContext::derived).
// Two stages: the next chunk's input is loaded into registers and its weights are copied with cp.async while the
// current chunk runs on the tensor cores; one barrier per chunk. (0.5 copied the natural [o][c·9 + tap] rows and
// transposed them in shared memory every chunk: a second barrier and ~50 shared-memory operations per thread per
// chunk.) Epilogue: + bias (f32), optional ReLU, rounded once to T; pixel pairs are stored as one 32-bit word when
// the row width is even.
// Split K (Args::splits > 1, for maps too small to give every multiprocessor a block: DA2-S's 19² and 37² refinenet
// convs are 12 and 30 blocks): blockIdx.z = image · splits + split, each block runs its share of the 16-channel
// chunks and stores its f32 sums to `partial` [split][image][O][H·W]; split_sum_kernel adds them up with the bias and
// ReLU and rounds once to T.
// Included only by conv2d.cu.
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/mma_util.cuh"

namespace dacpp::cuda::conv3x3 {

struct Args {
  int c, h, w, o;  // channels in, image size (= output size), channels out
  int tiles_x;     // ceil(w / kTW)
  int relu;
  int pair_store;  // w even and y 4-byte aligned: output pixel pairs stored as one 32-bit word
  int splits = 1;  // blocks sharing one output tile's channel chunks (f32 partials, then split_sum_kernel)
};

constexpr int kTW = 16;        // output tile width (pixels)
constexpr int kThreads = 256;  // 8 warps
constexpr int kPixS = 24;      // staged halves per halo pixel (16 channels + pad), and per staged weight row

template <int TH>
struct Geo {
  static constexpr int rows = TH + 2, cols = kTW + 2, pixels = rows * cols;
  static constexpr int items = (pixels + 7) / 8 * 8 * 8;  // (pixel, channel pair) slots, pixel count rounded to 8
  static constexpr int iters = (items + kThreads - 1) / kThreads;
  static constexpr int in_elems = pixels * kPixS;
};

// Shared memory: two stages of (input tile, tap-major weights).
template <int WM, int TH>
__host__ __device__ constexpr int stage_elems() {
  return Geo<TH>::in_elems + 9 * 32 * WM * kPixS;
}

template <int WM, int TH>
__host__ __device__ constexpr int smem_bytes() {
  return 2 * stage_elems<WM, TH>() * 2;
}

// wt[(chunk·9 + tap)·O + o][j] = w[o][16·chunk + j][tap] for w [O, C, 3, 3] (C % 16 == 0): one thread per element.
template <typename T>
__global__ void relayout_weights(const T* __restrict__ w, T* __restrict__ wt, int o_count, int c_count) {
  const long long n = static_cast<long long>(o_count) * c_count * 9;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int j = static_cast<int>(i % 16);
    long long r = i / 16;
    const int o = static_cast<int>(r % o_count);
    r /= o_count;
    const int tap = static_cast<int>(r % 9), chunk = static_cast<int>(r / 9);
    wt[i] = w[(static_cast<long long>(o) * c_count + chunk * 16 + j) * 9 + tap];
  }
}

// Item i of this thread: pixel 32·i + pix0 of the halo tile, channel pair `pair` (fixed per thread); a warp covers
// 8 consecutive pixels × 4 channel pairs (16-byte row pieces in global memory, distinct banks in shared memory).
__device__ __forceinline__ int item_pix0() { return (threadIdx.x / 64) * 8 + threadIdx.x % 8; }
__device__ __forceinline__ int item_pair() { return (threadIdx.x / 8) % 8; }

// Loads channels [c0, c0 + 16) of the halo tile at (iy0, ix0) of image xn into registers (0 outside the image).
template <int TH>
__device__ __forceinline__ void load_input(const uint16_t* __restrict__ xn, const Args& a, int c0, int iy0, int ix0,
                                           uint32_t (&r)[Geo<TH>::iters]) {
  using G = Geo<TH>;
  const int hw = a.h * a.w, pix0 = item_pix0();
  const uint16_t* base = xn + (c0 + 2 * item_pair()) * hw;
#pragma unroll
  for (int i = 0; i < G::iters; ++i) {
    const int pix = 32 * i + pix0;
    const int hy = pix / G::cols, hx = pix - hy * G::cols;
    const int iy = iy0 + hy, ix = ix0 + hx;
    uint32_t v = 0;
    if (pix < G::pixels && static_cast<unsigned>(iy) < static_cast<unsigned>(a.h) &&
        static_cast<unsigned>(ix) < static_cast<unsigned>(a.w)) {
      const uint16_t* p = base + iy * a.w + ix;
      v = static_cast<uint32_t>(__ldg(p)) | (static_cast<uint32_t>(__ldg(p + hw)) << 16);
    }
    r[i] = v;
  }
}

template <int TH>
__device__ __forceinline__ void store_input(uint16_t* in_s, const uint32_t (&r)[Geo<TH>::iters]) {
  uint16_t* dst = in_s + item_pix0() * kPixS + 2 * item_pair();
#pragma unroll
  for (int i = 0; i < Geo<TH>::iters; ++i)
    if (32 * i + item_pix0() < Geo<TH>::pixels) *reinterpret_cast<uint32_t*>(dst + 32 * i * kPixS) = r[i];
}

// Starts the copy of chunk `chunk` of wt (tap-major, see relayout_weights) for output channels [o0, o0 + 32·WM)
// into ws [9][32·WM][kPixS] (rows past O are zeroed): two 16-byte vectors per (tap, channel) row.
template <int WM>
__device__ __forceinline__ void load_weights(const uint16_t* __restrict__ wt, const Args& a, int o0, int chunk,
                                             uint16_t* ws) {
  constexpr int kRows = 9 * 32 * WM;
  for (int v = threadIdx.x; v < 2 * kRows; v += kThreads) {
    const int row = v >> 1, half = v & 1;
    const int tap = row / (32 * WM), m = row - tap * (32 * WM);
    uint16_t* dst = ws + row * kPixS + half * 8;
    if (o0 + m < a.o)
      mma::cp_async16(dst, wt + ((static_cast<long long>(chunk) * 9 + tap) * a.o + o0 + m) * 16 + half * 8);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
  mma::cp_async_commit();
}

// The 9 taps of one staged chunk: acc += W_tap · shifted input window.
template <typename T, int WM, int TH>
__device__ __forceinline__ void compute_chunk(const uint16_t* in_s, const uint16_t* ws, int a_off,
                                              const int (&b_off)[TH * WM / 8], float (&acc)[2][TH * WM / 4][4]) {
  constexpr int NP = TH * WM / 8;  // ldmatrix.x4 loads (2 n-tiles each) per tap
#pragma unroll
  for (int ky = 0; ky < 3; ++ky)
#pragma unroll
    for (int kx = 0; kx < 3; ++kx) {
      uint32_t af[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
        mma::ldmatrix_x4(af[mt], ws + a_off + ((ky * 3 + kx) * 32 * WM + mt * 16) * kPixS);
#pragma unroll
      for (int j = 0; j < NP; ++j) {
        uint32_t b[4];
        mma::ldmatrix_x4(b, in_s + b_off[j] + (ky * Geo<TH>::cols + kx) * kPixS);
        mma::mma16816<T>(acc[0][2 * j], af[0], b[0], b[1]);
        mma::mma16816<T>(acc[1][2 * j], af[1], b[0], b[1]);
        mma::mma16816<T>(acc[0][2 * j + 1], af[0], b[2], b[3]);
        mma::mma16816<T>(acc[1][2 * j + 1], af[1], b[2], b[3]);
      }
    }
}

template <typename T, int WM, int TH, bool SPLIT>
__global__ void __launch_bounds__(kThreads, 2)
    conv3x3_tc(const uint16_t* __restrict__ x, const uint16_t* __restrict__ wt, const float* __restrict__ bias,
               T* __restrict__ y, float* __restrict__ partial, Args a) {
  pdl_enter();
  using G = Geo<TH>;
  constexpr int NT = TH * WM / 4, PW = 2 * TH * WM, kStage = stage_elems<WM, TH>();
  extern __shared__ __align__(16) uint16_t smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, wm = warp % WM, wn = warp / WM;
  const int tx = blockIdx.x % a.tiles_x, ty = blockIdx.x / a.tiles_x, o0 = blockIdx.y * 32 * WM;
  const int splits = SPLIT ? a.splits : 1;  // the unsplit kernel keeps its registers for the tile
  const int image = static_cast<int>(blockIdx.z) / splits, split = static_cast<int>(blockIdx.z) % splits;
  const long long img = static_cast<long long>(image) * a.h * a.w;
  const uint16_t* xn = x + img * a.c;
  const int iy0 = ty * TH - 1, ix0 = tx * kTW - 1;

  const int a_off = (wm * 32 + lane % 16) * kPixS + (lane / 16) * 8;
  int b_off[NT / 2];
#pragma unroll
  for (int j = 0; j < NT / 2; ++j) {
    const int q = wn * PW + (2 * j + lane / 16) * 8 + lane % 8;
    b_off[j] = ((q / kTW) * G::cols + q % kTW) * kPixS + ((lane / 8) & 1) * 8;
  }
  float acc[2][NT][4] = {};
  uint32_t pre[G::iters];

  const int chunks = a.c / 16;
  const int c_begin = split * chunks / splits, c_end = (split + 1) * chunks / splits;  // this block's chunks
  load_weights<WM>(wt, a, o0, c_begin, smem + G::in_elems);
  load_input<TH>(xn, a, c_begin * 16, iy0, ix0, pre);
  store_input<TH>(smem, pre);
  mma::cp_async_wait<0>();
  __syncthreads();
  for (int ch = c_begin; ch < c_end; ++ch) {
    // The other stage was last read in chunk ch - 1, which every warp finished before the barrier below.
    const int i = ch - c_begin;
    const uint16_t* cur = smem + (i & 1) * kStage;
    uint16_t* nxt = smem + ((i + 1) & 1) * kStage;
    const bool more = ch + 1 < c_end;
    if (more) {
      load_weights<WM>(wt, a, o0, ch + 1, nxt + G::in_elems);
      load_input<TH>(xn, a, (ch + 1) * 16, iy0, ix0, pre);
    }
    compute_chunk<T, WM, TH>(cur, cur + G::in_elems, a_off, b_off, acc);
    if (!more) break;
    store_input<TH>(nxt, pre);
    mma::cp_async_wait<0>();
    __syncthreads();
  }

  // Each accumulator pair in the map: store(o, oy, ox, v0, v1) for output pixels (ox, oy) and (ox + 1, oy) of
  // channel o (q even: the pair shares a row; ox + 1 may be past the row's end).
  auto for_each_pair = [&](auto&& store) {
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int o = o0 + wm * 32 + mt * 16 + lane / 4 + half * 8;
        if (o >= a.o) continue;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int q = wn * PW + nt * 8 + (lane % 4) * 2;
          const int oy = ty * TH + q / kTW, ox = tx * kTW + q % kTW;
          if (oy < a.h && ox < a.w) store(o, oy, ox, acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
        }
      }
  };
  if constexpr (SPLIT) {  // f32 sums of this block's chunks: partial[split][image][o][oy·W + ox]
    const long long images = gridDim.z / splits;
    float* pn = partial + (split * images + image) * a.o * a.h * a.w;
    for_each_pair([&](int o, int oy, int ox, float v0, float v1) {
      float* dst = pn + (static_cast<long long>(o) * a.h + oy) * a.w + ox;
      dst[0] = v0;
      if (ox + 1 < a.w) dst[1] = v1;
    });
    return;
  }
  T* yn = y + img * a.o;
  for_each_pair([&](int o, int oy, int ox, float v0, float v1) {
    const float b = bias ? bias[o] : 0.f;
    v0 += b;
    v1 += b;
    if (a.relu) {
      v0 = fmaxf(v0, 0.f);
      v1 = fmaxf(v1, 0.f);
    }
    T* dst = yn + (static_cast<long long>(o) * a.h + oy) * a.w + ox;
    if (a.pair_store) {  // ox even and w even: ox + 1 < w and the pair is 4-byte aligned
      *reinterpret_cast<uint32_t*>(dst) = mma::pack2<T>(v0, v1);
    } else {
      dst[0] = mma::from_float<T>(v0);
      if (ox + 1 < a.w) dst[1] = mma::from_float<T>(v1);
    }
  });
}

// y[n][o][p] = act(Σ_split partial[split][n][o][p] + bias[o]) rounded once to T; one thread per output element.
template <typename T>
__global__ void __launch_bounds__(256)
    split_sum_kernel(const float* __restrict__ partial, const float* __restrict__ bias, T* __restrict__ y, int splits,
                     int o_count, long long plane, long long total, int relu) {
  pdl_enter();
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float v = bias ? bias[(i / plane) % o_count] : 0.f;
    for (int s = 0; s < splits; ++s) v += partial[s * total + i];
    if (relu) v = fmaxf(v, 0.f);
    y[i] = mma::from_float<T>(v);
  }
}

}  // namespace dacpp::cuda::conv3x3
