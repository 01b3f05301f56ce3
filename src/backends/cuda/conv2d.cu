// conv2d on CUDA as an implicit GEMM (no im2col buffer, no workspace):
//   Y[o, p] = bias[o] + Σ_k W[o, k] · X̂[k, p],   k = (c, ky, kx) over C·KH·KW,  p = (n, oy, ox) over N·OH·OW
// with X̂ gathered from x on the fly (zero outside the padded image). The batch is folded into the pixel axis, so
// one launch covers every image. Per K tile, a small shared table maps k to (c·H·W + ky·W + kx, ky, kx), so the
// gather costs one add and two bounds checks per element.
//
// conv2d_tc (bf16/f16): block tile 64 (or 32 when O <= 32) output channels × 128 pixels × 32 k, 8 warps of 32 × 32
//   (32 × 16), mma m16n8k16 with f32 accumulation; shared rows padded to 40 elements (conflict-free 32-bit fragment loads).
// conv2d_simt (f32, exact): block tile 64 × 64 × 16, 256 threads of 4 × 4 outputs, f32 FMA.
// Epilogue (both): + bias (f32), optional ReLU, rounded once to the output dtype.
#include <climits>
#include <type_traits>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/mma_util.cuh"

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
void launch(cudaStream_t st, const Tensor& x, const Tensor& w, const float* bias, Tensor& y,
            const ConvArgs& a) {
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
      conv2d_tc<T, 1><<<grid, kTcThreads, 0, st>>>(xp, wp, bias, yp, a);
    else
      conv2d_tc<T, 2><<<grid, kTcThreads, 0, st>>>(xp, wp, bias, yp, a);
    DACPP_CUDA_LAUNCH_CHECK("conv2d_tc");
  } else {
    conv2d_simt<T><<<grid, kSThreads, 0, st>>>(xp, wp, bias, yp, a);
    DACPP_CUDA_LAUNCH_CHECK("conv2d_simt");
  }
}

}  // namespace

void conv2d(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
            Epilogue act) {
  if (y.numel() == 0) return;
  const int64_t per_image = x.dim(1) * x.dim(2) * x.dim(3);
  DACPP_CHECK(per_image < INT_MAX && w.dim(0) < (1 << 24) && w.dim(1) * w.dim(2) * w.dim(3) < INT_MAX,
              ErrorCode::Unsupported, "conv2d (cuda): x ", shape_str(x.shape()), " / w ", shape_str(w.shape()),
              " exceed the kernel's 32-bit index range");
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
  DACPP_CHECK(act != Epilogue::Gelu, ErrorCode::Unsupported, "conv2d (cuda): GELU epilogue is not supported");
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  c.make_current();
  switch (x.dtype()) {
    case DType::F32:
      return launch<float>(c.stream(), x, w, bp, y, a);
    case DType::BF16:
      return launch<__nv_bfloat16>(c.stream(), x, w, bp, y, a);
    case DType::F16:
      return launch<__half>(c.stream(), x, w, bp, y, a);
    default:
      break;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "conv2d (cuda): dtype ", dtype_name(x.dtype()), " is not supported");
}

std::vector<KernelInfo> conv2d_kernels() {
  return {
      {"conv2d_tc<bf16,64>", reinterpret_cast<const void*>(&conv2d_tc<__nv_bfloat16, 2>)},
      {"conv2d_tc<bf16,32>", reinterpret_cast<const void*>(&conv2d_tc<__nv_bfloat16, 1>)},
      {"conv2d_tc<f16,64>", reinterpret_cast<const void*>(&conv2d_tc<__half, 2>)},
      {"conv2d_tc<f16,32>", reinterpret_cast<const void*>(&conv2d_tc<__half, 1>)},
      {"conv2d_simt<f32>", reinterpret_cast<const void*>(&conv2d_simt<float>)},
  };
}

}  // namespace dacpp::cuda
