// layer_norm over the last dim, one warp per row, f32 math whatever the storage dtype: mean, then the biased
// variance from (x - mean)^2 (two passes over the row, as the CPU reference), then y = (x - mean) * rstd * gamma +
// beta. Rows whose length is a multiple of 16 bytes' worth of elements use 16-byte loads. y may alias x: each
// element is read and written by the same lane. add_scaled_layer_norm runs the same row function with the
// residual update x ← x + a ⊙ ls folded into its first pass.
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// One row, one warp. V: elements per load (1, or a 16-byte vector's worth when the row length and pointers allow).
// T: x's dtype; TY: y's (T, or bf16 / f16 from an f32 stream). kAdd: first x ← x + a ⊙ ls (ls may be null: x + a;
// a in TA), written back — the residual update of a pre-norm block fused with the next norm. Pass 1 sums the
// (updated) row; passes 2 and 3 read it back (written by the same lane, so visible to it; the row is in L1/L2) for
// the biased variance and y = (x - mean) · rstd · gamma + beta. y may alias x when !kAdd (same lane, same
// elements).
template <typename T, int V, typename TY, typename TA, bool kAdd>
__device__ __forceinline__ void layer_norm_row(T* x, const TA* a, const float* __restrict__ ls,
                                               const float* __restrict__ gamma, const float* __restrict__ beta, TY* y,
                                               int64_t cols, float eps) {
  struct alignas(sizeof(T) * V) Pack {
    T v[V];
  };
  struct alignas(sizeof(TA) * V) PackA {
    TA v[V];
  };
  struct alignas(sizeof(TY) * V) PackY {
    TY v[V];
  };
  const int lane = threadIdx.x & 31;
  Pack* xr = reinterpret_cast<Pack*>(x);
  PackY* yr = reinterpret_cast<PackY*>(y);
  const int64_t packs = cols / V;
  float s = 0.f;
  for (int64_t p = lane; p < packs; p += 32) {
    Pack v = xr[p];
    if constexpr (kAdd) {
      const PackA av = reinterpret_cast<const PackA*>(a)[p];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float t = to_f32(av.v[j]);
        v.v[j] = from_f32<T>(to_f32(v.v[j]) + (ls ? t * ls[p * V + j] : t));
      }
      xr[p] = v;
    }
#pragma unroll
    for (int j = 0; j < V; ++j) s += to_f32(v.v[j]);
  }
  const float mean = warp_sum(s) / static_cast<float>(cols);
  float q = 0.f;
  for (int64_t p = lane; p < packs; p += 32) {
    const Pack v = xr[p];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const float d = to_f32(v.v[j]) - mean;
      q += d * d;
    }
  }
  const float rstd = 1.f / sqrtf(warp_sum(q) / static_cast<float>(cols) + eps);
  for (int64_t p = lane; p < packs; p += 32) {
    const Pack v = xr[p];
    PackY o;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const int64_t c = p * V + j;
      o.v[j] = from_f32<TY>((to_f32(v.v[j]) - mean) * rstd * gamma[c] + beta[c]);
    }
    yr[p] = o;
  }
}

// Output row r normalises input row r + (r / kept + 1)·skip: each group of `kept` rows follows `skip` rows that are
// left out (layer_norm_drop_leading; skip = 0: row r itself).
template <typename T, int V, typename TY = T>
__global__ void layer_norm_kernel(const T* x, const float* __restrict__ gamma, const float* __restrict__ beta, TY* y,
                                  int64_t rows, int64_t cols, float eps, int64_t kept, int64_t skip) {
  pdl_enter();
  const int64_t row = blockIdx.x * int64_t{kWarpsPerBlock} + (threadIdx.x >> 5);
  if (row >= rows) return;
  const int64_t in_row = skip == 0 ? row : row + (row / kept + 1) * skip;
  // Read-only without kAdd: the const_cast only lets one row function serve both kernels.
  layer_norm_row<T, V, TY, T, false>(const_cast<T*>(x + in_row * cols), nullptr, nullptr, gamma, beta, y + row * cols,
                                     cols, eps);
}

// x ← x + a ⊙ ls, then y = layer_norm(x) (f32 stream x, branch a in TA, y in TY); equals add_scaled followed by
// layer_norm (same sums in the same order).
template <int V, typename TA, typename TY>
__global__ void add_scaled_layer_norm_kernel(float* x, const TA* __restrict__ a, const float* __restrict__ ls,
                                             const float* __restrict__ gamma, const float* __restrict__ beta,
                                             TY* __restrict__ y, int64_t rows, int64_t cols, float eps) {
  pdl_enter();
  const int64_t row = blockIdx.x * int64_t{kWarpsPerBlock} + (threadIdx.x >> 5);
  if (row >= rows) return;
  layer_norm_row<float, V, TY, TA, true>(x + row * cols, a + row * cols, ls, gamma, beta, y + row * cols, cols, eps);
}

// One output of add_scaled_layer_norm_regs_kernel: y[img·(n − skip) + t − skip] = layer_norm(x[img·n + t]; gamma,
// beta, eps) for the rows t >= skip of each image's n rows — with skip = 0 every row in place (o1: the next
// block's norm), otherwise layer_norm_drop_leading's rows (o2: a collected layer's output norm). y null: none.
template <typename TY>
struct NormOut {
  const float* gamma = nullptr;
  const float* beta = nullptr;
  TY* y = nullptr;
  float eps = 0.f;
  int n = 1, skip = 0;
};

// add_scaled_layer_norm_kernel for rows of cols = 32·4·NP (f32 stream, 4 elements per 16-byte load): each lane
// keeps its packs in registers, so the variance and output passes do not read the row back. WPR warps share a row
// (NP / WPR packs per lane; their partial sums meet in shared memory, added in warp order): DA2-L's 1370 rows of
// 1024 gave one warp per row only ~10 warps per multiprocessor, and Nsight Compute found the one-warp kernel idle
// on 88 % of its cycles (15.9 % achieved occupancy). With WPR = 1 the sums are layer_norm_row's, in its order.
// A lane's columns of ls and of o1's gamma and beta (16-byte loads) are read before pdl_enter: they are weights,
// placed on the device at load and never written by a kernel of the forward, so the loads overlap the launch and
// the previous kernel's tail instead of adding an L2 round trip after the row's sums (Nsight Compute, session 19:
// DA2-L's 6.6 µs launches issued on 19 % of their cycles, latency-bound). o2 (y null: none) normalises the same
// rows with its own gamma, beta and eps from the same sums — a collected layer's output norm beside the next
// block's first norm, which otherwise took a launch of its own that read the row back (7-12 µs on DA2-L's
// critical path, session 25's timeline); its weights are read after the sums (4 launches of DA2-L's 47).
// kAdd false: no residual update (a and ls unused, x only read) — the norms of a stream that a GEMM has already
// added to (ops::linear_add).
template <int NP, int WPR, typename TA, typename TY, bool kSecond, bool kAdd = true>
__global__ void add_scaled_layer_norm_regs_kernel(float* x, const TA* __restrict__ a, const float* __restrict__ ls,
                                                  NormOut<TY> o1, NormOut<TY> o2, int64_t rows) {
  static_assert(NP % WPR == 0 && kWarpsPerBlock % WPR == 0, "a row's packs split evenly over its warps");
  constexpr int V = 4, kCols = 32 * V * NP, kPer = NP / WPR;
  struct alignas(16) Pack {
    float v[V];
  };
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, part = warp % WPR;
  Pack lsv[kPer], gv[kPer], bv[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int p = lane + 32 * (part + WPR * i);
    if (kAdd && ls) lsv[i] = reinterpret_cast<const Pack*>(ls)[p];
    if (!kSecond || o1.y) {
      gv[i] = reinterpret_cast<const Pack*>(o1.gamma)[p];
      bv[i] = reinterpret_cast<const Pack*>(o1.beta)[p];
    }
  }
  pdl_enter();
  struct alignas(sizeof(TA) * V) PackA {
    TA v[V];
  };
  struct alignas(sizeof(TY) * V) PackY {
    TY v[V];
  };
  __shared__ float partial[2][kWarpsPerBlock];
  const int64_t row = blockIdx.x * int64_t{kWarpsPerBlock / WPR} + warp / WPR;
  const bool live = row < rows;
  if (WPR == 1 && !live) return;  // no barrier below when a warp has the row to itself
  // The sum over the row's warps of each one's v (warp order), or v itself with one warp per row.
  const auto row_sum = [&](float v, float* slots) {
    if constexpr (WPR == 1) {
      return v;
    } else {
      if (lane == 0) slots[warp] = v;
      __syncthreads();
      float t = 0.f;
#pragma unroll
      for (int w = 0; w < WPR; ++w) t += slots[warp - part + w];
      return t;
    }
  };
  const int64_t base = live ? row * kCols : 0;
  Pack* xr = reinterpret_cast<Pack*>(x + base);
  const PackA* ar = reinterpret_cast<const PackA*>(a + base);
  Pack v[kPer];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int p = lane + 32 * (part + WPR * i);
    if (!live) break;
    v[i] = xr[p];
    if constexpr (kAdd) {
      const PackA av = ar[p];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float t = to_f32(av.v[j]);
        v[i].v[j] = v[i].v[j] + (ls ? t * lsv[i].v[j] : t);
      }
      xr[p] = v[i];
    }
#pragma unroll
    for (int j = 0; j < V; ++j) s += v[i].v[j];
  }
  const float mean = row_sum(warp_sum(s), partial[0]) / static_cast<float>(kCols);
  float q = 0.f;
  if (live)
#pragma unroll
    for (int i = 0; i < kPer; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float d = v[i].v[j] - mean;
        q += d * d;
      }
  const float var = row_sum(warp_sum(q), partial[1]) / static_cast<float>(kCols);
  if (!live) return;
  if (!kSecond || o1.y) {
    const float rstd = 1.f / sqrtf(var + o1.eps);
    PackY* yr = reinterpret_cast<PackY*>(o1.y + row * kCols);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int p = lane + 32 * (part + WPR * i);
      PackY o;
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = from_f32<TY>((v[i].v[j] - mean) * rstd * gv[i].v[j] + bv[i].v[j]);
      yr[p] = o;
    }
  }
  if constexpr (kSecond) {
    // rows < 2^31 (launch_fused_regs): the image and token of the row in 32 bits.
    const int t = static_cast<int>(row) % o2.n;
    if (t < o2.skip) return;
    const float rstd = 1.f / sqrtf(var + o2.eps);
    const int64_t r2 = static_cast<int64_t>(static_cast<int>(row) / o2.n) * (o2.n - o2.skip) + t - o2.skip;
    PackY* yr = reinterpret_cast<PackY*>(o2.y + r2 * kCols);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int p = lane + 32 * (part + WPR * i);
      // The updated row read back (this lane's own stores) rather than v kept live through o1's stores.
      const Pack xv = xr[p];
      const Pack g = reinterpret_cast<const Pack*>(o2.gamma)[p], b = reinterpret_cast<const Pack*>(o2.beta)[p];
      PackY o;
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = from_f32<TY>((xv.v[j] - mean) * rstd * g.v[j] + b.v[j]);
      yr[p] = o;
    }
  }
}

// Warps per row of the register-resident kernel for NP packs: 4 where they divide (1024 and 1536 columns), 2 for
// 768, 1 for 384.
template <int NP>
constexpr int warps_per_row() {
  return NP % 4 == 0 ? 4 : NP % 2 == 0 ? 2 : 1;
}

// The register-resident row widths, in packs of 128 elements: the ViT widths 384, 768, 1024, 1536 (S, B, L, G).
using RegPacks = std::integer_sequence<int, 3, 6, 8, 12>;

// f(std::integral_constant<int, NP>{}) for each NP of RegPacks in turn until one returns true; whether one did.
template <typename F, int... NP>
bool any_reg_packs(F&& f, std::integer_sequence<int, NP...>) {
  return (f(std::integral_constant<int, NP>{}) || ...);
}

// The second norm's output for the register-resident kernel (none when not asked for).
template <typename TY>
NormOut<TY> second_out(const SecondNorm& s, const Tensor& x) {
  NormOut<TY> o;
  if (s.y == nullptr) return o;
  o.gamma = static_cast<const float*>(s.gamma->raw());
  o.beta = static_cast<const float*>(s.beta->raw());
  o.y = static_cast<TY*>(s.y->raw());
  o.eps = s.eps;
  o.n = static_cast<int>(x.dim(1));
  o.skip = static_cast<int>(s.skip);
  return o;
}

// True when the register-resident kernel took the call (rows of 384 / 768 / 1024 / 1536 f32 with 16-byte aligned
// operands, both outputs in TY); the second norm, when asked for, is then done too.
template <typename TA, typename TY>
bool launch_fused_regs(CudaContext& c, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                       const Tensor& beta, float eps, Tensor& y, const SecondNorm& second) {
  const int64_t cols = x.dim(-1);
  const int64_t rows = x.numel() / cols;
  float* xp = static_cast<float*>(x.raw());
  const TA* ap = static_cast<const TA*>(a.raw());
  const float* lp = ls.defined() ? static_cast<const float*>(ls.raw()) : nullptr;
  const bool add = a.defined();  // else the norms of x alone
  if (second.y && y.defined() && second.y->dtype() != y.dtype()) return false;
  if (rows > 0x7fffffff) return false;  // the kernel finds a row's image and token in 32 bits
  // o1: every row in place (n = 1, skip = 0).
  NormOut<TY> o1;
  o1.gamma = static_cast<const float*>(gamma.raw());
  o1.beta = static_cast<const float*>(beta.raw());
  o1.y = y.defined() ? static_cast<TY*>(y.raw()) : nullptr;
  o1.eps = eps;
  const NormOut<TY> o2 = second_out<TY>(second, x);
  const auto aligned_out = [](const NormOut<TY>& o) {
    return o.y == nullptr || (aligned_to(o.y, 4 * sizeof(TY)) && aligned_to(o.gamma, 16) && aligned_to(o.beta, 16));
  };
  if (cols % 4 != 0 || !aligned_to(xp, 16) || (add && !aligned_to(ap, 4 * sizeof(TA))) || (lp && !aligned_to(lp, 16)) ||
      !aligned_out(o1) || !aligned_out(o2))
    return false;
  const auto regs = [&](auto np) {
    constexpr int kNP = decltype(np)::value;
    if (cols != 128 * kNP) return false;
    constexpr int kWpr = warps_per_row<kNP>(), kRowsPerBlock = kWarpsPerBlock / kWpr;
    const int64_t reg_blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    DACPP_CHECK(reg_blocks <= 0x7fffffff, ErrorCode::Unsupported, "add_scaled_layer_norm: ", rows,
                " rows exceed the CUDA grid");
    // The second norm's code in the kernel costs registers (54 against 48 for DA2-L's rows: 9 blocks per SM
    // instead of 10), so only the 4 launches per forward that take it run that instantiation.
    const unsigned grid = static_cast<unsigned>(reg_blocks);
    const auto go = [&](auto kernel) {
      launch_kernel(c, "add_scaled_layer_norm_regs", kernel, grid, 32 * kWarpsPerBlock, 0, xp, ap, lp, o1, o2, rows);
    };
    if (o2.y) {
      if (add)
        go(add_scaled_layer_norm_regs_kernel<kNP, kWpr, TA, TY, true, true>);
      else
        go(add_scaled_layer_norm_regs_kernel<kNP, kWpr, TA, TY, true, false>);
    } else {
      if (add)
        go(add_scaled_layer_norm_regs_kernel<kNP, kWpr, TA, TY, false, true>);
      else
        go(add_scaled_layer_norm_regs_kernel<kNP, kWpr, TA, TY, false, false>);
    }
    return true;
  };
  return any_reg_packs(regs, RegPacks{});
}

// The row-function kernels for rows the register-resident kernel does not take (y defined; no second norm).
template <typename TA, typename TY>
void launch_fused_rows(CudaContext& c, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                       const Tensor& beta, float eps, Tensor& y) {
  const int64_t cols = x.dim(-1);
  const int64_t rows = x.numel() / cols;
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  DACPP_CHECK(blocks <= 0x7fffffff, ErrorCode::Unsupported, "add_scaled_layer_norm: ", rows,
              " rows exceed the CUDA grid");
  float* xp = static_cast<float*>(x.raw());
  const TA* ap = static_cast<const TA*>(a.raw());
  TY* yp = static_cast<TY*>(y.raw());
  const float* lp = ls.defined() ? static_cast<const float*>(ls.raw()) : nullptr;
  const float* gp = static_cast<const float*>(gamma.raw());
  const float* bp = static_cast<const float*>(beta.raw());
  // 4 elements per step: 16-byte loads of x, 8-byte of a bf16 / f16 branch.
  if (cols % 4 == 0 && aligned_to(xp, 16) && aligned_to(ap, 4 * sizeof(TA)) && aligned_to(yp, 4 * sizeof(TY))) {
    launch_kernel(c, "add_scaled_layer_norm_vec", add_scaled_layer_norm_kernel<4, TA, TY>,
                  static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, xp, ap, lp, gp, bp, yp, rows, cols, eps);
  } else {
    launch_kernel(c, "add_scaled_layer_norm", add_scaled_layer_norm_kernel<1, TA, TY>, static_cast<unsigned>(blocks),
                  32 * kWarpsPerBlock, 0, xp, ap, lp, gp, bp, yp, rows, cols, eps);
  }
}

template <typename T, typename TY = T>
void launch(CudaContext& c, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
            int64_t skip = 0) {
  const int64_t cols = x.dim(-1);
  const int64_t rows = y.numel() / cols, kept = skip == 0 ? rows : x.dim(1) - skip;
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  DACPP_CHECK(blocks <= 0x7fffffff, ErrorCode::Unsupported, "layer_norm: ", rows, " rows exceed the CUDA grid");
  constexpr int kN = Vec16<T>::kN;
  const T* xp = static_cast<const T*>(x.raw());
  TY* yp = static_cast<TY*>(y.raw());
  const float* gp = static_cast<const float*>(gamma.raw());
  const float* bp = static_cast<const float*>(beta.raw());
  if (cols % kN == 0 && aligned_to(xp, 16) && aligned_to(yp, 16)) {
    launch_kernel(c, "layer_norm_vec", layer_norm_kernel<T, kN, TY>, static_cast<unsigned>(blocks), 32 * kWarpsPerBlock,
                  0, xp, gp, bp, yp, rows, cols, eps, kept, skip);
  } else {
    launch_kernel(c, "layer_norm", layer_norm_kernel<T, 1, TY>, static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0,
                  xp, gp, bp, yp, rows, cols, eps, kept, skip);
  }
}

// layer_norm and layer_norm_drop_leading (skip > 0): the dtype pairs they run, `op` naming the call in errors.
void run_layer_norm(CudaContext& c, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                    int64_t skip, const char* op) {
  if (y.numel() == 0) return;
  c.make_current();
  if (x.dtype() == DType::F32 && y.dtype() == DType::BF16)
    return launch<float, __nv_bfloat16>(c, x, gamma, beta, eps, y, skip);
  if (x.dtype() == DType::F32 && y.dtype() == DType::F16) return launch<float, __half>(c, x, gamma, beta, eps, y, skip);
  DACPP_CHECK(x.dtype() == y.dtype(), ErrorCode::Unsupported, op, " (cuda): ", dtype_name(x.dtype()), " -> ",
              dtype_name(y.dtype()));
  dispatch_float(x.dtype(), op, [&](auto tag) { launch<decltype(tag)>(c, x, gamma, beta, eps, y, skip); });
}

}  // namespace

void layer_norm(CudaContext& c, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y) {
  // An f32 stream's rows that the register-resident kernel takes run there (norm only: x read, not written): DA2-L's
  // first block norm, 8.1 µs in the row kernel on the H100 (session 36's timeline), where the same kernel's norms of
  // the later blocks take 3.3-3.5.
  if (y.numel() > 0 && x.dtype() == DType::F32 && y.shape() == x.shape()) {
    c.make_current();
    bool done = false;
    Tensor xs = x;  // a handle: launch_fused_regs without a branch only reads x
    dispatch_float(y.dtype(), "layer_norm", [&](auto tag) {
      using TY = decltype(tag);
      done = launch_fused_regs<TY, TY>(c, xs, Tensor(), Tensor(), gamma, beta, eps, y, SecondNorm{});
    });
    if (done) return;
  }
  run_layer_norm(c, x, gamma, beta, eps, y, 0, "layer_norm");
}

void layer_norm_drop_leading(CudaContext& c, const Tensor& x, int64_t skip, const Tensor& gamma, const Tensor& beta,
                             float eps, Tensor& y) {
  run_layer_norm(c, x, gamma, beta, eps, y, skip, "layer_norm_drop_leading");
}

void add_scaled_layer_norm(CudaContext& c, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                           const Tensor& beta, float eps, Tensor& y, const SecondNorm& second) {
  if (x.numel() == 0) return;
  DACPP_CHECK(x.dtype() == DType::F32, ErrorCode::Unsupported, "add_scaled_layer_norm (cuda): a ",
              dtype_name(x.dtype()), " stream (f32 only)");
  c.make_current();
  const DType out = y.defined() ? y.dtype() : second.y->dtype();
  bool fused = false;
  // Without a (the norms of x alone) TA is only a placeholder.
  dispatch_float(a.defined() ? a.dtype() : out, "add_scaled_layer_norm", [&](auto atag) {
    dispatch_float(out, "add_scaled_layer_norm", [&](auto ytag) {
      using TA = decltype(atag);
      using TY = decltype(ytag);
      fused = launch_fused_regs<TA, TY>(c, x, a, ls, gamma, beta, eps, y, second);
      if (fused || !y.defined()) return;
      if (a.defined())
        launch_fused_rows<TA, TY>(c, x, a, ls, gamma, beta, eps, y);
      else
        run_layer_norm(c, x, gamma, beta, eps, y, 0, "add_scaled_layer_norm");
    });
  });
  if (fused || second.y == nullptr) return;
  if (!y.defined() && a.defined()) add_scaled(c, x, a, ls, x);
  run_layer_norm(c, x, *second.gamma, *second.beta, second.eps, *second.y, second.skip, "add_scaled_layer_norm");
}

template <typename TA, typename TY>
void add_regs_kernels(std::vector<KernelInfo>& out, const char* type) {
  any_reg_packs(
      [&](auto np) {
        constexpr int kNP = decltype(np)::value;
        constexpr int kWpr = warps_per_row<kNP>();
        out.push_back({str_cat("add_scaled_layer_norm_regs<", 128 * kNP, ",", type, ">"),
                       reinterpret_cast<const void*>(&add_scaled_layer_norm_regs_kernel<kNP, kWpr, TA, TY, false>)});
        out.push_back({str_cat("add_scaled_layer_norm_regs<", 128 * kNP, ",", type, ",second norm>"),
                       reinterpret_cast<const void*>(&add_scaled_layer_norm_regs_kernel<kNP, kWpr, TA, TY, true>)});
        // The norms of a stream a GEMM has added to (no a: TA is TY's placeholder).
        out.push_back(
            {str_cat("add_scaled_layer_norm_regs<", 128 * kNP, ",", type, ",norm only>"),
             reinterpret_cast<const void*>(&add_scaled_layer_norm_regs_kernel<kNP, kWpr, TY, TY, false, false>)});
        out.push_back(
            {str_cat("add_scaled_layer_norm_regs<", 128 * kNP, ",", type, ",norm only,second norm>"),
             reinterpret_cast<const void*>(&add_scaled_layer_norm_regs_kernel<kNP, kWpr, TY, TY, true, false>)});
        return false;  // every width
      },
      RegPacks{});
}

std::vector<KernelInfo> layer_norm_kernels() {
  std::vector<KernelInfo> out = {
      {"add_scaled_layer_norm<4,bf16,bf16>",
       reinterpret_cast<const void*>(&add_scaled_layer_norm_kernel<4, __nv_bfloat16, __nv_bfloat16>)},
      {"add_scaled_layer_norm<1,bf16,bf16>",
       reinterpret_cast<const void*>(&add_scaled_layer_norm_kernel<1, __nv_bfloat16, __nv_bfloat16>)},
      {"add_scaled_layer_norm<4,f16,f16>",
       reinterpret_cast<const void*>(&add_scaled_layer_norm_kernel<4, __half, __half>)},
      {"add_scaled_layer_norm<1,f16,f16>",
       reinterpret_cast<const void*>(&add_scaled_layer_norm_kernel<1, __half, __half>)},
      {"add_scaled_layer_norm<4,f32,f32>",
       reinterpret_cast<const void*>(&add_scaled_layer_norm_kernel<4, float, float>)},
      {"add_scaled_layer_norm<1,f32,f32>",
       reinterpret_cast<const void*>(&add_scaled_layer_norm_kernel<1, float, float>)},
      {"layer_norm<f32,4>", reinterpret_cast<const void*>(&layer_norm_kernel<float, 4>)},
      {"layer_norm<f32,1>", reinterpret_cast<const void*>(&layer_norm_kernel<float, 1>)},
      {"layer_norm<bf16,8>", reinterpret_cast<const void*>(&layer_norm_kernel<__nv_bfloat16, 8>)},
      {"layer_norm<bf16,1>", reinterpret_cast<const void*>(&layer_norm_kernel<__nv_bfloat16, 1>)},
      {"layer_norm<f16,8>", reinterpret_cast<const void*>(&layer_norm_kernel<__half, 8>)},
      {"layer_norm<f16,1>", reinterpret_cast<const void*>(&layer_norm_kernel<__half, 1>)},
      {"layer_norm<f32,4,bf16>", reinterpret_cast<const void*>(&layer_norm_kernel<float, 4, __nv_bfloat16>)},
      {"layer_norm<f32,1,bf16>", reinterpret_cast<const void*>(&layer_norm_kernel<float, 1, __nv_bfloat16>)},
      {"layer_norm<f32,4,f16>", reinterpret_cast<const void*>(&layer_norm_kernel<float, 4, __half>)},
      {"layer_norm<f32,1,f16>", reinterpret_cast<const void*>(&layer_norm_kernel<float, 1, __half>)},
  };
  add_regs_kernels<__nv_bfloat16, __nv_bfloat16>(out, "bf16");
  add_regs_kernels<__half, __half>(out, "f16");
  add_regs_kernels<float, float>(out, "f32");
  return out;
}

}  // namespace dacpp::cuda
