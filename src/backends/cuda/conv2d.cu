// conv2d on CUDA as an implicit GEMM (no im2col buffer, no workspace):
//   Y[o, p] = bias[o] + Σ_k W[o, k] · X̂[k, p],   k = (c, ky, kx) over C·KH·KW,  p = (n, oy, ox) over N·OH·OW
// with X̂ gathered from x on the fly (zero outside the padded image). The batch is folded into the pixel axis, so
// one launch covers every image. Per K tile, a small shared table maps k to (c·H·W + ky·W + kx, ky, kx), so the
// gather costs one add and two bounds checks per element.
//
// conv2d_tc (bf16/f16): block tile 64 (or 32 when O <= 32) output channels × 128 pixels × 32 k, 8 warps of 32 × 32
//   (32 × 16), mma m16n8k16 with f32 accumulation; shared rows padded to 40 elements (conflict-free 32-bit fragment
//   loads).
// conv2d_simt (f32, exact): block tile 64 × 64 × 16, 256 threads of 4 × 4 outputs, f32 FMA.
// Epilogue (both): + bias (f32), optional ReLU, rounded once to the output dtype.
// im2col + cuBLASLt (conv_gemm below) runs any conv, banded when one image's im2col matrix exceeds 128 MiB (rows of
// the matrix padded to a multiple of 8 elements; gathered by a strided kernel, or through shared memory for stride-1
// convs on maps whose pixel count is not a multiple of 4); 1×1 convs are one GEMM on x itself. Row-shifted GEMMs
// (conv_row_gemm) run convs with vertical stride 1 from a matrix holding only the kx taps (a third of im2col's for
// 3×3): one accumulating GEMM per ky (into an f32 band buffer for bf16 / f16, rounded once). 3×3 stride-1 pad-1
// bf16/f16 convs with C % 16 == 0 (the DPT head and fusion blocks) can also run the direct kernel of
// conv3x3_tc.cuh (four tile variants), and on Hopper (CudaContext::hopper_mma) with C and O multiples of 64 the
// wgmma implicit GEMM of conv3x3_wgmma.cuh (64 or 128 output channels per block; fed by cp.async from three shifted
// copies, or by the tensor memory accelerator from one channels-innermost padded copy, with split K on small maps);
// 3×3 stride-2 pad-1 convs (the DPT heads' last reassemble stage) run the TMA form on a phase copy of the input.
// Choice: conv2d autotunes per shape on first use (choose_algo: every applicable algorithm timed with events, the
// fastest recorded per device for the process); while a CUDA graph is captured, or with DACPP_AUTOTUNE=0, it uses
// the fixed rules of heuristic_algo. conv2d_generic / conv2d_im2col_gemm / conv2d_row_gemm / conv2d_direct3x3
// (conv2d_variants.cuh) force one algorithm (benchmarks, tests).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/conv2d_variants.cuh"
#include "backends/cuda/conv3x3_tc.cuh"
#include "backends/cuda/conv3x3_wgmma.cuh"
#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/mma_util.cuh"
#include "backends/cuda/tma_map.h"
#include "backends/cuda/tuning.h"

namespace dacpp::cuda {
namespace {

using namespace mma;

struct ConvArgs {
  int n, c, h, w;       // input
  int o, kh, kw;        // weights
  int oh, ow;           // output
  int sh, sw, ph, pw;   // geometry
  int k_total;          // c·kh·kw
  long long p_total;    // n·oh·ow
  int relu;
};

constexpr int kInvalidKy = -(1 << 29);  // marks k >= k_total in the gather table: every row index falls outside

// Fills the gather table for k in [k0, k0 + bk) (threads 0..bk-1).
__device__ __forceinline__ void fill_k_table(const ConvArgs& a, int k0, int bk, int* koff, int* kyt, int* kxt) {
  const int kk = threadIdx.x;
  if (kk >= bk) return;
  const int k = k0 + kk;
  if (k >= a.k_total) {
    koff[kk] = 0;
    kyt[kk] = kInvalidKy;
    kxt[kk] = 0;
    return;
  }
  const int khw = a.kh * a.kw;
  const int ci = k / khw, r = k - ci * khw, ky = r / a.kw, kx = r - ky * a.kw;
  koff[kk] = ci * a.h * a.w + ky * a.w + kx;
  kyt[kk] = ky;
  kxt[kk] = kx;
}

// One gathered pixel column: its image base offset and the top-left input coordinate of its window.
struct Pixel {
  long long base;  // offset of x[n, 0, iy0, ix0] (may point outside the image; only used with valid offsets)
  int iy0, ix0;
  bool valid;
};

__device__ __forceinline__ Pixel decode_pixel(const ConvArgs& a, long long p) {
  Pixel px{0, 0, 0, p < a.p_total};
  if (!px.valid) return px;
  const long long per_img = static_cast<long long>(a.oh) * a.ow;
  const int nb = static_cast<int>(p / per_img);
  const int rem = static_cast<int>(p - nb * per_img);
  const int oy = rem / a.ow, ox = rem - oy * a.ow;
  px.iy0 = oy * a.sh - a.ph;
  px.ix0 = ox * a.sw - a.pw;
  px.base = static_cast<long long>(nb) * a.c * a.h * a.w + static_cast<long long>(px.iy0) * a.w + px.ix0;
  return px;
}

template <typename T>
__device__ __forceinline__ float gather(const T* x, const ConvArgs& a, const Pixel& px, int koff, int ky, int kx) {
  const int iy = px.iy0 + ky, ix = px.ix0 + kx;
  if (!px.valid || iy < 0 || iy >= a.h || ix < 0 || ix >= a.w) return 0.f;
  return to_float(x[px.base + koff]);
}

// Adds bias, applies the activation and stores output (o, p) if in range.
template <typename T>
__device__ __forceinline__ void store_out(T* y, const float* bias, const ConvArgs& a, int o, long long p, float v) {
  if (o >= a.o || p >= a.p_total) return;
  if (bias) v += bias[o];
  if (a.relu) v = fmaxf(v, 0.f);
  const long long per_img = static_cast<long long>(a.oh) * a.ow;
  const long long nb = p / per_img;
  y[(nb * a.o + o) * per_img + (p - nb * per_img)] = from_float<T>(v);
}

constexpr int kTcN = 128, kTcK = 32, kTcPad = 8, kTcThreads = 256;

// WM = warps along the output channels (1: 32-channel tile for O <= 32, 2: 64-channel tile); the 8 warps split
// the 128 pixels into 8 / WM columns of NT·8.
template <typename T, int WM>
__global__ void __launch_bounds__(kTcThreads)
    conv2d_tc(const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ bias, T* __restrict__ y,
              ConvArgs a) {
  pdl_enter();
  constexpr int kTcM = 32 * WM, NT = kTcN / (8 / WM) / 8, kS = kTcK + kTcPad;
  __shared__ __align__(16) T as[kTcM * kS];  // [m][k]
  __shared__ __align__(16) T bs[kTcN * kS];  // [pixel][k]
  __shared__ int koff[kTcK], kyt[kTcK], kxt[kTcK];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wm = warp % WM, wn = warp / WM;
  const int o0 = blockIdx.y * kTcM;
  const long long p0 = static_cast<long long>(blockIdx.x) * kTcN;
  const int my_n = tid % kTcN;
  const Pixel px = decode_pixel(a, p0 + my_n);
  float acc[2][NT][4] = {};

  for (int k0 = 0; k0 < a.k_total; k0 += kTcK) {
    fill_k_table(a, k0, kTcK, koff, kyt, kxt);
    __syncthreads();
    for (int i = 0; i < kTcM * kTcK / kTcThreads; ++i) {
      const int kk = tid % kTcK, m = tid / kTcK + i * (kTcThreads / kTcK);
      const int o = o0 + m, k = k0 + kk;
      as[m * kS + kk] = o < a.o && k < a.k_total ? w[static_cast<long long>(o) * a.k_total + k] : from_float<T>(0.f);
    }
    for (int i = 0; i < kTcN * kTcK / kTcThreads; ++i) {
      const int kk = tid / kTcN + i * (kTcThreads / kTcN);
      bs[my_n * kS + kk] = from_float<T>(gather(x, a, px, koff[kk], kyt[kk], kxt[kk]));
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kTcK / 16; ++ks) {
      uint32_t af[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        const T* r0 = as + (wm * 32 + mt * 16 + g) * kS + ks * 16 + 2 * t;
        af[mt][0] = *reinterpret_cast<const uint32_t*>(r0);
        af[mt][1] = *reinterpret_cast<const uint32_t*>(r0 + 8 * kS);
        af[mt][2] = *reinterpret_cast<const uint32_t*>(r0 + 8);
        af[mt][3] = *reinterpret_cast<const uint32_t*>(r0 + 8 * kS + 8);
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const T* c0 = bs + (wn * NT * 8 + nt * 8 + g) * kS + ks * 16 + 2 * t;
        const uint32_t b0 = *reinterpret_cast<const uint32_t*>(c0);
        const uint32_t b1 = *reinterpret_cast<const uint32_t*>(c0 + 8);
        mma16816<T>(acc[0][nt], af[0], b0, b1);
        mma16816<T>(acc[1][nt], af[1], b0, b1);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int o = o0 + wm * 32 + mt * 16 + g + (e >= 2 ? 8 : 0);
        const long long p = p0 + wn * NT * 8 + nt * 8 + 2 * t + (e & 1);
        store_out(y, bias, a, o, p, acc[mt][nt][e]);
      }
}

constexpr int kSM = 64, kSN = 64, kSK = 16, kSThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kSThreads)
    conv2d_simt(const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ bias, T* __restrict__ y,
                ConvArgs a) {
  pdl_enter();
  constexpr int kAS = kSM + 4;  // padded row of as (keeps float4 alignment)
  __shared__ __align__(16) float as[kSK * kAS];  // [k][m]
  __shared__ __align__(16) float bs[kSK * kSN];  // [k][pixel]
  __shared__ int koff[kSK], kyt[kSK], kxt[kSK];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int o0 = blockIdx.y * kSM;
  const long long p0 = static_cast<long long>(blockIdx.x) * kSN;
  const int my_n = tid % kSN;
  const Pixel px = decode_pixel(a, p0 + my_n);
  float acc[4][4] = {};

  for (int k0 = 0; k0 < a.k_total; k0 += kSK) {
    fill_k_table(a, k0, kSK, koff, kyt, kxt);
    __syncthreads();
    for (int i = 0; i < kSM * kSK / kSThreads; ++i) {
      const int kk = tid % kSK, m = tid / kSK + i * (kSThreads / kSK);
      const int o = o0 + m, k = k0 + kk;
      as[kk * kAS + m] = o < a.o && k < a.k_total ? to_float(w[static_cast<long long>(o) * a.k_total + k]) : 0.f;
    }
    for (int i = 0; i < kSN * kSK / kSThreads; ++i) {
      const int kk = tid / kSN + i * (kSThreads / kSN);
      bs[kk * kSN + my_n] = gather(x, a, px, koff[kk], kyt[kk], kxt[kk]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kSK; ++kk) {
      const float4 av = *reinterpret_cast<const float4*>(as + kk * kAS + ty * 4);
      const float4 bv = *reinterpret_cast<const float4*>(bs + kk * kSN + tx * 4);
      const float ar[4] = {av.x, av.y, av.z, av.w}, br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) store_out(y, bias, a, o0 + ty * 4 + i, p0 + tx * 4 + j, acc[i][j]);
}

// Tensor cores for bf16/f16, the exact f32 kernel for f32.
template <typename T>
void launch(const CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a) {
  constexpr bool tensor_cores = !std::is_same_v<T, float>;
  const bool narrow = a.o <= 32;  // a 32-channel tile wastes no mma rows on the 32-channel head convs
  const int bm = tensor_cores ? (narrow ? 32 : 64) : kSM, bn = tensor_cores ? kTcN : kSN;
  const long long gx = (a.p_total + bn - 1) / bn;
  DACPP_CHECK(gx < INT_MAX, ErrorCode::Unsupported, "conv2d (cuda): ", a.p_total, " output pixels exceed the grid");
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>((a.o + bm - 1) / bm));
  const T* xp = static_cast<const T*>(x.raw());
  const T* wp = static_cast<const T*>(w.raw());
  T* yp = static_cast<T*>(y.raw());
  if constexpr (tensor_cores) {
    if (narrow)
      launch_kernel(c, "conv2d_tc", conv2d_tc<T, 1>, grid, kTcThreads, 0, xp, wp, bias, yp, a);
    else
      launch_kernel(c, "conv2d_tc", conv2d_tc<T, 2>, grid, kTcThreads, 0, xp, wp, bias, yp, a);
  } else {
    launch_kernel(c, "conv2d_simt", conv2d_simt<T>, grid, kSThreads, 0, xp, wp, bias, yp, a);
  }
}

// Whether the direct kernel can split its 16-channel chunks `splits` ways here: 1, or 2 / 4 with at least that many
// chunks and images · splits within the grid's z limit.
bool direct_splits_fit(const ConvArgs& a, int splits) {
  return splits == 1 || ((splits == 2 || splits == 4) && a.c / 16 >= splits && a.n * splits <= 65535);
}

// The direct 3×3 kernel applies: bf16/f16, 3×3, stride 1, pad 1, C % 16 == 0.
bool direct3x3_applies(const Tensor& x, const ConvArgs& a) {
  return x.dtype() != DType::F32 && a.kh == 3 && a.kw == 3 && a.sh == 1 && a.sw == 1 && a.ph == 1 && a.pw == 1 &&
         a.c % 16 == 0 && a.n <= 65535;
}

constexpr int kDerivedConv3x3 = 1;  // CudaContext::derived kind: the direct kernel's tap-major weights

// w [O, C, 3, 3] in the direct kernel's tap-major layout (conv3x3::relayout_weights), built once per weight.
template <typename T>
std::shared_ptr<const void> tap_major_weights(CudaContext& c, const Tensor& w, const ConvArgs& a) {
  const long long n = static_cast<long long>(a.o) * a.c * 9;
  return c.derived(w, kDerivedConv3x3, sizeof(T) * static_cast<size_t>(n),
                   [&](void* dst) {
                     const unsigned blocks = static_cast<unsigned>(std::min<long long>((n + 255) / 256, 1 << 16));
                     conv3x3::relayout_weights<T><<<blocks, 256, 0, c.stream()>>>(
                         static_cast<const T*>(w.raw()), static_cast<T*>(dst), a.o, a.c);
                     DACPP_CUDA_LAUNCH_CHECK("conv3x3 weight relayout");
                   },
                   "conv3x3 tap-major weights");
}

// The direct kernel; splits > 1 (at most the 16-channel chunks, the images · splits within the grid's z limit):
// split K, its f32 partials in the scratch, then split_sum_kernel.
template <typename T, int WM, int TH>
void launch3x3(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a,
               int splits = 1) {
  const std::shared_ptr<const void> wt = tap_major_weights<T>(c, w, a);
  const bool pair_store = a.w % 2 == 0 && reinterpret_cast<uintptr_t>(y.raw()) % 4 == 0;
  conv3x3::Args d{a.c, a.h, a.w, a.o, (a.w + conv3x3::kTW - 1) / conv3x3::kTW, a.relu, pair_store ? 1 : 0, splits};
  const long long total = static_cast<long long>(a.n) * a.o * a.h * a.w;
  float* partial = splits > 1 ? static_cast<float*>(c.scratch(sizeof(float) * static_cast<size_t>(splits * total),
                                                              "conv3x3_tc split-K partial sums"))
                              : nullptr;
  const dim3 grid(static_cast<unsigned>(d.tiles_x * ((a.h + TH - 1) / TH)),
                  static_cast<unsigned>((a.o + 32 * WM - 1) / (32 * WM)), static_cast<unsigned>(a.n * splits));
  constexpr int smem = conv3x3::smem_bytes<WM, TH>();
  auto* kernel = splits > 1 ? &conv3x3::conv3x3_tc<T, WM, TH, true> : &conv3x3::conv3x3_tc<T, WM, TH, false>;
  DACPP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "conv3x3_tc: shared memory of ", smem, " bytes");
  launch_kernel(c, "conv3x3_tc", kernel, grid, conv3x3::kThreads, smem, static_cast<const uint16_t*>(x.raw()),
                static_cast<const uint16_t*>(wt.get()), bias, static_cast<T*>(y.raw()), partial, d);
  if (splits > 1)
    launch_kernel(c, "conv3x3_tc split sum", conv3x3::split_sum_kernel<T>, grid_for(c, total, 256), 256, 0, partial,
                  bias, static_cast<T*>(y.raw()), splits, a.o, static_cast<long long>(a.h) * a.w, total, a.relu);
}

// ---- im2col + cuBLASLt ----
// Per image, Y[O, P] = W[O, K] · X̂[K, P] (row-major). cuBLASLt sees column-major D[P, O] = X̂^T[P, K] · W^T[K, O]
// with X̂ stored [K, P] (ld P) and W stored [O, K] (ld K); D stored [O, P] per image is exactly NCHW. A 1×1,
// stride-1, unpadded conv uses x itself as X̂; anything else gathers X̂ into the context's scratch first: a chunk
// of whole images when one image's X̂ fits kMaxColBytes, else a band of output rows of one image at a time (the
// band's D rows are a contiguous run of each output plane: D offset by the band's first pixel, ld P). The bias
// runs along D's columns, which cuBLASLt's epilogue cannot broadcast, so bias and ReLU follow in one pass over y.
constexpr size_t kMaxColBytes = size_t{128} << 20;

// A piece of X̂: images [n0, n0 + nb), output rows [oy0, oy0 + rows), stored col[(image - n0)·K + k][band_p] with
// band_p = rows·ow. Each thread writes V consecutive pixels of one row of X̂ (one 16/8/4/2-byte store; V divides
// band_p, so every row of col starts aligned) and walks the rows of col by gridDim.y: its pixels' (oy, ox) are
// decoded once, a row's (image, c, ky, kx) once per row. (0.5 wrote one element per thread and one k per block:
// ~200k short blocks for the 148² head conv, timed at ~300 GB/s.)

template <typename T, int V>
__global__ void im2col_kernel(const T* __restrict__ x, T* __restrict__ col, ConvArgs a, int n0, int nb, int oy0,
                              int rows, long long ld) {
  pdl_enter();
  const int band_p = rows * a.ow, khw = a.kh * a.kw;
  const int p0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (p0 >= band_p) return;
  int iy0[V], ix0[V];
  {
    int oy = p0 / a.ow, ox = p0 - oy * a.ow;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      iy0[v] = (oy0 + oy) * a.sh - a.ph;
      ix0[v] = ox * a.sw - a.pw;
      if (++ox == a.ow) {
        ox = 0;
        ++oy;
      }
    }
  }
  const long long plane = static_cast<long long>(a.h) * a.w;
  const int kn = nb * a.k_total;  // rows of col
  for (int kr = blockIdx.y; kr < kn; kr += gridDim.y) {
    const int img = kr / a.k_total, k = kr - img * a.k_total;
    const int ci = k / khw, r = k - ci * khw, ky = r / a.kw, kx = r - ky * a.kw;
    const T* src = x + (static_cast<long long>(n0 + img) * a.c + ci) * plane;
    using Vec = typename VecOf<V * sizeof(T)>::type;
    alignas(sizeof(Vec)) T e[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int iy = iy0[v] + ky, ix = ix0[v] + kx;
      e[v] = static_cast<unsigned>(iy) < static_cast<unsigned>(a.h) && static_cast<unsigned>(ix) <
                     static_cast<unsigned>(a.w)
                 ? src[iy * a.w + ix]
                 : from_float<T>(0.f);
    }
    *reinterpret_cast<Vec*>(col + static_cast<long long>(kr) * ld + p0) = *reinterpret_cast<const Vec*>(e);
  }
}

// Stride-1 im2col through shared memory. A block stages, for one channel of one image at a time, the input rows that
// its R output rows read (zero-padded to W + 2·pw columns), then writes those output rows' pixels in each of the
// channel's KH·KW rows of X̂, one 16-byte store per V pixels. Every input element is read from memory once (the
// strided kernel above reads it KH·KW times, 2 bytes at a time), and with X̂'s rows padded to a multiple of V
// (`ld`) the stores stay 16-byte even where OH·OW is odd (37², 19²: the strided kernel stored 2 bytes there).
// R·OW is a multiple of V whenever the grid has more than one block along x (im2col_s1 chooses R so), so each
// block's run in a row of X̂ starts aligned; the last block's run may end mid-vector (scalar tail).
template <typename T>
__global__ void __launch_bounds__(256) im2col_s1_kernel(const T* __restrict__ x, T* __restrict__ col, ConvArgs a,
                                                        int n0, int nb, int oy0, int rows, long long ld, int R) {
  pdl_enter();
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  extern __shared__ uint4 im2col_smem[];
  T* s = reinterpret_cast<T*>(im2col_smem);
  const int sw = a.w + 2 * a.pw, khw = a.kh * a.kw;
  const int r0 = blockIdx.x * R, rb = min(R, rows - r0);
  const int in_count = (rb + a.kh - 1) * sw, seg = rb * a.ow;
  const long long plane = static_cast<long long>(a.h) * a.w;
  const int iy_base = oy0 + r0 - a.ph;
  for (int ic = blockIdx.y; ic < nb * a.c; ic += gridDim.y) {
    const int img = ic / a.c, ci = ic - img * a.c;
    const T* src = x + (static_cast<long long>(n0 + img) * a.c + ci) * plane;
    __syncthreads();  // the previous channel's stage is read
    for (int i = threadIdx.x; i < in_count; i += blockDim.x) {
      const int r = i / sw, iy = iy_base + r, ix = i - r * sw - a.pw;
      s[i] = static_cast<unsigned>(iy) < static_cast<unsigned>(a.h) && static_cast<unsigned>(ix) <
                     static_cast<unsigned>(a.w)
                 ? src[static_cast<long long>(iy) * a.w + ix]
                 : from_float<T>(0.f);
    }
    __syncthreads();
    T* dst0 = col + (static_cast<long long>(img) * a.k_total + static_cast<long long>(ci) * khw) * ld +
              static_cast<long long>(r0) * a.ow;
    for (int t = 0; t < khw; ++t) {
      const int ky = t / a.kw, kx = t - ky * a.kw;
      T* dst = dst0 + static_cast<long long>(t) * ld;
      for (int e = threadIdx.x * V; e < seg; e += blockDim.x * V) {
        int r = e / a.ow, ox = e - r * a.ow;
        const int live = min(V, seg - e);  // past the run's end there is no staged row to read
        alignas(16) T v[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
          v[j] = j < live ? s[(r + ky) * sw + ox + kx] : from_float<T>(0.f);
          if (++ox == a.ow) {
            ox = 0;
            ++r;
          }
        }
        if (live == V) {
          *reinterpret_cast<uint4*>(dst + e) = *reinterpret_cast<const uint4*>(v);
        } else {
          for (int j = 0; j < live; ++j) dst[e + j] = v[j];
        }
      }
    }
  }
}

// y[n, o, p] = act(y + bias[o]): grid x over the plane's pixels in runs of V (one 16-byte access per thread when V
// divides the plane), y over channels, z over images (grid-strided), so the channel is known per block and no
// element needs an index division.
template <typename T, int V>
__global__ void channel_bias_act_kernel(T* y, const float* __restrict__ bias, int n, int o_count, long long plane,
                                        int relu) {
  pdl_enter();
  using Vec = typename VecOf<V * sizeof(T)>::type;
  for (int img = blockIdx.z; img < n; img += gridDim.z) {
    for (int o = blockIdx.y; o < o_count; o += gridDim.y) {
      T* row = y + (static_cast<long long>(img) * o_count + o) * plane;
      const float b = bias ? bias[o] : 0.f;
      for (long long i = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) * V; i < plane;
           i += static_cast<long long>(gridDim.x) * blockDim.x * V) {
        alignas(sizeof(Vec)) T e[V];
        *reinterpret_cast<Vec*>(e) = *reinterpret_cast<const Vec*>(row + i);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          float f = to_float(e[v]) + b;
          if (relu) f = fmaxf(f, 0.f);
          e[v] = from_float<T>(f);
        }
        *reinterpret_cast<Vec*>(row + i) = *reinterpret_cast<const Vec*>(e);
      }
    }
  }
}

template <typename T>
void bias_act(CudaContext& c, T* y, const float* bias, const ConvArgs& a, long long plane) {
  with_vector_width<T>(plane, y, [&](auto vec) {
    constexpr int V = decltype(vec)::value;
    const dim3 grid(static_cast<unsigned>(std::min<long long>((plane / V + 255) / 256, 1 << 20)),
                    static_cast<unsigned>(std::min(a.o, 65535)), static_cast<unsigned>(std::min(a.n, 65535)));
    launch_kernel(c, "conv2d_bias_act", channel_bias_act_kernel<T, V>, grid, 256, 0, y, bias, a.n, a.o, plane, a.relu);
  });
}

// ---- row-shifted GEMMs (vertical stride 1) ----
// The ky taps need not be gathered when the conv moves one input row per output row: with only the kx taps gathered,
//   X̃[c·KW + kx, r, ox] = x[c, oy0 - ph + r, ox·sw - pw + kx]   (zero outside the image), r in [0, R + KH - 1),
// output rows [oy0, oy0 + R) are  Y[o, oy, ox] = Σ_ky Σ_(c,kx) W[o, c, ky, kx] · X̃[c·KW + kx, oy - oy0 + ky, ox]:
// KH GEMMs with K = C·KW, the ky-th reading X̃ offset by ky rows (ld (R + KH - 1)·OW) against a ky-major weight copy
// Wk[ky, o, c·KW + kx] (built once per weight, CudaContext::derived), each after the first adding into D. X̃ is
// about KW / (KH·KW) of im2col's X̂ (a third for 3×3), so a third of the gather traffic; chunked / banded as
// conv_gemm is, against the same kMaxColBytes.

size_t rowcol_bytes_per_image(const ConvArgs& a, DType dt) {
  return dtype_nbytes(dt, static_cast<int64_t>(a.c) * a.kw * (a.oh + a.kh - 1) * a.ow);
}

bool row_gemm_applies(const ConvArgs& a) { return a.sh == 1 && a.kh > 1; }

// A piece of X̃: images [n0, n0 + nb), input rows oy0 - ph + [0, rows_in), stored col[(image - n0)·C·KW + c·KW + kx]
// [rows_in·OW]. Each thread writes V consecutive ox of one row (V divides OW, so a run never crosses a row) and
// walks the rows of col by gridDim.y.
template <typename T, int V>
__global__ void rowcol_kernel(const T* __restrict__ x, T* __restrict__ col, ConvArgs a, int n0, int nb, int oy0,
                              int rows_in) {
  pdl_enter();
  const int plane_out = rows_in * a.ow;
  const int e0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (e0 >= plane_out) return;
  const int r = e0 / a.ow, ox0 = e0 - r * a.ow;
  const int iy = oy0 - a.ph + r;
  const bool row_ok = static_cast<unsigned>(iy) < static_cast<unsigned>(a.h);
  const long long plane = static_cast<long long>(a.h) * a.w;
  const int ckw = a.c * a.kw, kn = nb * ckw;
  using Vec = typename VecOf<V * sizeof(T)>::type;
  for (int kr = blockIdx.y; kr < kn; kr += gridDim.y) {
    const int img = kr / ckw, k = kr - img * ckw;
    const int ci = k / a.kw, kx = k - ci * a.kw;
    const T* src = x + (static_cast<long long>(n0 + img) * a.c + ci) * plane + (row_ok ? iy : 0) * a.w;
    alignas(sizeof(Vec)) T e[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int ix = (ox0 + v) * a.sw - a.pw + kx;
      e[v] = row_ok && static_cast<unsigned>(ix) < static_cast<unsigned>(a.w) ? src[ix] : from_float<T>(0.f);
    }
    *reinterpret_cast<Vec*>(col + static_cast<long long>(kr) * plane_out + e0) = *reinterpret_cast<const Vec*>(e);
  }
}

// dst[ky, o, c·KW + kx] = w[o, c, ky, kx].
template <typename T>
__global__ void ky_major_weights_kernel(const T* __restrict__ w, T* __restrict__ dst, int o_count, int c_count,
                                        int kh, int kw) {
  const long long n = static_cast<long long>(o_count) * c_count * kh * kw;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int kx = static_cast<int>(i % kw);
    long long rest = i / kw;
    const int ky = static_cast<int>(rest % kh);
    rest /= kh;
    const int ci = static_cast<int>(rest % c_count);
    const long long o = rest / c_count;
    dst[((ky * static_cast<long long>(o_count) + o) * c_count + ci) * kw + kx] = w[i];
  }
}

constexpr int kDerivedKyMajor = 2;  // CudaContext::derived kind: row_gemm's ky-major weights

template <typename T>
void relayout_ky_major(CudaContext& c, const Tensor& w, const ConvArgs& a, void* dst) {
  const long long n = static_cast<long long>(a.o) * a.c * a.kh * a.kw;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((n + 255) / 256, 1 << 16));
  ky_major_weights_kernel<T><<<blocks, 256, 0, c.stream()>>>(static_cast<const T*>(w.raw()), static_cast<T*>(dst),
                                                              a.o, a.c, a.kh, a.kw);
  DACPP_CUDA_LAUNCH_CHECK("conv2d ky-major weight relayout");
}

size_t ky_major_bytes(const ConvArgs& a, DType dt) {
  return dtype_nbytes(dt, static_cast<int64_t>(a.o) * a.c * a.kh * a.kw);
}

template <typename T>
void rowcol(CudaContext& c, const T* x, T* col, const ConvArgs& a, int n0, int nb, int oy0, int rows_in) {
  const int plane_out = rows_in * a.ow;
  const int kn = nb * a.c * a.kw;
  with_vector_width<T>(a.ow, col, [&](auto vec) {
    constexpr int V = decltype(vec)::value;
    const int gx = (plane_out / V + 255) / 256;
    const int gy = std::max(1, std::min({kn, 65535, (16 * c.sm_count() + gx - 1) / gx}));
    launch_kernel(c, "conv2d_rowcol", rowcol_kernel<T, V>, dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)),
                  256, 0, x, col, a, n0, nb, oy0, rows_in);
  });
}

// y[n0 + i, o, oy0·OW + j] = act(d[i, o, j] + bias[o]) for j < m: a band of f32 partial sums (row-shifted GEMMs of a
// bf16 / f16 conv) rounded once into y. grid: x over j, y over o (bounded by 65535), z over the chunk's images.
template <typename T>
__global__ void store_band_kernel(const float* __restrict__ d, const float* __restrict__ bias, T* __restrict__ y,
                                  int o_count, long long m, long long plane, long long y_offset, int relu) {
  pdl_enter();
  const int img = blockIdx.z;
  for (int o = blockIdx.y; o < o_count; o += gridDim.y) {
    const float* src = d + (static_cast<long long>(img) * o_count + o) * m;
    T* dst = y + (static_cast<long long>(img) * o_count + o) * plane + y_offset;
    const float b = bias ? bias[o] : 0.f;
    for (long long j = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; j < m;
         j += static_cast<long long>(gridDim.x) * blockDim.x) {
      float f = src[j] + b;
      if (relu) f = fmaxf(f, 0.f);
      dst[j] = from_float<T>(f);
    }
  }
}

template <typename T>
void store_band(CudaContext& c, const float* d, const float* bias, T* y, const ConvArgs& a, int nb, long long m,
                long long plane, long long y_offset) {
  const unsigned gx = static_cast<unsigned>(std::min<long long>((m + 255) / 256, 4 * c.sm_count()));
  const unsigned gy = static_cast<unsigned>(std::min(a.o, 65535));
  launch_kernel(c, "conv2d row-shifted store", store_band_kernel<T>, dim3(gx, gy, static_cast<unsigned>(nb)), 256, 0, d,
                bias, y, a.o, m, plane, y_offset, a.relu);
}

// For bf16 / f16 the KH GEMMs accumulate into an f32 band buffer (GemmSpec::d_f32) behind X̃ in the scratch, rounded
// once into y by store_band with the bias and ReLU: adding into a 16-bit D rounded the partial sums KH - 1 times
// (DA2-L bf16 depth 1.07e-2 from the official f32 in session 8 where the tuner chose this path; 9.9e-3 without it).
// The band buffer counts against kMaxColBytes with X̃.
template <typename T>
void conv_row_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a,
                   const std::string& what) {
  constexpr bool f32_sums = !std::is_same_v<T, float>;
  const long long p = static_cast<long long>(a.oh) * a.ow;
  const int ckw = a.c * a.kw;
  const size_t per_row = dtype_nbytes(x.dtype(), static_cast<int64_t>(ckw) * a.ow);  // one input row of X̃
  const size_t d_row = f32_sums ? sizeof(float) * static_cast<size_t>(a.o) * a.ow : 0;  // f32 sums per output row
  const size_t per_img = rowcol_bytes_per_image(a, x.dtype()) + d_row * a.oh;
  const bool banded = per_img > kMaxColBytes;
  const int chunk = banded ? 1 : static_cast<int>(std::min<size_t>({static_cast<size_t>(a.n), kMaxColBytes / per_img,
                                                                      size_t{65535}}));  // store_band's grid.z
  const size_t halo = per_row * (a.kh - 1);
  const long long rows_fit =
      halo < kMaxColBytes ? static_cast<long long>((kMaxColBytes - halo) / (per_row + d_row)) : 1;
  const int band_rows = banded ? static_cast<int>(std::clamp<long long>(rows_fit, 1, a.oh)) : a.oh;
  const size_t col_raw = banded ? per_row * static_cast<size_t>(band_rows + a.kh - 1)
                                : rowcol_bytes_per_image(a, x.dtype()) * static_cast<size_t>(chunk);
  const size_t col_bytes = (col_raw + 255) / 256 * 256;
  const size_t sums_bytes = (d_row * static_cast<size_t>(band_rows) * static_cast<size_t>(chunk) + 255) / 256 * 256;
  // A model's weight keeps its ky-major copy (CudaContext::derived); a borrowed one (no owned storage) gets it
  // behind X̃ and the sums in the same scratch, which a second scratch() call would replace.
  const size_t wk_bytes = w.storage() ? 0 : ky_major_bytes(a, x.dtype());
  auto* mem = static_cast<char*>(c.scratch(col_bytes + sums_bytes + wk_bytes, "conv2d row-shifted X"));
  T* col = reinterpret_cast<T*>(mem);
  float* sums = f32_sums ? reinterpret_cast<float*>(mem + col_bytes) : nullptr;
  std::shared_ptr<const void> wk;
  if (w.storage()) {
    wk = c.derived(w, kDerivedKyMajor, ky_major_bytes(a, x.dtype()),
                   [&](void* dst) { relayout_ky_major<T>(c, w, a, dst); }, "conv2d ky-major weights");
  } else {
    relayout_ky_major<T>(c, w, a, mem + col_bytes + sums_bytes);
    wk = std::shared_ptr<const void>(mem + col_bytes + sums_bytes, [](const void*) {});
  }
  const auto* wkp = static_cast<const T*>(wk.get());
  const T* xp = static_cast<const T*>(x.raw());
  T* yp = static_cast<T*>(y.raw());
  GemmSpec g;
  g.n = a.o;
  g.k = ckw;
  g.ldb = ckw;
  g.dtype = x.dtype();
  g.d_f32 = f32_sums;
  for (int n0 = 0; n0 < a.n; n0 += chunk) {
    const int nb = std::min(chunk, a.n - n0);
    for (int oy0 = 0; oy0 < a.oh; oy0 += band_rows) {
      const int rows = std::min(band_rows, a.oh - oy0), rows_in = rows + a.kh - 1;
      const long long plane_in = static_cast<long long>(rows_in) * a.ow;
      rowcol<T>(c, xp, col, a, n0, nb, oy0, rows_in);
      g.m = static_cast<long long>(rows) * a.ow;
      g.lda = plane_in;
      g.stride_a = static_cast<int64_t>(ckw) * plane_in;
      g.batch = nb;
      // f32 sums: [nb, O, m] packed; else y itself (the band is a run of each output plane).
      g.ldd = f32_sums ? g.m : p;
      g.stride_d = static_cast<int64_t>(a.o) * g.ldd;
      void* d = f32_sums ? static_cast<void*>(sums)
                         : static_cast<void*>(yp + static_cast<long long>(n0) * a.o * p +
                                              static_cast<long long>(oy0) * a.ow);
      for (int ky = 0; ky < a.kh; ++ky) {
        g.accumulate = ky > 0;
        gemm(c, g, col + static_cast<long long>(ky) * a.ow, wkp + static_cast<long long>(ky) * a.o * ckw, d, nullptr,
             what.c_str());
      }
      if (f32_sums)
        store_band<T>(c, sums, bias, yp + static_cast<long long>(n0) * a.o * p, a, nb, g.m, p,
                      static_cast<long long>(oy0) * a.ow);
    }
  }
  if (!f32_sums && (bias || a.relu)) bias_act<T>(c, yp, bias, a, p);
}

bool is_pointwise(const ConvArgs& a) {
  return a.kh == 1 && a.kw == 1 && a.sh == 1 && a.sw == 1 && a.ph == 0 && a.pw == 0;
}

size_t col_bytes_per_image(const ConvArgs& a, DType dt) {
  return dtype_nbytes(dt, static_cast<int64_t>(a.k_total) * a.oh * a.ow);
}

// Without tuning, the GEMM path takes 1×1 convs and convs whose X̂ of one image fits kMaxColBytes (it can run any
// conv, banded; the tuner tries it everywhere).
bool gemm_preferred(const Tensor& x, const ConvArgs& a) {
  return is_pointwise(a) || col_bytes_per_image(a, x.dtype()) <= kMaxColBytes;
}

// Rows of X̂ are `ld` elements apart: the band's pixel count rounded up to 8, so every row starts 16-byte aligned
// (the GEMM then reads A with 16-byte-aligned columns) whatever OH·OW is.
long long col_ld(long long band_p) { return (band_p + 7) / 8 * 8; }

constexpr size_t kIm2colSmemBytes = 48 << 10;

// The shared-memory kernel, for a stride-1 conv whose band of output pixels is not a multiple of 4 (where the
// strided kernel stores 2 or 4 bytes at a time); false when it does not apply (that, a row of the image too wide to
// stage KH rows of in 48 KiB, or X̂ not 16-byte aligned). Measured on the H200 in session 7 (im2col + GEMM per conv
// in DA2-L's tuning log; the strided kernel's times from a run whose tuning still timed on the host clock, the
// shared-memory kernel's from one timing GPU work alone, which can only lower a time): 37² 1024→256 3×3 129 → 94 µs;
// but where the pixel count is a multiple of 4 the strided kernel, whose repeated gathers hit L1, was faster even
// so (148² 256→256: 105 vs 127 µs; 296² 256→128: 384 vs 473 µs; 518² 128→32: 692 vs 828 µs), so those keep it.
template <typename T>
bool im2col_s1(CudaContext& c, const T* x, T* col, const ConvArgs& a, int n0, int nb, int oy0, int rows,
               long long ld) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  if (a.sh != 1 || a.sw != 1 || (static_cast<long long>(rows) * a.ow) % 4 == 0 ||
      reinterpret_cast<uintptr_t>(col) % 16 != 0 || ld % V != 0)
    return false;
  const int q = V / std::gcd(a.ow, V);  // R·OW % V == 0 when q divides R
  const long long row_bytes = static_cast<long long>(a.w + 2 * a.pw) * static_cast<long long>(sizeof(T));
  const long long fit = static_cast<long long>(kIm2colSmemBytes) / row_bytes - (a.kh - 1);  // output rows that fit
  long long r = (2048 + a.ow - 1) / a.ow;  // ~2048 pixels per block and row of X̂
  r = (r + q - 1) / q * q;
  if (r >= rows && rows <= fit) {
    r = rows;  // one block along x: no alignment condition
  } else {
    r = std::min(r, fit / q * q);
    if (r < q) return false;
  }
  const int R = static_cast<int>(r);
  const size_t smem = static_cast<size_t>((R + a.kh - 1) * row_bytes);
  const unsigned gx = static_cast<unsigned>((rows + R - 1) / R);
  const unsigned gy = static_cast<unsigned>(std::min(nb * a.c, 65535));
  launch_kernel(c, "conv2d_im2col_s1", im2col_s1_kernel<T>, dim3(gx, gy), 256, smem, x, col, a, n0, nb, oy0, rows, ld,
                R);
  return true;
}

template <typename T>
void im2col(CudaContext& c, const T* x, T* col, const ConvArgs& a, int n0, int nb, int oy0, int rows, long long ld) {
  if (im2col_s1<T>(c, x, col, a, n0, nb, oy0, rows, ld)) return;
  const int band_p = rows * a.ow;
  const int kn = nb * a.k_total;
  with_vector_width<T>(band_p, col, [&](auto vec) {  // ld is a multiple of 8: every row starts aligned as col does
    constexpr int V = decltype(vec)::value;
    const int gx = (band_p / V + 255) / 256;
    // ~16 blocks per multiprocessor in all; each walks kn / gridDim.y rows of col.
    const int gy = std::max(1, std::min({kn, 65535, (16 * c.sm_count() + gx - 1) / gx}));
    launch_kernel(c, "conv2d_im2col", im2col_kernel<T, V>, dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)),
                  256, 0, x, col, a, n0, nb, oy0, rows, ld);
  });
}

template <typename T>
void conv_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a,
               const std::string& what) {
  const long long p = static_cast<long long>(a.oh) * a.ow;
  const bool pointwise = is_pointwise(a);
  const size_t per_img = dtype_nbytes(x.dtype(), static_cast<int64_t>(a.k_total) * col_ld(p));  // X̂ of an image
  const size_t per_row = col_bytes_per_image(a, x.dtype()) / static_cast<size_t>(a.oh);
  const bool banded = !pointwise && per_img > kMaxColBytes;
  const int chunk = pointwise || banded ? (pointwise ? a.n : 1)
                                        : static_cast<int>(std::min<size_t>(a.n, kMaxColBytes / per_img));
  const int band_rows = banded ? static_cast<int>(std::max<size_t>(1, kMaxColBytes / per_row)) : a.oh;
  const size_t band_bytes =
      dtype_nbytes(x.dtype(), static_cast<int64_t>(a.k_total) * col_ld(static_cast<long long>(band_rows) * a.ow));
  GemmSpec g;
  g.n = a.o;
  g.k = a.k_total;
  g.ldb = a.k_total;
  g.ldd = p;
  g.stride_d = static_cast<int64_t>(a.o) * p;
  g.dtype = x.dtype();
  T* col = pointwise ? nullptr
                     : static_cast<T*>(c.scratch(banded ? band_bytes : per_img * static_cast<size_t>(chunk),
                                                 "conv2d im2col"));
  const T* xp = static_cast<const T*>(x.raw());
  T* yp = static_cast<T*>(y.raw());
  for (int n0 = 0; n0 < a.n; n0 += chunk) {
    const int nb = std::min(chunk, a.n - n0);
    for (int oy0 = 0; oy0 < a.oh; oy0 += band_rows) {
      const int rows = std::min(band_rows, a.oh - oy0);
      const long long band_p = static_cast<long long>(rows) * a.ow;
      const T* src = xp + static_cast<long long>(n0) * a.c * a.h * a.w;
      long long ld = band_p;
      if (!pointwise) {
        ld = col_ld(band_p);
        im2col<T>(c, xp, col, a, n0, nb, oy0, rows, ld);
        src = col;
      }
      g.m = band_p;
      g.lda = ld;
      g.stride_a = static_cast<int64_t>(a.k_total) * ld;
      g.batch = nb;
      gemm(c, g, src, w.raw(), yp + static_cast<long long>(n0) * a.o * p + static_cast<long long>(oy0) * a.ow,
           nullptr, what.c_str());
    }
  }
  if (bias || a.relu) {
    bias_act<T>(c, yp, bias, a, p);
  }
}

// ---- 1×1 convs on maps of an odd pixel count: the GEMM on a pitched copy ----
// A 1×1 conv is one GEMM on x itself (conv_gemm), but with P = H·W not a multiple of 8 the planes' rows (x's and
// y's) are not 16 bytes apart and cuBLASLt has only unaligned kernels for it: DA2-L's refinenet out_convs at 19²
// and 37² (256 → 256) ran an sm_75 kernel with a split-K reduce and the bias pass, ~28 and ~20 µs on the head's
// chain. Here x's planes are copied to rows of P rounded up to 8 (zero tail), the GEMM runs on them into a pitched
// D, and the copy out takes the bias and ReLU. The tuner times it against the plain GEMM. (im2col makes the same
// pitched rows for a 1×1 conv, but through its shared-memory kernel for odd pixel counts: 8.0 / 10.8 µs in all at
// DA2-L's 19² / 37² against 7.05 / 9.6 with this plain copy, session 25.)
// y[r, j] = act(d[r, j] + bias[r % o]) for j < p: D's rows ld apart, y's p apart (r over images · O).
template <typename T>
__global__ void unpitch_bias_act_kernel(const T* __restrict__ d, const float* __restrict__ bias, T* __restrict__ y,
                                        long long rows, int o, int p, int ld, int relu) {
  pdl_enter();
  const long long total = rows * p;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / p;
    const int j = static_cast<int>(i - r * p);
    float v = to_float(d[r * ld + j]) + (bias ? bias[r % o] : 0.f);
    if (relu) v = fmaxf(v, 0.f);
    y[i] = from_float<T>(v);
  }
}

// Applies to pointwise convs whose pixel count is not a multiple of 8.
bool gemm_pitched_applies(const ConvArgs& a) {
  return is_pointwise(a) && (static_cast<long long>(a.h) * a.w) % 8 != 0;
}

template <typename T>
void conv_gemm_pitched(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y,
                       const ConvArgs& a, const std::string& what) {
  const int p = a.h * a.w;
  const int ld = static_cast<int>(col_ld(p));
  const size_t per_img = dtype_nbytes(x.dtype(), static_cast<int64_t>(a.c + a.o) * ld);
  const int chunk = static_cast<int>(std::max<size_t>(1, std::min<size_t>(a.n, kMaxColBytes / per_img)));
  T* xp = static_cast<T*>(c.scratch(per_img * static_cast<size_t>(chunk), "conv2d pitched 1x1"));
  T* dp = xp + static_cast<long long>(chunk) * a.c * ld;
  GemmSpec g;
  g.m = ld;
  g.n = a.o;
  g.k = a.c;
  g.lda = ld;
  g.ldb = a.c;
  g.ldd = ld;
  g.stride_a = static_cast<int64_t>(a.c) * ld;
  g.stride_d = static_cast<int64_t>(a.o) * ld;
  g.dtype = x.dtype();
  for (int n0 = 0; n0 < a.n; n0 += chunk) {
    const int nb = std::min(chunk, a.n - n0);
    const long long in_rows = static_cast<long long>(nb) * a.c, out_rows = static_cast<long long>(nb) * a.o;
    pitch_rows(c, x.dtype(), static_cast<const T*>(x.raw()) + static_cast<long long>(n0) * a.c * p, xp, in_rows, p, ld);
    g.batch = nb;
    gemm(c, g, xp, w.raw(), dp, nullptr, what.c_str());
    launch_kernel(c, "conv2d_unpitch_bias_act", unpitch_bias_act_kernel<T>, grid_for(c, out_rows * p, 256), 256, 0,
                  static_cast<const T*>(dp), bias, static_cast<T*>(y.raw()) + static_cast<long long>(n0) * a.o * p,
                  out_rows, a.o, p, ld, a.relu);
  }
}

// ---- Hopper implicit GEMM (conv3x3_wgmma.cuh) ----
bool wgmma3x3_applies(const CudaContext& c, const Tensor& x, const ConvArgs& a) {
  return c.hopper_mma() && direct3x3_applies(x, a) && a.oh == a.h && a.ow == a.w && a.c >= 64 && a.c % 64 == 0 &&
         a.o % 64 == 0;
}

// The TMA kernel's pixel pitch: W + 2 for the stride-1 padded copy, OW + 1 for the stride-2 phase copy.
int tma_pitch(const ConvArgs& a) {
  return a.sh == 2 ? conv3x3_wg::phase_pitch_of(a.ow) : conv3x3_wg::padded_pitch_of(a.w);
}

// The stride-2 form (3×3, stride 2, pad 1; the DPT heads' last reassemble stage): the TMA kernel on the phase copy
// (phase_pad_nhwc_kernel), one tap per step, whole images (no bands: one image's copy within kMaxColBytes).
bool wgmma3x3_s2_applies(const CudaContext& c, const Tensor& x, const ConvArgs& a) {
  const size_t copy = sizeof(uint16_t) * static_cast<size_t>(conv3x3_wg::phase_plane_of(a.oh, a.ow)) * a.c;
  return c.hopper_mma() && x.dtype() != DType::F32 && a.kh == 3 && a.kw == 3 && a.sh == 2 && a.sw == 2 && a.ph == 1 &&
         a.pw == 1 && a.c >= 64 && a.c % 64 == 0 && a.o % 64 == 0 && a.n <= 65535 && copy <= kMaxColBytes;
}

constexpr int kDerivedWgmmaTaps = 3;  // CudaContext::derived kind: w as [tap][O][C]

// The tap weights [tap][O][C] of w (CudaContext::derived: made once per weight).
template <typename T>
std::shared_ptr<const void> tap_weights(CudaContext& c, const Tensor& w, const ConvArgs& a) {
  const long long wn = 9LL * a.o * a.c;
  const cudaStream_t st = c.stream();
  return c.derived(
      w, kDerivedWgmmaTaps, sizeof(T) * static_cast<size_t>(wn),
      [&](void* dst) {
        conv3x3_wg::tap_weights_kernel<T>
            <<<grid_for(c, wn, 256), 256, 0, st>>>(static_cast<const T*>(w.raw()), static_cast<T*>(dst), a.o, a.c);
        DACPP_CUDA_LAUNCH_CHECK("conv3x3_wgmma tap weights");
      },
      "conv3x3 wgmma tap weights");
}

// How the wgmma convs split a call so that their padded / shifted copies fit kMaxColBytes: `band` output rows per
// launch (the whole image when one image fits), `chunk` images per launch (1 when banded).
struct CopyPlan {
  int band, chunk;
};
// bytes(images, rows): the copies' size for that many images and output rows.
template <typename Bytes>
CopyPlan copy_plan(const ConvArgs& a, Bytes bytes) {
  int band = a.oh;
  while (band > 1 && bytes(1, band) > kMaxColBytes) band = (band + 1) / 2;
  const int chunk =
      band < a.oh ? 1
                  : static_cast<int>(std::clamp<size_t>(kMaxColBytes / bytes(1, band), 1, static_cast<size_t>(a.n)));
  return {band, chunk};
}

// How many blocks share each tile's K steps in the split TMA conv (64·WG output channels per block): enough to give
// every SM a block where the unsplit grid has fewer blocks than SMs, at most 8 and at least 8 steps each; 1 = no
// split (the tuner then does not offer it; conv2d_wgmma3x3 forcing it splits in 2). (As many as fit one block per
// SM instead, session 18: the tuner took that count for two of DA2-L's shapes, 4-6 µs faster alone, and the
// forward did not move: 3.5389 / 3.5369 against 3.5352 / 3.5374 ms.)
int tma_splits(const CudaContext& c, const ConvArgs& a, int wg = 1) {
  const long long tiles = (static_cast<long long>(a.oh) * tma_pitch(a) + conv3x3_wg::kTileN - 1) / conv3x3_wg::kTileN;
  const long long blocks = tiles * (a.o / (64 * wg)) * a.n, steps = 9LL * (a.c / 64), sms = c.sm_count();
  if (blocks >= sms) return 1;
  return static_cast<int>(std::min<long long>({(sms + blocks - 1) / blocks, 8, steps / 8}));
}

// residual_conv_pair's buffers for the unsplit TMA kernel on whole images (one launch): where the padded copy of x
// goes (instead of the scratch) and whether it holds relu(x); or x is that copy already (no copy made, no scratch
// used); and whether y is the next conv's padded copy (conv3x3_wg::store_tile_padded) instead of an NCHW map.
struct PaddedIo {
  void* copy = nullptr;
  bool relu_in = false;
  const void* input = nullptr;
  void* output = nullptr;
  bool any() const { return copy != nullptr || input != nullptr || output != nullptr; }
};

// TMA = false: conv3x3_wgmma_kernel on three kx-shifted copies (pitch W rounded to 8). TMA = true:
// conv3x3_wgmma_tma_kernel on one zero-padded, channels-innermost copy (pixel pitch W + 2), read through two tensor
// maps; SPLIT: its split-K form (tma_splits blocks per tile, at least 2, then split_reduce_kernel).
// `up` (TMA only): x is the bilinear source of the conv's input (conv2d_upsampled), resampled into the padded copy.
// KX (TMA only, no split): taps per K step, 1 or 3 (a kernel row's taps sharing one pixel tile).
// Stride 2 (a.sh == 2; TMA, KX = 1, no `up`): the TMA kernel on the phase copy (phase_pad_nhwc_kernel), whole images.
// io (TMA, unsplit, stride 1, whole images in one launch): residual_conv_pair's given padded copies (PaddedIo).
template <typename T, int WG, int STAGES, bool TMA, bool SPLIT = false, int KX = 1, int NT = conv3x3_wg::kTileN>
void launch_wgmma3x3(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a,
                     const conv3x3_wg::Upsample* up = nullptr, const PaddedIo& io = {}) {
  static_assert(TMA || !SPLIT, "only the TMA kernel splits K");
  static_assert(KX == 1 || (TMA && !SPLIT), "row steps only in the unsplit TMA kernel");
  static_assert(NT == conv3x3_wg::kTileN || (TMA && !SPLIT && KX == 3), "wide pixel tiles only in row steps");
  namespace wg3 = conv3x3_wg;
  const bool s2 = a.sh == 2;
  DACPP_CHECK(!s2 || (TMA && KX == 1 && up == nullptr), ErrorCode::Internal,
              "conv3x3_wgmma: stride 2 runs only the TMA kernel with one tap per step");
  const std::shared_ptr<const void> wt = tap_weights<T>(c, w, a);
  constexpr int copies = TMA ? 1 : 3;
  const int pitch = TMA ? tma_pitch(a) : wg3::pitch_of(a.w);
  const auto plane_of = [&](int rows) {
    return s2 ? wg3::phase_plane_of(rows, a.ow) : TMA ? wg3::padded_plane_of(rows, a.w) : wg3::plane_of(rows, a.w);
  };
  const auto copy_bytes = [&](int images, int rows) {
    return copies * sizeof(T) * static_cast<size_t>(images) * a.c * static_cast<size_t>(plane_of(rows));
  };
  const CopyPlan plan = copy_plan(a, copy_bytes);
  DACPP_CHECK(!s2 || plan.band == a.oh, ErrorCode::Internal, "conv3x3_wgmma: a stride-2 copy in bands");
  DACPP_CHECK(!io.any() || (TMA && !SPLIT && !s2 && up == nullptr && plan.band == a.oh && plan.chunk >= a.n),
              ErrorCode::Internal, "conv3x3_wgmma: a given padded copy outside the unsplit TMA kernel on whole images");
  const int splits = SPLIT ? std::max(tma_splits(c, a, WG), 2) : 1;
  // The split kernel's f32 partials [image][split][O][pixel tiles · 128] follow the copies in the scratch.
  const auto tiled_pixels = [&](int rows) {
    return (static_cast<long long>(rows) * pitch + wg3::kTileN - 1) / wg3::kTileN * wg3::kTileN;
  };
  const size_t copies_bytes = (copy_bytes(plan.chunk, plan.band) + 255) / 256 * 256;
  const size_t partial_bytes =
      splits > 1 ? sizeof(float) * static_cast<size_t>(plan.chunk) * splits * a.o * tiled_pixels(plan.band) : 0;
  unsigned char* scratch =
      io.any() ? nullptr
               : static_cast<unsigned char*>(c.scratch(
                     copies_bytes + partial_bytes, TMA ? "conv3x3_wgmma padded copy" : "conv3x3_wgmma shifted copies"));
  T* xs = io.input  ? static_cast<T*>(const_cast<void*>(io.input))
          : io.copy ? static_cast<T*>(io.copy)
                    : reinterpret_cast<T*>(scratch);
  float* partial = splits > 1 ? reinterpret_cast<float*>(scratch + copies_bytes) : nullptr;
  constexpr int smem = TMA ? wg3::tma_smem_bytes<WG, STAGES, KX, NT>() : wg3::smem_bytes<WG, STAGES>();
  const void* kernel = nullptr;  // only the variant launched is instantiated
  if constexpr (TMA)
    kernel = reinterpret_cast<const void*>(&wg3::conv3x3_wgmma_tma_kernel<T, WG, STAGES, KX, NT>);
  else
    kernel = reinterpret_cast<const void*>(&wg3::conv3x3_wgmma_kernel<T, WG, STAGES>);
  DACPP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   TMA ? "conv3x3_wgmma_tma" : "conv3x3_wgmma", ": shared memory of ", smem, " bytes");
  CUtensorMap map_w{};
  if constexpr (TMA)
    map_w = tma_map_2d(wt.get(), static_cast<uint64_t>(a.c), 9ULL * a.o, sizeof(T) * static_cast<uint64_t>(a.c), 64,
                       64 * WG, "conv3x3_wgmma tap weights");
  const long long image_in =
      static_cast<long long>(a.c) * (up ? static_cast<long long>(up->sh) * up->sw : static_cast<long long>(a.h) * a.w);
  const long long image_out = static_cast<long long>(a.o) * a.oh * a.ow;
  for (int n0 = 0; n0 < a.n; n0 += plan.chunk) {
    const int nb = std::min(plan.chunk, a.n - n0);
    for (int row0 = 0; row0 < a.oh; row0 += plan.band) {
      // The output's rows and columns (the input's too at stride 1; the phase copy is told the input's).
      wg3::Args d{a.c, a.oh, a.ow, a.o, row0, std::min(plan.band, a.oh - row0), pitch, 0, 0, a.relu, splits};
      d.relu_in = io.relu_in ? 1 : 0;
      d.padded_out = io.output != nullptr ? 1 : 0;
      d.plane = plane_of(d.rows);
      if (s2) d.phase = static_cast<int>(d.plane / 4);
      d.kx_stride = static_cast<long long>(nb) * a.c * d.plane;
      const T* xp = static_cast<const T*>(x.raw()) + n0 * image_in;
      if constexpr (TMA) {
        if (io.input == nullptr) {  // else x is the padded copy already
          // Each padded row's runs of 64 pixels over as many blocks (the grid's z holds images · runs).
          const int runs = std::max(1, std::min((d.wp + 63) / 64, 65535 / nb));
          const dim3 pad_grid(static_cast<unsigned>(s2 ? 4 * (d.rows + 1) : d.rows + 2),
                              static_cast<unsigned>(a.c / 64), static_cast<unsigned>(nb * runs));
          if (s2) {
            launch_kernel(c, "conv3x3_wgmma phase copy", wg3::phase_pad_nhwc_kernel<T>, pad_grid, 256, 0, xp, xs, d,
                          a.h, a.w, runs);
          } else if (up) {
            launch_kernel(c, "conv2d_upsampled padded copy", wg3::upsample_pad_nhwc_kernel<T>, pad_grid, 256, 0, xp, xs,
                          d, *up, runs);
          } else {
            const int pairs = a.w % 2 == 0 && reinterpret_cast<uintptr_t>(xp) % 4 == 0 ? 1 : 0;
            launch_kernel(c, "conv3x3_wgmma padded copy", wg3::pad_nhwc_kernel<T>, pad_grid, 256, 0, xp, xs, d, runs,
                          pairs);
          }
        }
      } else {
        const dim3 pad_grid(static_cast<unsigned>((d.plane / 8 + 255) / 256),
                            static_cast<unsigned>(std::min<long long>(static_cast<long long>(nb) * a.c, 65535)));
        launch_kernel(c, "conv3x3_wgmma shifted copies", wg3::shift_pad_kernel<T>, pad_grid, 256, 0, xp, xs, d, nb);
      }
      const long long pixels = static_cast<long long>(d.rows) * d.wp;
      const dim3 grid(static_cast<unsigned>((pixels + NT - 1) / NT),
                      static_cast<unsigned>(a.o / (64 * WG)), static_cast<unsigned>(nb * splits));
      T* yp = io.output != nullptr ? static_cast<T*>(io.output) : static_cast<T*>(y.raw()) + n0 * image_out;
      if constexpr (TMA) {
        const CUtensorMap map_x =
            tma_map_2d(xs, static_cast<uint64_t>(a.c), static_cast<uint64_t>(nb) * d.plane,
                       sizeof(T) * static_cast<uint64_t>(a.c), 64, NT + KX - 1, "conv3x3_wgmma padded copy");
        launch_kernel(c, "conv3x3_wgmma_tma", wg3::conv3x3_wgmma_tma_kernel<T, WG, STAGES, KX, NT>, grid, WG * 128 + 32,
                      smem, map_w, map_x, bias, yp, partial, d);
        if (splits > 1) {
          const long long outputs = static_cast<long long>(nb) * a.o * d.rows * d.w;
          launch_kernel(c, "conv3x3_wgmma split reduce", wg3::split_reduce_kernel<T>, grid_for(c, outputs, 256), 256, 0,
                        partial, bias, yp, d, nb, tiled_pixels(d.rows));
        }
      } else {
        launch_kernel(c, "conv3x3_wgmma", wg3::conv3x3_wgmma_kernel<T, WG, STAGES>, grid, WG * 128, smem, xs,
                      static_cast<const T*>(wt.get()), bias, yp, d);
      }
    }
  }
}

ConvArgs make_args(const Tensor& x, const Tensor& w, Tensor& y, const ConvGeometry& g, Epilogue act) {
  const int64_t per_image = x.dim(1) * x.dim(2) * x.dim(3);
  DACPP_CHECK(per_image < INT_MAX && y.dim(1) * y.dim(2) * y.dim(3) < INT_MAX && w.dim(0) < (1 << 24) &&
                  w.dim(1) * w.dim(2) * w.dim(3) < INT_MAX,
              ErrorCode::Unsupported, "conv2d (cuda): x ", shape_str(x.shape()), " / w ", shape_str(w.shape()),
              " exceed the kernel's 32-bit index range");
  DACPP_CHECK(act != Epilogue::Gelu, ErrorCode::Unsupported, "conv2d (cuda): GELU epilogue is not supported");
  ConvArgs a{};
  a.n = static_cast<int>(x.dim(0));
  a.c = static_cast<int>(x.dim(1));
  a.h = static_cast<int>(x.dim(2));
  a.w = static_cast<int>(x.dim(3));
  a.o = static_cast<int>(w.dim(0));
  a.kh = static_cast<int>(w.dim(2));
  a.kw = static_cast<int>(w.dim(3));
  a.oh = static_cast<int>(y.dim(2));
  a.ow = static_cast<int>(y.dim(3));
  a.sh = g.stride_h;
  a.sw = g.stride_w;
  a.ph = g.pad_h;
  a.pw = g.pad_w;
  a.k_total = a.c * a.kh * a.kw;
  a.p_total = static_cast<long long>(a.n) * a.oh * a.ow;
  a.relu = act == Epilogue::Relu ? 1 : 0;
  return a;
}

enum class ConvPath { Auto, ImplicitGemm, Gemm, RowGemm, GemmPitched };

// The algorithms conv2d chooses from. Direct<WM><TH>: conv3x3_tc with 32·WM output channels × TH rows per block.
// RowGemm: conv_row_gemm (vertical stride 1, KH > 1).
// Wgmma1 / Wgmma2: conv3x3_wgmma with 64 / 128 output channels per block (Hopper; 4-stage ring: 6 stages measured
// 0-1.6 % faster on DA2-L's shapes, not worth the shared memory). WgmmaTma1 / WgmmaTma2: the same fed by the
// tensor memory accelerator (4 / 5 stages); WgmmaTmaSplit / WgmmaTmaSplit2: WgmmaTma1 / WgmmaTma2 with K split over
// tma_splits blocks per tile (128 channels per block: half the pixel tiles read from L2 of 64);
// WgmmaTmaRows1 / 2: the TMA kernel stepping over kernel rows (its three kx taps share one pixel tile: a third of
// the pixel traffic), 4 / 3 stages. WgmmaTmaRowsWide: WgmmaTmaRows2 on tiles of 176 pixels (m64n176k16), for maps
// whose 128-pixel tiles end a wave short: DA2-L's 148² 256 → 256 convs take 348 blocks of 128 pixels (three waves of
// 132, the last 64 % full) or 254 of 176 (two, the last 92 %).
enum class ConvAlgo : int {
  Gemm,
  Implicit,
  Direct1x8,
  Direct1x16,
  Direct2x8,
  Direct2x16,
  DirectSplit2,
  DirectSplit4,
  RowGemm,
  Wgmma1,
  Wgmma2,
  WgmmaTma1,
  WgmmaTma2,
  WgmmaTmaSplit,
  WgmmaTmaSplit2,
  WgmmaTmaRows1,
  WgmmaTmaRows2,
  GemmPitched,
  WgmmaTmaRowsWide
};

const char* algo_name(ConvAlgo algo) {
  switch (algo) {
    case ConvAlgo::Gemm: return "im2col+gemm";
    case ConvAlgo::GemmPitched:
      return "pitched 1x1 gemm";
    case ConvAlgo::Implicit: return "implicit-gemm";
    case ConvAlgo::Direct1x8: return "direct3x3 32x8";
    case ConvAlgo::Direct1x16: return "direct3x3 32x16";
    case ConvAlgo::Direct2x8: return "direct3x3 64x8";
    case ConvAlgo::Direct2x16: return "direct3x3 64x16";
    case ConvAlgo::DirectSplit2:
      return "direct3x3 32x8 split-k 2";
    case ConvAlgo::DirectSplit4:
      return "direct3x3 32x8 split-k 4";
    case ConvAlgo::RowGemm: return "row-shifted gemm";
    case ConvAlgo::Wgmma1: return "wgmma3x3 64";
    case ConvAlgo::Wgmma2: return "wgmma3x3 128";
    case ConvAlgo::WgmmaTma1:
      return "wgmma3x3 tma 64";
    case ConvAlgo::WgmmaTma2:
      return "wgmma3x3 tma 128";
    case ConvAlgo::WgmmaTmaSplit:
      return "wgmma3x3 tma 64 split-k";
    case ConvAlgo::WgmmaTmaSplit2:
      return "wgmma3x3 tma 128 split-k";
    case ConvAlgo::WgmmaTmaRows1:
      return "wgmma3x3 tma rows 64";
    case ConvAlgo::WgmmaTmaRows2:
      return "wgmma3x3 tma rows 128";
    case ConvAlgo::WgmmaTmaRowsWide:
      return "wgmma3x3 tma rows 128x176";
  }
  return "?";
}

std::string gemm_what(const Tensor& x, const Tensor& w, const Tensor& y) {
  return str_cat("conv2d ", w.name().empty() ? std::string("w") : "'" + w.name() + "'", " ", shape_str(x.shape()),
                 " -> ", shape_str(y.shape()));
}

// The algorithms the pair can chain through a padded copy: the unsplit stride-1 TMA kernels.
bool chains(ConvAlgo algo) {
  return algo == ConvAlgo::WgmmaTma1 || algo == ConvAlgo::WgmmaTma2 || algo == ConvAlgo::WgmmaTmaRows1 ||
         algo == ConvAlgo::WgmmaTmaRows2 || algo == ConvAlgo::WgmmaTmaRowsWide;
}

// io: residual_conv_pair's padded copies, for the algorithms that chain only (launch_wgmma3x3 checks the rest).
template <typename T>
void launch_direct(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a,
                   ConvAlgo algo, const PaddedIo& io = {}) {
  DACPP_CHECK(!io.any() || chains(algo), ErrorCode::Internal, "conv2d: ", algo_name(algo),
              " cannot chain through a padded copy");
  switch (algo) {
    case ConvAlgo::Wgmma1:
      return launch_wgmma3x3<T, 1, 4, false>(c, x, w, bias, y, a);
    case ConvAlgo::Wgmma2:
      return launch_wgmma3x3<T, 2, 4, false>(c, x, w, bias, y, a);
    case ConvAlgo::WgmmaTma1:
      return launch_wgmma3x3<T, 1, 4, true>(c, x, w, bias, y, a, nullptr, io);
    case ConvAlgo::WgmmaTma2:
      return launch_wgmma3x3<T, 2, 5, true>(c, x, w, bias, y, a, nullptr, io);
    case ConvAlgo::WgmmaTmaSplit:
      return launch_wgmma3x3<T, 1, 4, true, true>(c, x, w, bias, y, a);
    case ConvAlgo::WgmmaTmaSplit2:
      return launch_wgmma3x3<T, 2, 5, true, true>(c, x, w, bias, y, a);
    case ConvAlgo::WgmmaTmaRows1:
      return launch_wgmma3x3<T, 1, 4, true, false, 3>(c, x, w, bias, y, a, nullptr, io);
    case ConvAlgo::WgmmaTmaRows2:
      return launch_wgmma3x3<T, 2, 3, true, false, 3>(c, x, w, bias, y, a, nullptr, io);
    case ConvAlgo::WgmmaTmaRowsWide:
      return launch_wgmma3x3<T, 2, 3, true, false, 3, conv3x3_wg::kTileNWide>(c, x, w, bias, y, a, nullptr, io);
    case ConvAlgo::Direct1x8: return launch3x3<T, 1, 8>(c, x, w, bias, y, a);
    case ConvAlgo::DirectSplit2:
      return launch3x3<T, 1, 8>(c, x, w, bias, y, a, 2);
    case ConvAlgo::DirectSplit4:
      return launch3x3<T, 1, 8>(c, x, w, bias, y, a, 4);
    case ConvAlgo::Direct1x16: return launch3x3<T, 1, 16>(c, x, w, bias, y, a);
    case ConvAlgo::Direct2x8: return launch3x3<T, 2, 8>(c, x, w, bias, y, a);
    default: return launch3x3<T, 2, 16>(c, x, w, bias, y, a);
  }
}

void run_algo(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const ConvArgs& a,
              ConvAlgo algo) {
  if (algo == ConvAlgo::Gemm)
    return dispatch_float(x.dtype(), "conv2d",
                          [&](auto tag) { conv_gemm<decltype(tag)>(c, x, w, bias, y, a, gemm_what(x, w, y)); });
  if (algo == ConvAlgo::RowGemm)
    return dispatch_float(x.dtype(), "conv2d",
                          [&](auto tag) { conv_row_gemm<decltype(tag)>(c, x, w, bias, y, a, gemm_what(x, w, y)); });
  if (algo == ConvAlgo::GemmPitched)
    return dispatch_float(x.dtype(), "conv2d",
                          [&](auto tag) { conv_gemm_pitched<decltype(tag)>(c, x, w, bias, y, a, gemm_what(x, w, y)); });
  switch (x.dtype()) {
    case DType::F32:
      return launch<float>(c, x, w, bias, y, a);
    case DType::BF16:
      if (algo == ConvAlgo::Implicit) return launch<__nv_bfloat16>(c, x, w, bias, y, a);
      return launch_direct<__nv_bfloat16>(c, x, w, bias, y, a, algo);
    case DType::F16:
      if (algo == ConvAlgo::Implicit) return launch<__half>(c, x, w, bias, y, a);
      return launch_direct<__half>(c, x, w, bias, y, a, algo);
    default:
      break;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "conv2d (cuda): dtype ", dtype_name(x.dtype()), " is not supported");
}

// The untuned choice, also used while a CUDA graph is being captured (no timing possible then) and with
// DACPP_AUTOTUNE=0: rules fitted to the tuner's times for the DA2 S/L head shapes on the H200 (session 5's tuning
// log). im2col + cuBLASLt wins for wide convs on large maps whose im2col matrix fits unbanded (148² 256→256: 104 vs
// 161 µs direct) and for many channels on the smallest maps (19² 1024→256: 49 vs 87 µs; 384→64: 23 vs 36 µs); the
// direct kernel wins elsewhere (74² 512→256: 98 vs 113 µs; 296² 256→128: 278 vs 413 µs banded).
ConvAlgo heuristic_algo(const CudaContext& c, const Tensor& x, const ConvArgs& a) {
  const long long pixels = static_cast<long long>(a.oh) * a.ow;
  const bool gemm_wins = col_bytes_per_image(a, x.dtype()) <= kMaxColBytes &&
                         ((a.o >= 128 && a.k_total >= 2304 && pixels >= 16384) || (pixels <= 400 && a.c >= 384));
  if (direct3x3_applies(x, a) && !gemm_wins) {
    const long long tiles_x = (a.w + conv3x3::kTW - 1) / conv3x3::kTW, sms = c.sm_count();
    const long long co64 = (a.o + 63) / 64, co32 = (a.o + 31) / 32;
    const long long rows16 = tiles_x * ((a.h + 15) / 16) * a.n, rows8 = tiles_x * ((a.h + 7) / 8) * a.n;
    if (a.o <= 32) return rows16 * co32 >= 2 * sms ? ConvAlgo::Direct1x16 : ConvAlgo::Direct1x8;
    return rows8 * co64 >= sms ? ConvAlgo::Direct2x8 : ConvAlgo::Direct1x8;
  }
  return gemm_preferred(x, a) ? ConvAlgo::Gemm : ConvAlgo::Implicit;
}

// The tuned table's key of a conv shape.
std::string tuning_key(const Tensor& x, const float* bias, const Tensor& y, const ConvArgs& a) {
  return str_cat("conv2d ", a.n, ",", a.c, ",", a.h, ",", a.w, ",", a.o, ",", a.kh, ",", a.kw, ",", a.oh, ",", a.ow,
                 ",", a.sh, ",", a.sw, ",", a.ph, ",", a.pw, ",", a.relu, ",", bias != nullptr, ",",
                 dtype_name(x.dtype()), ",", direct3x3_applies(x, a), ",", reinterpret_cast<uintptr_t>(y.raw()) % 4);
}

// The algorithm for this shape: tuned on first use (tuned_choice: every applicable algorithm timed, the fastest
// recorded for the device and process); the fixed rules of heuristic_algo when tuning cannot run. run_conv runs
// the choice once more, so y always holds the chosen algorithm's result.
ConvAlgo choose_algo(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y,
                     const ConvArgs& a) {
  const ConvAlgo fallback = heuristic_algo(c, x, a);
  // One GEMM on x itself, or (an odd pixel count) on a pitched copy.
  if (is_pointwise(a) && !gemm_pitched_applies(a)) return fallback;
  std::vector<ConvAlgo> candidates = {ConvAlgo::Gemm, ConvAlgo::Implicit};
  if (gemm_pitched_applies(a)) candidates.push_back(ConvAlgo::GemmPitched);
  if (row_gemm_applies(a)) candidates.push_back(ConvAlgo::RowGemm);
  if (direct3x3_applies(x, a)) {
    candidates.insert(candidates.end(),
                      {ConvAlgo::Direct1x8, ConvAlgo::Direct1x16, ConvAlgo::Direct2x8, ConvAlgo::Direct2x16});
    // Split K only where the 32×8 tiling leaves multiprocessors without a block (small maps).
    const long long blocks =
        static_cast<long long>((a.w + conv3x3::kTW - 1) / conv3x3::kTW) * ((a.h + 7) / 8) * ((a.o + 31) / 32) * a.n;
    if (blocks < c.sm_count()) {
      if (direct_splits_fit(a, 2)) candidates.push_back(ConvAlgo::DirectSplit2);
      if (direct_splits_fit(a, 4)) candidates.push_back(ConvAlgo::DirectSplit4);
    }
  }
  const bool s1 = wgmma3x3_applies(c, x, a);
  const bool s2 = wgmma3x3_s2_applies(c, x, a);
  if (s1) {
    candidates.insert(candidates.end(), {ConvAlgo::Wgmma1, ConvAlgo::WgmmaTma1, ConvAlgo::WgmmaTmaRows1});
    if (a.o % 128 == 0)
      candidates.insert(candidates.end(),
                        {ConvAlgo::Wgmma2, ConvAlgo::WgmmaTma2, ConvAlgo::WgmmaTmaRows2, ConvAlgo::WgmmaTmaRowsWide});
  }
  if (s2) {
    candidates.push_back(ConvAlgo::WgmmaTma1);
    if (a.o % 128 == 0) candidates.push_back(ConvAlgo::WgmmaTma2);
  }
  // Split K on small maps, 64 or 128 output channels per block.
  if ((s1 || s2) && tma_splits(c, a) > 1) candidates.push_back(ConvAlgo::WgmmaTmaSplit);
  if ((s1 || s2) && a.o % 128 == 0 && tma_splits(c, a, 2) > 1) candidates.push_back(ConvAlgo::WgmmaTmaSplit2);
  const std::string key = tuning_key(x, bias, y, a);
  const auto at = std::find(candidates.begin(), candidates.end(), fallback);
  const int choice = tuned_choice(
      c, key, static_cast<int>(candidates.size()), static_cast<int>(at - candidates.begin()),
      [&](int i) {
        run_algo(c, x, w, bias, y, a, candidates[static_cast<size_t>(i)]);
        return true;
      },
      3, [&](int i) { return std::string(algo_name(candidates[static_cast<size_t>(i)])); });
  return candidates[static_cast<size_t>(choice)];
}

void run_conv(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
              const ConvGeometry& g, Epilogue act, ConvPath path) {
  if (y.numel() == 0) return;
  const ConvArgs a = make_args(x, w, y, g, act);
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  c.make_current();
  switch (path) {
    case ConvPath::Gemm:
      return run_algo(c, x, w, bp, y, a, ConvAlgo::Gemm);
    case ConvPath::ImplicitGemm:
      return run_algo(c, x, w, bp, y, a, ConvAlgo::Implicit);
    case ConvPath::RowGemm:
      DACPP_CHECK(row_gemm_applies(a), ErrorCode::InvalidArgument, "conv2d_row_gemm (cuda): x ",
                  shape_str(x.shape()), " / w ", shape_str(w.shape()),
                  " needs vertical stride 1 and a kernel taller than one row");
      return run_algo(c, x, w, bp, y, a, ConvAlgo::RowGemm);
    case ConvPath::GemmPitched:
      DACPP_CHECK(is_pointwise(a), ErrorCode::InvalidArgument, "conv2d_gemm_pitched (cuda): w ", shape_str(w.shape()),
                  " is not a 1×1, stride-1, unpadded conv");
      return run_algo(c, x, w, bp, y, a, ConvAlgo::GemmPitched);
    case ConvPath::Auto:
      break;
  }
  run_algo(c, x, w, bp, y, a, choose_algo(c, x, w, bp, y, a));
}

// ---- residual_conv_pair ----
// residual_conv_pair on images that fit: x, h, y of one chunk.
void residual_conv_pair_images(CudaContext& c, const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                               const Tensor& b2, Tensor& h, Tensor& y) {
  const ConvGeometry g{1, 1, 1, 1};
  const ConvArgs a1 = make_args(x, w1, h, g, Epilogue::Relu), a2 = make_args(h, w2, y, g, Epilogue::None);
  const float* bp1 = b1.defined() ? static_cast<const float*>(b1.raw()) : nullptr;
  const float* bp2 = b2.defined() ? static_cast<const float*>(b2.raw()) : nullptr;
  c.make_current();
  // Each conv's algorithm as conv2d would choose it (tuned on first use: the first conv timed on x, not relu(x)).
  const ConvAlgo algo1 = choose_algo(c, x, w1, bp1, h, a1), algo2 = choose_algo(c, h, w2, bp2, y, a2);
  const size_t copy = dtype_nbytes(x.dtype(), 1) * static_cast<size_t>(a1.n) * a1.c *
                      static_cast<size_t>(conv3x3_wg::padded_plane_of(a1.oh, a1.w));
  const bool chained =
      x.dtype() != DType::F32 && chains(algo1) && chains(algo2) && a1.c == a1.o && 2 * copy <= kMaxColBytes;
  if (!chained) {
    unary(c, UnaryKind::Relu, x, y);
    run_algo(c, y, w1, bp1, h, a1, algo1);
    run_algo(c, h, w2, bp2, y, a2, algo2);
    return;
  }
  // relu(x)'s padded copy, then the first conv's output as the second conv's padded copy: neither the ReLU pass nor
  // the second copy runs, and h is not written.
  const size_t aligned = (copy + 255) / 256 * 256;
  unsigned char* base = static_cast<unsigned char*>(c.scratch(2 * aligned, "residual_conv_pair padded copies"));
  PaddedIo io1, io2;
  io1.copy = base;
  io1.relu_in = true;
  io1.output = base + aligned;
  io2.input = base + aligned;
  dispatch_float(x.dtype(), "residual_conv_pair", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      launch_direct<T>(c, x, w1, bp1, h, a1, algo1, io1);
      launch_direct<T>(c, h, w2, bp2, y, a2, algo2, io2);
    }
  });
}

}  // namespace

void residual_conv_pair(CudaContext& c, const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                        const Tensor& b2, const Tensor& r, Tensor& h, Tensor& y) {
  if (y.numel() == 0) return;
  // As many images at a time as the two padded copies hold within kMaxColBytes (a batch of 16 DA2-L maps at 148²
  // takes 5 at a time); each chunk's convs are tuned for its image count.
  const size_t per_image =
      dtype_nbytes(x.dtype(), 1) * static_cast<size_t>(x.dim(1)) *
      static_cast<size_t>(conv3x3_wg::padded_plane_of(static_cast<int>(x.dim(2)), static_cast<int>(x.dim(3))));
  const int64_t n = x.dim(0);
  const int64_t chunk = std::clamp<int64_t>(static_cast<int64_t>(kMaxColBytes / (2 * per_image)), 1, n);
  if (x.dtype() == DType::F32 || chunk == n) {
    residual_conv_pair_images(c, x, w1, b1, w2, b2, h, y);
  } else {
    for (int64_t n0 = 0; n0 < n; n0 += chunk) {
      const int64_t n1 = std::min(n, n0 + chunk);
      Tensor hc = h.slice0(n0, n1), yc = y.slice0(n0, n1);
      residual_conv_pair_images(c, x.slice0(n0, n1), w1, b1, w2, b2, hc, yc);
    }
  }
  // The residual over the whole batch in one add pass. (Added in the second conv's store instead it measured slower,
  // session 36: DA2-L's 148² conv 70 → 89-127 µs, against the add pass's ~11 µs; docs/PERFORMANCE.md, 1.25.)
  if (r.defined()) binary(c, BinaryKind::Add, y, r, y);
}

void conv2d(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
            Epilogue act) {
  run_conv(c, x, w, bias, y, g, act, ConvPath::Auto);
}

std::string conv2d_upsampled_refusal(const CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& y) {
  if (!c.hopper_mma()) return "it needs an sm_90 GPU and an sm_90a build";
  if (x.dtype() != DType::BF16 && x.dtype() != DType::F16) return str_cat("dtype ", dtype_name(x.dtype()));
  if (w.dim(2) != 3 || w.dim(3) != 3) return str_cat("a ", w.dim(2), "x", w.dim(3), " kernel (it runs 3x3)");
  if (x.dim(1) % 64 != 0 || w.dim(0) % 64 != 0)
    return str_cat(x.dim(1), " -> ", w.dim(0), " channels (it needs multiples of 64)");
  if (x.dim(0) > 65535 || y.dim(2) + 2 > INT_MAX / 2 || x.dim(2) * x.dim(3) >= INT_MAX / 2 ||
      y.dim(1) * y.dim(2) * y.dim(3) >= INT_MAX || x.dim(1) * (y.dim(2) + 2) * (y.dim(3) + 2) >= INT_MAX)
    return str_cat("x ", shape_str(x.shape()), " / y ", shape_str(y.shape()), " exceed its index range");
  return {};
}

void conv2d_upsampled(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act) {
  const std::string why = conv2d_upsampled_refusal(c, x, w, y);
  DACPP_CHECK(why.empty(), ErrorCode::Unsupported, "conv2d_upsampled (cuda): ", why);
  if (y.numel() == 0) return;
  if (!conv2d_upsampled_taps_refusal(x, w, y, act).empty()) return conv2d_upsampled_tma(c, x, w, bias, y, act);
  // Both apply: which is faster depends on the channels and the map sizes (DA2-L's 148² 256 -> 296² 128: the TMA
  // conv's 52 GFLOP against taps first's 13 GFLOP GEMM and its blends), timed on first use of the shape.
  c.make_current();
  const std::string key = str_cat("conv2d_upsampled,", dtype_name(x.dtype()), ",", x.dim(0), ",", x.dim(1), ",",
                                  x.dim(2), ",", x.dim(3), ",", w.dim(0), ",", y.dim(2), ",", y.dim(3), ",",
                                  static_cast<int>(act), ",", bias.defined() ? 1 : 0);
  const auto run = [&](int i) {
    if (i == 0) return conv2d_upsampled_tma(c, x, w, bias, y, act);
    conv2d_upsampled_taps(c, x, w, bias, y, act);
  };
  run(tuned_choice(
      c, key, 2, 0,
      [&](int i) {
        run(i);
        return true;
      },
      3, [](int i) { return std::string(i == 0 ? "tma" : "taps first"); }));
}

void conv2d_upsampled_tma(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                          Epilogue act) {
  const std::string why = conv2d_upsampled_refusal(c, x, w, y);
  DACPP_CHECK(why.empty(), ErrorCode::Unsupported, "conv2d_upsampled (cuda, tma): ", why);
  if (y.numel() == 0) return;
  // make_args on the source x, then the conv's input is the upsampled map: y's size.
  ConvArgs a = make_args(x, w, y, ConvGeometry{1, 1, 1, 1}, act);
  a.h = a.oh;
  a.w = a.ow;
  conv3x3_wg::Upsample up{};
  up.sh = static_cast<int>(x.dim(2));
  up.sw = static_cast<int>(x.dim(3));
  up.scale_h = conv3x3_wg::align_corners_scale(up.sh, a.oh);
  up.scale_w = conv3x3_wg::align_corners_scale(up.sw, a.ow);
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  c.make_current();
  // 128 output channels per block where O allows (DA2-L's 296² 256 → 128, the shape this serves), stepping over
  // kernel rows: the tuner's pick for the same GEMM at 148² (79.6 µs against 86.4 for a tap per step, session 16).
  const bool wide = a.o % 128 == 0;
  if (x.dtype() == DType::BF16) {
    if (wide) return launch_wgmma3x3<__nv_bfloat16, 2, 3, true, false, 3>(c, x, w, bp, y, a, &up);
    return launch_wgmma3x3<__nv_bfloat16, 1, 4, true>(c, x, w, bp, y, a, &up);
  }
  if (wide) return launch_wgmma3x3<__half, 2, 3, true, false, 3>(c, x, w, bp, y, a, &up);
  launch_wgmma3x3<__half, 1, 4, true>(c, x, w, bp, y, a, &up);
}

void conv2d_direct3x3(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                      int warps_m, int tile_rows, int splits) {
  const ConvArgs a = make_args(x, w, y, ConvGeometry{1, 1, 1, 1}, act);
  DACPP_CHECK(direct3x3_applies(x, a) && a.oh == a.h && a.ow == a.w && (warps_m == 1 || warps_m == 2) &&
                  (tile_rows == 8 || tile_rows == 16) && direct_splits_fit(a, splits),
              ErrorCode::InvalidArgument, "conv2d_direct3x3 (cuda): x ", shape_str(x.shape()), " / w ",
              shape_str(w.shape()), " / variant ", warps_m, "x", tile_rows, " split ", splits, " not supported");
  if (y.numel() == 0) return;
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  c.make_current();
  dispatch_float(x.dtype(), "conv2d_direct3x3", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      if (warps_m == 1 && tile_rows == 8) return launch3x3<T, 1, 8>(c, x, w, bp, y, a, splits);
      if (warps_m == 1) return launch3x3<T, 1, 16>(c, x, w, bp, y, a, splits);
      if (tile_rows == 8) return launch3x3<T, 2, 8>(c, x, w, bp, y, a, splits);
      launch3x3<T, 2, 16>(c, x, w, bp, y, a, splits);
    }
  });
}

void conv2d_wgmma3x3(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                     int warpgroups, WgmmaFeed feed, int stride) {
  DACPP_CHECK(stride == 1 || stride == 2, ErrorCode::InvalidArgument, "conv2d_wgmma3x3 (cuda): stride ", stride,
              " (it runs 1 and 2)");
  const ConvArgs a = make_args(x, w, y, ConvGeometry{stride, stride, 1, 1}, act);
  DACPP_CHECK(c.hopper_mma(), ErrorCode::Unsupported, "conv2d_wgmma3x3 (cuda): needs an sm_90 GPU and a build with ",
              "CMAKE_CUDA_ARCHITECTURES holding 90a (", c.device_name(), ", sm_", c.sm_version(), ")");
  const bool fits = stride == 1
                        ? wgmma3x3_applies(c, x, a)
                        : wgmma3x3_s2_applies(c, x, a) && a.oh == (a.h - 1) / 2 + 1 && a.ow == (a.w - 1) / 2 + 1 &&
                              (feed == WgmmaFeed::Tma || feed == WgmmaFeed::TmaSplitK);
  DACPP_CHECK(fits && (warpgroups == 1 || (warpgroups == 2 && a.o % 128 == 0)) &&
                  (feed != WgmmaFeed::TmaRowsWide || warpgroups == 2),
              ErrorCode::InvalidArgument, "conv2d_wgmma3x3 (cuda): x ", shape_str(x.shape()), " / w ",
              shape_str(w.shape()), " / y ", shape_str(y.shape()), " / stride ", stride, " / ", warpgroups,
              " warpgroups", feed == WgmmaFeed::TmaSplitK ? " with split K" : "",
              feed == WgmmaFeed::TmaRows       ? " in row steps"
              : feed == WgmmaFeed::TmaRowsWide ? " in row steps of 176 pixels"
              : feed == WgmmaFeed::CpAsync     ? " fed by cp.async"
                                               : "",
              " not supported");
  if (y.numel() == 0) return;
  c.make_current();
  run_algo(c, x, w, bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr, y, a,
           feed == WgmmaFeed::TmaSplitK     ? (warpgroups == 1 ? ConvAlgo::WgmmaTmaSplit : ConvAlgo::WgmmaTmaSplit2)
           : feed == WgmmaFeed::Tma         ? (warpgroups == 1 ? ConvAlgo::WgmmaTma1 : ConvAlgo::WgmmaTma2)
           : feed == WgmmaFeed::TmaRows     ? (warpgroups == 1 ? ConvAlgo::WgmmaTmaRows1 : ConvAlgo::WgmmaTmaRows2)
           : feed == WgmmaFeed::TmaRowsWide ? ConvAlgo::WgmmaTmaRowsWide
                                            : (warpgroups == 1 ? ConvAlgo::Wgmma1 : ConvAlgo::Wgmma2));
}

bool conv2d_wgmma3x3_available(const CudaContext& c) { return c.hopper_mma(); }

void conv2d_generic(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                    const ConvGeometry& g, Epilogue act) {
  run_conv(c, x, w, bias, y, g, act, ConvPath::ImplicitGemm);
}

void conv2d_im2col_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                        const ConvGeometry& g, Epilogue act) {
  run_conv(c, x, w, bias, y, g, act, ConvPath::Gemm);
}

void conv2d_gemm_pitched(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                         const ConvGeometry& g, Epilogue act) {
  run_conv(c, x, w, bias, y, g, act, ConvPath::GemmPitched);
}

void conv2d_row_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                     const ConvGeometry& g, Epilogue act) {
  run_conv(c, x, w, bias, y, g, act, ConvPath::RowGemm);
}

size_t conv2d_tuned_count(const CudaContext& c) { return c.tuned_count(); }

bool conv2d_shape_tuned(const CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                        const ConvGeometry& g, Epilogue act) {
  const ConvArgs a = make_args(x, w, y, g, act);
  return c.tuned(tuning_key(x, bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr, y, a)) >= 0;
}

// Every vector width with_vector_width can pick for T: the im2col and bias+ReLU kernels at that width.
template <typename T, int V = 16 / static_cast<int>(sizeof(T))>
void add_width_variants(std::vector<KernelInfo>& out, const char* type) {
  out.push_back({str_cat("conv2d_im2col<", type, ",", V, ">"), reinterpret_cast<const void*>(&im2col_kernel<T, V>)});
  out.push_back({str_cat("conv2d_bias_act<", type, ",", V, ">"),
                 reinterpret_cast<const void*>(&channel_bias_act_kernel<T, V>)});
  out.push_back({str_cat("conv2d_rowcol<", type, ",", V, ">"), reinterpret_cast<const void*>(&rowcol_kernel<T, V>)});
  if constexpr (V > 1) add_width_variants<T, (V > 4 ? 4 : V / 2)>(out, type);
}

// The wgmma 3×3 conv's kernels for T (compiled empty outside sm_90a, launched only where CudaContext::hopper_mma()).
template <typename T>
void add_wgmma3x3_kernels(std::vector<KernelInfo>& out, const char* type) {
  const auto add = [&](const void* kernel, int channels) {
    out.push_back({str_cat("conv3x3_wgmma<", type, ",", channels, ">"), kernel});
  };
  add(reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_kernel<T, 1, 4>), 64);
  add(reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_kernel<T, 2, 4>), 128);
  out.push_back({str_cat("conv3x3_wgmma_tma<", type, ",64>"),
                 reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_tma_kernel<T, 1, 4>)});
  out.push_back({str_cat("conv3x3_wgmma_tma<", type, ",128>"),
                 reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_tma_kernel<T, 2, 5>)});
  out.push_back({str_cat("conv3x3_wgmma_tma_rows<", type, ",64>"),
                 reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_tma_kernel<T, 1, 4, 3>)});
  out.push_back({str_cat("conv3x3_wgmma_tma_rows<", type, ",128>"),
                 reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_tma_kernel<T, 2, 3, 3>)});
  out.push_back(
      {str_cat("conv3x3_wgmma_tma_rows<", type, ",128x176>"),
       reinterpret_cast<const void*>(&conv3x3_wg::conv3x3_wgmma_tma_kernel<T, 2, 3, 3, conv3x3_wg::kTileNWide>)});
  out.push_back({str_cat("conv3x3_split_reduce<", type, ">"),
                 reinterpret_cast<const void*>(&conv3x3_wg::split_reduce_kernel<T>)});
  out.push_back(
      {str_cat("conv3x3_shift_pad<", type, ">"), reinterpret_cast<const void*>(&conv3x3_wg::shift_pad_kernel<T>)});
  out.push_back(
      {str_cat("conv3x3_pad_nhwc<", type, ">"), reinterpret_cast<const void*>(&conv3x3_wg::pad_nhwc_kernel<T>)});
  out.push_back({str_cat("conv3x3_phase_pad_nhwc<", type, ">"),
                 reinterpret_cast<const void*>(&conv3x3_wg::phase_pad_nhwc_kernel<T>)});
  out.push_back({str_cat("conv3x3_upsample_pad_nhwc<", type, ">"),
                 reinterpret_cast<const void*>(&conv3x3_wg::upsample_pad_nhwc_kernel<T>)});
  out.push_back({str_cat("conv3x3_tap_weights<", type, ">"),
                 reinterpret_cast<const void*>(&conv3x3_wg::tap_weights_kernel<T>)});
}

std::vector<KernelInfo> conv2d_kernels() {
  std::vector<KernelInfo> out = {
      {"conv2d_tc<bf16,64>", reinterpret_cast<const void*>(&conv2d_tc<__nv_bfloat16, 2>)},
      {"conv2d_tc<bf16,32>", reinterpret_cast<const void*>(&conv2d_tc<__nv_bfloat16, 1>)},
      {"conv2d_tc<f16,64>", reinterpret_cast<const void*>(&conv2d_tc<__half, 2>)},
      {"conv2d_tc<f16,32>", reinterpret_cast<const void*>(&conv2d_tc<__half, 1>)},
      {"conv2d_simt<f32>", reinterpret_cast<const void*>(&conv2d_simt<float>)},
      {"conv3x3_tc<bf16,64,16>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__nv_bfloat16, 2, 16, false>)},
      {"conv3x3_tc<bf16,64,8>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__nv_bfloat16, 2, 8, false>)},
      {"conv3x3_tc<bf16,32,16>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__nv_bfloat16, 1, 16, false>)},
      {"conv3x3_tc<bf16,32,8>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__nv_bfloat16, 1, 8, false>)},
      {"conv3x3_tc<f16,64,16>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__half, 2, 16, false>)},
      {"conv3x3_tc<f16,64,8>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__half, 2, 8, false>)},
      {"conv3x3_tc<f16,32,16>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__half, 1, 16, false>)},
      {"conv3x3_tc<f16,32,8>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__half, 1, 8, false>)},
      {"conv3x3_tc split<bf16,32,8>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__nv_bfloat16, 1, 8, true>)},
      {"conv3x3_tc split<f16,32,8>", reinterpret_cast<const void*>(&conv3x3::conv3x3_tc<__half, 1, 8, true>)},
      {"conv3x3_split_sum<bf16>", reinterpret_cast<const void*>(&conv3x3::split_sum_kernel<__nv_bfloat16>)},
      {"conv3x3_split_sum<f16>", reinterpret_cast<const void*>(&conv3x3::split_sum_kernel<__half>)},
      {"conv3x3_relayout<bf16>", reinterpret_cast<const void*>(&conv3x3::relayout_weights<__nv_bfloat16>)},
      {"conv3x3_relayout<f16>", reinterpret_cast<const void*>(&conv3x3::relayout_weights<__half>)},
      {"conv2d_im2col_s1<f32>", reinterpret_cast<const void*>(&im2col_s1_kernel<float>)},
      {"conv2d_im2col_s1<bf16>", reinterpret_cast<const void*>(&im2col_s1_kernel<__nv_bfloat16>)},
      {"conv2d_im2col_s1<f16>", reinterpret_cast<const void*>(&im2col_s1_kernel<__half>)},
      {"conv2d_store_band<bf16>", reinterpret_cast<const void*>(&store_band_kernel<__nv_bfloat16>)},
      {"conv2d_store_band<f16>", reinterpret_cast<const void*>(&store_band_kernel<__half>)},
      {"conv2d_ky_major<f32>", reinterpret_cast<const void*>(&ky_major_weights_kernel<float>)},
      {"conv2d_ky_major<bf16>", reinterpret_cast<const void*>(&ky_major_weights_kernel<__nv_bfloat16>)},
      {"conv2d_ky_major<f16>", reinterpret_cast<const void*>(&ky_major_weights_kernel<__half>)},
      {"conv2d_unpitch_bias_act<f32>", reinterpret_cast<const void*>(&unpitch_bias_act_kernel<float>)},
      {"conv2d_unpitch_bias_act<bf16>", reinterpret_cast<const void*>(&unpitch_bias_act_kernel<__nv_bfloat16>)},
      {"conv2d_unpitch_bias_act<f16>", reinterpret_cast<const void*>(&unpitch_bias_act_kernel<__half>)},
  };
  add_width_variants<float>(out, "f32");
  add_width_variants<__nv_bfloat16>(out, "bf16");
  add_width_variants<__half>(out, "f16");
  add_wgmma3x3_kernels<__nv_bfloat16>(out, "bf16");
  add_wgmma3x3_kernels<__half>(out, "f16");
  return out;
}

}  // namespace dacpp::cuda
