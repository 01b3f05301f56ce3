// conv_transpose2d on CUDA (torch ConvTranspose2d, padding 0): a gather, one thread per output element,
//   y[n, o, oy, ox] = bias[o] + Σ_c Σ_{ky ≡ oy, kx ≡ ox (mod s)} x[n, c, (oy−ky)/s, (ox−kx)/s] · w[c, o, ky, kx]
// For stride == K (DPT's 4×4 s4 and 2×2 s2) exactly one (ky, kx) contributes: ky = oy mod s, kx = ox mod s.
// Threads of a warp share (n, o, oy) and walk the channels in step, so their x reads are contiguous along ix and
// their w reads fall into k·k adjacent values (L1-resident). Math f32, one rounding to the output dtype.
// Expected cost: 2 loads per FMA. Used only when stride != K.
//
// stride == K (every DPT reassemble upsampling) runs as a GEMM + scatter instead: the K·K taps never overlap, so
//   Z[(o, ky, kx), p] = Σ_c w[c, (o, ky, kx)] · x[c, p]          (p = iy·W + ix, per image)
//   y[o, iy·s + ky, ix·s + kx] = Z[(o, ky, kx), p] + bias[o]
// cuBLASLt computes column-major D[P, O·K·K] = X^T[P, C] · W[C, O·K·K] (x stored [C, P], w stored [C, O·K·K] and
// transposed), i.e. Z stored [O·K·K, P] per image, into the context's scratch; the scatter is one coalesced write
// per output element.
#include <climits>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/mma_util.cuh"

namespace dacpp::cuda {
namespace {

using namespace mma;

struct DeconvArgs {
  int n, c, h, w, o, k, s, oh, ow;
};

// grid: x = output-column tiles of 128, y = oh, z = n·o. Each thread: one output pixel of row oy.
template <typename T>
__global__ void __launch_bounds__(128)
    conv_transpose2d_gather(const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ bias,
                            T* __restrict__ y, DeconvArgs a) {
  pdl_enter();
  const int ox = blockIdx.x * blockDim.x + threadIdx.x;
  const int oy = blockIdx.y;
  const int no = blockIdx.z, nb = no / a.o, o = no % a.o;
  if (ox >= a.ow) return;
  float acc = bias ? bias[o] : 0.f;
  const long long hw = static_cast<long long>(a.h) * a.w;
  const T* xb = x + static_cast<long long>(nb) * a.c * hw;
  // ky ≡ oy (mod s), 0 <= ky < k, 0 <= iy = (oy − ky)/s < h
  for (int ky = oy % a.s; ky < a.k; ky += a.s) {
    const int iy = (oy - ky) / a.s;
    if (iy < 0) break;
    if (iy >= a.h) continue;
    for (int kx = ox % a.s; kx < a.k; kx += a.s) {
      const int ix = (ox - kx) / a.s;
      if (ix < 0) break;
      if (ix >= a.w) continue;
      const T* xp = xb + static_cast<long long>(iy) * a.w + ix;
      const T* wp = w + (static_cast<long long>(o) * a.k + ky) * a.k + kx;
      const long long wstride = static_cast<long long>(a.o) * a.k * a.k;
      for (int ci = 0; ci < a.c; ++ci) acc = fmaf(to_float(xp[ci * hw]), to_float(wp[ci * wstride]), acc);
    }
  }
  y[((static_cast<long long>(nb) * a.o + o) * a.oh + oy) * a.ow + ox] = from_float<T>(acc);
}

// y[n, o, oy, ox] = z[n, (o, oy % s, ox % s), (oy / s)·w + ox / s] + bias[o] for images [n0, n0 + nb).
// grid: x over the plane's runs of V outputs (V divides OW, so a run never leaves its row), y = image-in-chunk · O + o
// (conv_transpose2d bounds it by 65535). A thread writes its V outputs as one 2·V- or 4·V-byte store; for a fixed
// lane j the warp's reads of z fall in one plane (kx fixed) a few elements apart. (Until 1.0: one thread per output
// in 128-thread blocks along a row, 2-byte stores: ~50 µs for DA2-L's 148² × 256 output, ~0.45 TB/s.)
template <typename T, int V>
__global__ void __launch_bounds__(256) deconv_scatter_kernel(const T* __restrict__ z, const float* __restrict__ bias,
                                                             T* __restrict__ y, DeconvArgs a) {
  pdl_enter();
  const int runs_per_row = a.ow / V;
  const long long runs = static_cast<long long>(a.oh) * runs_per_row;
  const long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (r >= runs) return;
  const int no = blockIdx.y, o = no % a.o;
  const int oy = static_cast<int>(r / runs_per_row), ox0 = static_cast<int>(r - static_cast<long long>(oy) * runs_per_row) * V;
  const long long zplane = static_cast<long long>(a.h) * a.w;
  const int ky = oy % a.s;
  const T* zrow = z + (static_cast<long long>(no) * a.k + ky) * a.k * zplane + static_cast<long long>(oy / a.s) * a.w;
  const float b = bias ? bias[o] : 0.f;
  using Store = typename VecOf<V * sizeof(T)>::type;
  alignas(sizeof(Store)) T out[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int ox = ox0 + j;
    out[j] = from_float<T>(to_float(zrow[static_cast<long long>(ox % a.s) * zplane + ox / a.s]) + b);
  }
  *reinterpret_cast<Store*>(y + (static_cast<long long>(no) * a.oh + oy) * a.ow + ox0) =
      *reinterpret_cast<const Store*>(out);
}

// Runs the scatter with the widest V of {16 / sizeof(T), 4, 2, 1} that divides OW while y is 16-byte aligned.
template <typename T>
void launch_scatter(CudaContext& c, const T* z, const float* bias, T* y, const DeconvArgs& a, int nb) {
  with_vector_width<T>(a.ow, y, [&](auto vec) {
    constexpr int V = decltype(vec)::value;
    const long long runs = static_cast<long long>(a.oh) * (a.ow / V);
    const dim3 grid(static_cast<unsigned>((runs + 255) / 256), static_cast<unsigned>(nb * a.o));
    launch_kernel(c, "conv_transpose2d_scatter", deconv_scatter_kernel<T, V>, grid, 256, 0, z, bias, y, a);
  });
}

constexpr size_t kMaxScratchBytes = size_t{64} << 20;  // Z of one chunk of images

// Per image, Z[(o, ky, kx), p] = Σ_c w[c, (o, ky, kx)] · x[c, p] (x as planes [C, P], P = h·w): cuBLASLt's A = x
// stored [P, C] column-major, B = w stored [O·K·K, C] transposed; Z [O·K·K][P] per image, then the scatter.
template <typename T>
void deconv_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const DeconvArgs& a) {
  const long long p = static_cast<long long>(a.h) * a.w, okk = static_cast<long long>(a.o) * a.k * a.k;
  const size_t per_img = dtype_nbytes(x.dtype(), okk * p);
  const int chunk = static_cast<int>(std::max<size_t>(1, std::min<size_t>(a.n, kMaxScratchBytes / per_img)));
  T* z = static_cast<T*>(c.scratch(per_img * static_cast<size_t>(chunk), "conv_transpose2d GEMM result"));
  GemmSpec g;
  g.m = p;
  g.n = okk;
  g.k = a.c;
  g.trans_b = true;
  g.lda = p;
  g.ldb = okk;
  g.ldd = p;
  g.stride_a = static_cast<int64_t>(a.c) * p;
  g.stride_d = okk * p;
  g.dtype = x.dtype();
  const std::string what = str_cat("conv_transpose2d ", w.name().empty() ? std::string("w") : "'" + w.name() + "'",
                                   " ", shape_str(x.shape()), " -> ", shape_str(y.shape()));
  const long long plane = static_cast<long long>(a.oh) * a.ow;
  for (int n0 = 0; n0 < a.n; n0 += chunk) {
    const int nb = std::min(chunk, a.n - n0);
    g.batch = nb;
    gemm(c, g, static_cast<const T*>(x.raw()) + n0 * g.stride_a, w.raw(), z, nullptr, what.c_str());
    launch_scatter<T>(c, z, bias, static_cast<T*>(y.raw()) + n0 * a.o * plane, a, nb);
  }
}

// ---- tokens (channels-last x [N, P, C]) ----
// Z[n·P + p, (o, ky, kx)] = Σ_c x[n, p, c] · w[c, (o, ky, kx)]: one GEMM in linear's form (K contiguous in both
// operands; Z's rows O·K·K apart, a multiple of 8), the weight's rows [O·K·K][C] made once (CudaContext::derived).
// The planes form's Z [O·K·K][P] puts P in the GEMM's contiguous output dimension, and cuBLASLt serves an odd P
// (DA2's 37² = 1369) only with unaligned sm_75 kernels: stage 0's 2.9 GFLOP took ~40-60 µs there.
// Then y[n, o, iy·K + ky, ix·K + kx] = Z[n·P + iy·W + ix, (o, ky, kx)] + bias[o] by tokens_scatter_kernel.
constexpr int kDerivedDeconvRows = 5;  // CudaContext::derived kind: w [C][O·K·K] transposed to [O·K·K][C]
constexpr int kScatterPixels = 32;     // tokens_scatter_kernel: pixels per block
constexpr int kScatterRow = 128;       // Z elements per pixel a block moves (OB output channels of K·K taps)

// One block moves Z's rows for pixels [p0, p0 + 32) of image n (p over the image's h·w pixels, crossing map rows)
// and channels [o0, o0 + OB), OB = 128 / (K·K): 16-byte coalesced loads of 256-byte row pieces into shared memory
// (rows padded by two elements so the transposed reads fall in distinct banks), then for each (o, ky) the pixels'
// K-wide output runs, consecutive threads on consecutive output columns. grid: x over pixel tiles, y = n · (O / OB)
// + o-chunk. Needs (K·K) | 128, O % OB == 0 and 16-byte aligned rows (tokens_scatter_applies).
template <typename T, int K>
__global__ void __launch_bounds__(256)
    tokens_scatter_kernel(const T* __restrict__ z, const float* __restrict__ bias, T* __restrict__ y, DeconvArgs a) {
  constexpr int kKK = K * K, kOB = kScatterRow / kKK, kPitch = kScatterRow + 2;
  constexpr int kVec = 16 / sizeof(T), kChunks = kScatterRow / kVec;
  __shared__ T tile[kScatterPixels * kPitch];
  pdl_enter();
  const int chunks_o = a.o / kOB;
  const int n = blockIdx.y / chunks_o, o0 = (blockIdx.y % chunks_o) * kOB;
  const int p_total = a.h * a.w, p0 = blockIdx.x * kScatterPixels;
  const long long okk = static_cast<long long>(a.o) * kKK;
  const T* zb = z + (static_cast<long long>(n) * p_total + p0) * okk + static_cast<long long>(o0) * kKK;
  for (int i = threadIdx.x; i < kScatterPixels * kChunks; i += blockDim.x) {
    const int px = i / kChunks, ch = i % kChunks;
    if (p0 + px >= p_total) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(zb + px * okk + ch * kVec);
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int j = 0; j < kVec; ++j) tile[px * kPitch + ch * kVec + j] = e[j];
  }
  __syncthreads();
  const int ow = a.w * K;
  T* yb = y + (static_cast<long long>(n) * a.o + o0) * a.oh * ow;
  // Output elements of the block: (ol, ky) rows × 32 pixels × K columns; t → (ol, ky, px, kx), kx fastest.
  for (int t = threadIdx.x; t < kOB * K * kScatterPixels * K; t += blockDim.x) {
    const int kx = t % K, px = (t / K) % kScatterPixels, ky = (t / (K * kScatterPixels)) % K,
              ol = t / (K * kScatterPixels * K);
    const int p = p0 + px;
    if (p >= p_total) continue;
    const int iy = p / a.w, ix = p - iy * a.w;
    const float v = to_float(tile[px * kPitch + ol * kKK + ky * K + kx]) + (bias ? bias[o0 + ol] : 0.f);
    yb[(static_cast<long long>(ol) * a.oh + iy * K + ky) * ow + ix * K + kx] = from_float<T>(v);
  }
}

// The tokens GEMM + scatter apply: kernel == stride in {2, 4}, O a multiple of the block's channels, 16-byte rows.
bool tokens_scatter_applies(const DeconvArgs& a, DType dt) {
  const int kk = a.k * a.k;
  return a.k == a.s && (a.k == 2 || a.k == 4) && a.o % (kScatterRow / kk) == 0 &&
         (static_cast<long long>(a.o) * kk * static_cast<long long>(dtype_nbytes(dt, 1))) % 16 == 0;
}

template <typename T>
void deconv_tokens_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y,
                        const DeconvArgs& a) {
  const long long p = static_cast<long long>(a.h) * a.w, okk = static_cast<long long>(a.o) * a.k * a.k;
  const size_t per_img = dtype_nbytes(x.dtype(), okk * p);
  const int chunk = static_cast<int>(std::max<size_t>(1, std::min<size_t>(a.n, kMaxScratchBytes / per_img)));
  const size_t z_bytes = (per_img * static_cast<size_t>(chunk) + 255) / 256 * 256;
  // A model's weight keeps its rows (CudaContext::derived); a borrowed one (no owned storage) gets them behind Z in
  // the same scratch, which a second scratch() call would replace.
  const size_t rows_bytes = sizeof(T) * static_cast<size_t>(okk * a.c);
  auto* mem = static_cast<char*>(
      c.scratch(z_bytes + (CudaContext::keeps(w) ? 0 : rows_bytes), "conv_transpose2d_tokens GEMM result"));
  T* z = reinterpret_cast<T*>(mem);
  DACPP_CHECK(aligned_to(z, 16), ErrorCode::Internal, "conv_transpose2d_tokens: scratch is not 16-byte aligned");
  const auto fill_rows = [&](void* dst) {
    Tensor t = Tensor::view(dst, {okk, a.c}, w.dtype(), w.device(), nullptr, "conv_transpose2d weight rows");
    permute(c, w.reshape({a.c, okk}), {1, 0}, t);
  };
  const std::shared_ptr<const void> rows = c.derived(w, kDerivedDeconvRows, rows_bytes, fill_rows,
                                                     "conv_transpose2d_tokens weight rows", nullptr, mem + z_bytes);
  // Column-major D[O·K·K, nb·P] = (rows stored [C, O·K·K])^T · (x stored [C, nb·P]).
  GemmSpec g;
  g.m = okk;
  g.k = a.c;
  g.trans_a = true;
  g.lda = a.c;
  g.ldb = a.c;
  g.ldd = okk;
  g.dtype = x.dtype();
  const std::string what =
      str_cat("conv_transpose2d_tokens ", w.name().empty() ? std::string("w") : "'" + w.name() + "'", " ",
              shape_str(x.shape()), " -> ", shape_str(y.shape()));
  const long long plane = static_cast<long long>(a.oh) * a.ow;
  for (int n0 = 0; n0 < a.n; n0 += chunk) {
    const int nb = std::min(chunk, a.n - n0);
    g.n = nb * p;
    gemm(c, g, rows.get(), static_cast<const T*>(x.raw()) + n0 * p * a.c, z, nullptr, what.c_str());
    DeconvArgs an = a;
    an.n = nb;
    T* yn = static_cast<T*>(y.raw()) + n0 * a.o * plane;
    const dim3 grid(static_cast<unsigned>((p + kScatterPixels - 1) / kScatterPixels),
                    static_cast<unsigned>(nb * (a.o / (kScatterRow / (a.k * a.k)))));
    launch_kernel(c, "conv_transpose2d_tokens_scatter",
                  a.k == 4 ? tokens_scatter_kernel<T, 4> : tokens_scatter_kernel<T, 2>, grid, 256, 0,
                  static_cast<const T*>(z), bias, yn, an);
  }
}

template <typename T>
void launch(const CudaContext& c, const Tensor& x, const Tensor& w, const float* bias, Tensor& y, const DeconvArgs& a) {
  const dim3 grid(static_cast<unsigned>((a.ow + 127) / 128), static_cast<unsigned>(a.oh),
                  static_cast<unsigned>(a.n * a.o));
  launch_kernel(c, "conv_transpose2d_gather", conv_transpose2d_gather<T>, grid, 128, 0, static_cast<const T*>(x.raw()),
                static_cast<const T*>(w.raw()), bias, static_cast<T*>(y.raw()), a);
}

// The geometry of a conv_transpose2d of n images of c channels at h × w, or Unsupported past the kernels' grids.
DeconvArgs deconv_args(const char* op, const Tensor& x, int64_t n, int64_t ch, int64_t h, int64_t w, const Tensor& wt,
                       const Tensor& y, int stride) {
  DACPP_CHECK(n * wt.dim(1) <= 65535 && y.dim(2) <= 65535 && y.dim(3) < INT_MAX && ch * h * w < INT_MAX,
              ErrorCode::Unsupported, op, " (cuda): x ", shape_str(x.shape()), " / y ", shape_str(y.shape()),
              " exceed the kernel's grid (N·O <= 65535, OH <= 65535)");
  return DeconvArgs{static_cast<int>(n),
                    static_cast<int>(ch),
                    static_cast<int>(h),
                    static_cast<int>(w),
                    static_cast<int>(wt.dim(1)),
                    static_cast<int>(wt.dim(2)),
                    stride,
                    static_cast<int>(y.dim(2)),
                    static_cast<int>(y.dim(3))};
}

}  // namespace

void conv_transpose2d(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride) {
  if (y.numel() == 0) return;
  const DeconvArgs a = deconv_args("conv_transpose2d", x, x.dim(0), x.dim(1), x.dim(2), x.dim(3), w, y, stride);
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  c.make_current();
  if (a.k == a.s)
    return dispatch_float(x.dtype(), "conv_transpose2d", [&](auto tag) { deconv_gemm<decltype(tag)>(c, x, w, bp, y, a); });
  switch (x.dtype()) {
    case DType::F32:
      return launch<float>(c, x, w, bp, y, a);
    case DType::BF16:
      return launch<__nv_bfloat16>(c, x, w, bp, y, a);
    case DType::F16:
      return launch<__half>(c, x, w, bp, y, a);
    default:
      break;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "conv_transpose2d (cuda): dtype ", dtype_name(x.dtype()),
              " is not supported");
}

void conv_transpose2d_tokens(CudaContext& c, const Tensor& x, int64_t h, int64_t w, const Tensor& wt,
                             const Tensor& bias, Tensor& y, int stride) {
  if (y.numel() == 0) return;
  const DeconvArgs a = deconv_args("conv_transpose2d_tokens", x, x.dim(0), x.dim(2), h, w, wt, y, stride);
  const float* bp = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  c.make_current();
  if (tokens_scatter_applies(a, x.dtype()))
    return dispatch_float(x.dtype(), "conv_transpose2d_tokens",
                          [&](auto tag) { deconv_tokens_gemm<decltype(tag)>(c, x, wt, bp, y, a); });
  // Any other geometry (no DPT resize layer has one): the planes in scratch, then the gather kernel (which, unlike
  // the planes' GEMM, needs no scratch of its own).
  Tensor planes = Tensor::view(c.scratch(x.nbytes(), "conv_transpose2d_tokens planes"), {x.dim(0), x.dim(2), h, w},
                               x.dtype(), x.device(), nullptr, "conv_transpose2d_tokens.planes");
  permute(c, x.reshape({x.dim(0), h, w, x.dim(2)}), {0, 3, 1, 2}, planes);
  dispatch_float(x.dtype(), "conv_transpose2d_tokens",
                 [&](auto tag) { launch<decltype(tag)>(c, planes, wt, bp, y, a); });
}

namespace {

// ops::im2col3x3_tokens: one thread per element of y [N·H·W, kyn·3·Cp].
template <typename T>
__global__ void __launch_bounds__(256)
    im2col3x3_tokens_kernel(const T* __restrict__ x, T* __restrict__ y, int h, int w, int c, int cp, int ky0, int kyn,
                            int ones, int64_t total) {
  pdl_enter();
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int64_t row = int64_t{kyn} * 3 * cp, hw = int64_t{h} * w;
  const int64_t p = idx / row;
  const int r = static_cast<int>(idx - p * row), tap = r / cp, ch = r - tap * cp;
  const int64_t n = p / hw;
  const int pix = static_cast<int>(p - n * hw);
  const int i = pix / w + ky0 + tap / 3 - 1, j = pix % w + tap % 3 - 1;
  const bool inside = i >= 0 && i < h && j >= 0 && j < w;
  T v = mma::from_float<T>(0.f);
  if (inside && ch < c) v = x[(n * hw + int64_t{i} * w + j) * c + ch];
  if (inside && ones && ch == c) v = mma::from_float<T>(1.f);
  y[idx] = v;
}

// ops::patch_rows: one thread per element of y [N·P, Kp] (P = (H/k)·(W/k) patches of a row each).
template <typename T>
__global__ void __launch_bounds__(256)
    patch_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int ch, int h, int w, int k, int kp, int64_t total) {
  pdl_enter();
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int gw = w / k, patches = (h / k) * gw;
  const int64_t r = idx / kp;
  const int col = static_cast<int>(idx - r * kp), kk = k * k;
  T v = mma::from_float<T>(0.f);
  if (col < ch * kk) {
    const int64_t img = r / patches;
    const int p = static_cast<int>(r - img * patches), cc = col / kk, rem = col - cc * kk, ky = rem / k;
    const int i = p / gw * k + ky, j = p % gw * k + rem - ky * k;
    v = x[((img * ch + cc) * h + i) * static_cast<int64_t>(w) + j];
  }
  y[idx] = v;
}

// ops::patch_rows where Kp is a multiple of 8 and y is 16-byte aligned: one thread per 8 consecutive columns of a
// row, stepping (channel, ky, kx) from the first column rather than dividing for every element, and storing the 8
// as 16-byte words (at DA2-L's batch 16 the element-wise kernel above took 138 µs, bound by its 64-bit divisions).
template <typename T>
__global__ void __launch_bounds__(256) patch_rows_vec8_kernel(const T* __restrict__ x, T* __restrict__ y, int ch,
                                                               int h, int w, int k, int kp8, int64_t total8) {
  pdl_enter();
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total8) return;
  const int gw = w / k, patches = (h / k) * gw, kk = k * k, cols = ch * kk;
  const int64_t r = idx / kp8, img = r / patches;
  const int col0 = static_cast<int>(idx - r * kp8) * 8, p = static_cast<int>(r - img * patches);
  int cc = col0 / kk, rem = col0 - cc * kk, ky = rem / k, kx = rem - ky * k;
  // The patch's top-left pixel in channel 0 of its image.
  const T* patch = x + img * ch * int64_t{h} * w + static_cast<int64_t>(p / gw * k) * w + p % gw * k;
  alignas(16) T v[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    v[e] = col0 + e < cols ? patch[(static_cast<int64_t>(cc) * h + ky) * w + kx] : mma::from_float<T>(0.f);
    if (++kx == k) {
      kx = 0;
      if (++ky == k) ky = 0, ++cc;
    }
  }
  uint4* dst = reinterpret_cast<uint4*>(y + idx * 8);
#pragma unroll
  for (int q = 0; q < static_cast<int>(8 * sizeof(T) / 16); ++q) dst[q] = reinterpret_cast<const uint4*>(v)[q];
}

}  // namespace

void patch_rows(CudaContext& c, const Tensor& x, int k, Tensor& y) {
  const int64_t total = y.numel();
  if (total == 0) return;
  DACPP_CHECK(x.dim(1) * k * k <= INT_MAX && x.dim(2) * x.dim(3) <= INT_MAX && y.dim(2) <= INT_MAX &&
                  (total + 255) / 256 <= INT_MAX,
              ErrorCode::Unsupported, "patch_rows (cuda): shape ", shape_str(y.shape()), " exceeds the kernel's limits");
  c.make_current();
  const int kp = static_cast<int>(y.dim(2));
  if (kp % 8 == 0 && aligned_to(y.raw(), 16)) {
    const int64_t total8 = total / 8;
    dispatch_float(x.dtype(), "patch_rows", [&](auto tag) {
      using T = decltype(tag);
      launch_kernel(c, "patch_rows", patch_rows_vec8_kernel<T>, static_cast<unsigned>((total8 + 255) / 256), 256, 0,
                    static_cast<const T*>(x.raw()), static_cast<T*>(y.raw()), static_cast<int>(x.dim(1)),
                    static_cast<int>(x.dim(2)), static_cast<int>(x.dim(3)), k, kp / 8, total8);
    });
    return;
  }
  const unsigned grid = static_cast<unsigned>((total + 255) / 256);
  dispatch_float(x.dtype(), "patch_rows", [&](auto tag) {
    using T = decltype(tag);
    launch_kernel(c, "patch_rows", patch_rows_kernel<T>, grid, 256, 0, static_cast<const T*>(x.raw()),
                  static_cast<T*>(y.raw()), static_cast<int>(x.dim(1)), static_cast<int>(x.dim(2)),
                  static_cast<int>(x.dim(3)), k, static_cast<int>(y.dim(2)), total);
  });
}

void im2col3x3_tokens(CudaContext& c, const Tensor& tokens, int64_t h, int64_t w, int ky0, int kyn, bool ones,
                      Tensor& y) {
  const int64_t total = y.numel();
  if (total == 0) return;
  DACPP_CHECK(h * w <= INT_MAX && tokens.dim(2) <= INT_MAX && y.dim(1) <= INT_MAX && (total + 255) / 256 <= INT_MAX,
              ErrorCode::Unsupported, "im2col3x3_tokens (cuda): shape ", shape_str(y.shape()),
              " exceeds the kernel's limits");
  c.make_current();
  const int cp = static_cast<int>(y.dim(1) / (3 * int64_t{kyn}));
  const unsigned grid = static_cast<unsigned>((total + 255) / 256);
  dispatch_float(tokens.dtype(), "im2col3x3_tokens", [&](auto tag) {
    using T = decltype(tag);
    launch_kernel(c, "im2col3x3_tokens", im2col3x3_tokens_kernel<T>, grid, 256, 0, static_cast<const T*>(tokens.raw()),
                  static_cast<T*>(y.raw()), static_cast<int>(h), static_cast<int>(w), static_cast<int>(tokens.dim(2)),
                  cp, ky0, kyn, ones ? 1 : 0, total);
  });
}

// Every width with_vector_width can pick for T: the scatter at that width.
template <typename T, int V = 16 / static_cast<int>(sizeof(T))>
void add_scatter_variants(std::vector<KernelInfo>& out, const char* type) {
  out.push_back({str_cat("conv_transpose2d_scatter<", type, ",", V, ">"),
                 reinterpret_cast<const void*>(&deconv_scatter_kernel<T, V>)});
  if constexpr (V > 1) add_scatter_variants<T, V / 2>(out, type);
}

std::vector<KernelInfo> conv_transpose2d_kernels() {
  std::vector<KernelInfo> out = {
      {"conv_transpose2d_gather<f32>", reinterpret_cast<const void*>(&conv_transpose2d_gather<float>)},
      {"conv_transpose2d_gather<bf16>", reinterpret_cast<const void*>(&conv_transpose2d_gather<__nv_bfloat16>)},
      {"conv_transpose2d_gather<f16>", reinterpret_cast<const void*>(&conv_transpose2d_gather<__half>)},
  };
  for (const auto& [name, k] : std::vector<std::pair<const char*, const void*>>{
           {"conv_transpose2d_tokens_scatter<f32,4>", reinterpret_cast<const void*>(&tokens_scatter_kernel<float, 4>)},
           {"conv_transpose2d_tokens_scatter<f32,2>", reinterpret_cast<const void*>(&tokens_scatter_kernel<float, 2>)},
           {"conv_transpose2d_tokens_scatter<bf16,4>",
            reinterpret_cast<const void*>(&tokens_scatter_kernel<__nv_bfloat16, 4>)},
           {"conv_transpose2d_tokens_scatter<bf16,2>",
            reinterpret_cast<const void*>(&tokens_scatter_kernel<__nv_bfloat16, 2>)},
           {"conv_transpose2d_tokens_scatter<f16,4>", reinterpret_cast<const void*>(&tokens_scatter_kernel<__half, 4>)},
           {"conv_transpose2d_tokens_scatter<f16,2>",
            reinterpret_cast<const void*>(&tokens_scatter_kernel<__half, 2>)}})
    out.push_back({name, k});
  out.push_back({"im2col3x3_tokens<f32>", reinterpret_cast<const void*>(&im2col3x3_tokens_kernel<float>)});
  out.push_back({"im2col3x3_tokens<bf16>", reinterpret_cast<const void*>(&im2col3x3_tokens_kernel<__nv_bfloat16>)});
  out.push_back({"im2col3x3_tokens<f16>", reinterpret_cast<const void*>(&im2col3x3_tokens_kernel<__half>)});
  out.push_back({"patch_rows<f32>", reinterpret_cast<const void*>(&patch_rows_kernel<float>)});
  out.push_back({"patch_rows<bf16>", reinterpret_cast<const void*>(&patch_rows_kernel<__nv_bfloat16>)});
  out.push_back({"patch_rows<f16>", reinterpret_cast<const void*>(&patch_rows_kernel<__half>)});
  out.push_back({"patch_rows_vec8<f32>", reinterpret_cast<const void*>(&patch_rows_vec8_kernel<float>)});
  out.push_back({"patch_rows_vec8<bf16>", reinterpret_cast<const void*>(&patch_rows_vec8_kernel<__nv_bfloat16>)});
  out.push_back({"patch_rows_vec8<f16>", reinterpret_cast<const void*>(&patch_rows_vec8_kernel<__half>)});
  add_scatter_variants<float>(out, "f32");
  add_scatter_variants<__nv_bfloat16>(out, "bf16");
  add_scatter_variants<__half>(out, "f16");
  return out;
}

}  // namespace dacpp::cuda
