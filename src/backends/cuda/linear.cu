// linear through cuBLASLt: y[M, N] = act(x[M, K] · w[N, K]^T + bias[N]).
//
// Row-major to column-major: cuBLASLt is column-major, and a row-major [R, C] buffer read column-major is the
// [C, R] matrix (its transpose) with leading dimension C. So, in cuBLASLt's terms,
//   x buffer = X^T : [K, M], ld K        w buffer = W^T : [K, N], ld K        y buffer = Y^T : [N, M], ld N.
// Y = X·W^T  <=>  Y^T = W·X^T = (W^T)^T · X^T, i.e. D[N, M] = op(A)·op(B) with
//   A = w buffer (stored [K, N], ld K), transa = T  -> op(A) = W   [N, K]
//   B = x buffer (stored [K, M], ld K), transb = N  -> op(B) = X^T [K, M]
//   D = y buffer (stored [N, M], ld N); "m" = N, "n" = M, "k" = K.
// The bias epilogue adds a vector of length m = N broadcast over the M columns of D: exactly bias[n] per row of y.
//
// Precision: compute type CUBLAS_COMPUTE_32F (pure f32 for f32 inputs: no TF32; f32 accumulation for bf16 / f16),
// scale type f32. cuBLASLt wants the bias in D's type, so for bf16 / f16 the f32 bias is converted once per
// weight (CudaContext::converted) and the copy reused by every later call and graph replay. ReLU is fused
// (RELU_BIAS / RELU). GELU: cuBLASLt's GELU epilogue is the tanh form, within ~5e-4 of the exact erf GELU before
// rounding — far below a bf16 / f16 output's rounding step at the values where they differ (bf16 ulp 7.8e-3 at
// |x| = 1, f16 ulp 9.8e-4) — and it rounds once from the f32 accumulator, where the unfused path rounds the GEMM
// output and then the GELU. So bf16 / f16 use GELU_BIAS / GELU; f32, where the exact form matters at 1e-6, runs the
// BIAS epilogue followed by our exact erf GELU kernel in place.
// linear_add (y += x·w^T + bias into an f32 y, the residual stream): the same GEMM with beta 1 and an f32 D — the
// product added to y in f32 in the epilogue, never rounded to x's dtype — and the f32 bias as it is.
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {
namespace {

constexpr int kBlock = 256;

// y = act(y + bias) for K == 0 (y zeroed first, unless linear_add's), the exact GELU after the matmul (bias already
// added: null), and an f32 bias the GEMM could not read.
template <typename T>
__global__ void bias_act_kernel(T* y, const float* __restrict__ bias, int64_t m, int64_t n, int act) {
  pdl_enter();
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    float v = to_f32(y[i]) + (bias ? bias[i % n] : 0.f);
    if (act == static_cast<int>(Epilogue::Gelu)) v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    else if (act == static_cast<int>(Epilogue::Relu)) v = v > 0.f ? v : 0.f;
    y[i] = from_f32<T>(v);
  }
}

// The exact GELU in place over 16-byte vectors (nv counts vectors): the pass after the bias epilogue.
template <typename T>
__global__ void gelu_vec_kernel(Vec16<T>* y, int64_t nv) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < nv; i += int64_t{gridDim.x} * blockDim.x) {
    Vec16<T> v = y[i];
#pragma unroll
    for (int j = 0; j < Vec16<T>::kN; ++j) {
      const float x = to_f32(v.v[j]);
      v.v[j] = from_f32<T>(0.5f * x * (1.f + erff(x * 0.70710678118654752f)));
    }
    y[i] = v;
  }
}

constexpr int kDerivedPaddedRows = 6;  // CudaContext::derived kind: w [N][K] in rows of kp (pad_k), zero tail

// The K a linear's operands are padded to (K itself when they need no padding). cuBLASLt gives rows whose stride is
// not a multiple of 16 bytes only its sm_80 / sm_75 "align" kernels: DA2-L's patch embedding (K = 3·14·14 = 588,
// 1176 bytes) ran a cutlass 128x128 align2 kernel for 20.4 µs, ~80 TFLOP/s (session 25's timeline). Padded to a
// multiple of 16 bytes, with x's rows copied (one pass over M·K elements) and w's derived once per weight, it gets
// the aligned Hopper kernels. Small products keep the plain call (the copy would cost more than it saves).
template <typename T>
int64_t pad_k(int64_t m, int64_t k) {
  constexpr int64_t kAlign = 16 / static_cast<int64_t>(sizeof(T));
  if (k % kAlign == 0 || m * k < (int64_t{1} << 16) || k > (int64_t{1} << 30)) return k;
  return (k + kAlign - 1) / kAlign * kAlign;
}

template <typename T>
void launch_bias_act(CudaContext& c, Tensor& y, const float* bias, int64_t m, int64_t n, Epilogue act) {
  constexpr int kN = Vec16<T>::kN;
  if (!bias && act == Epilogue::Gelu && (m * n) % kN == 0 && aligned_to(y.raw(), 16)) {
    launch_kernel(c, "linear_gelu_vec", gelu_vec_kernel<T>, grid_for(c, m * n / kN, kBlock), kBlock, 0,
                  static_cast<Vec16<T>*>(y.raw()), m * n / kN);
    return;
  }
  launch_kernel(c, "linear_bias_act", bias_act_kernel<T>, grid_for(c, m * n, kBlock), kBlock, 0,
                static_cast<T*>(y.raw()), bias, m, n, static_cast<int>(act));
}

// Runs the GEMM of a linear (gemm itself, or a test's chosen candidate).
using GemmRun = std::function<void(const GemmSpec&, const void* a, const void* b, void* d, const void* bias,
                                   const char* what)>;

// `add` (linear_add): y is f32 and the result is added to it (act None): D = y in f32, accumulated into.
template <typename T>
void linear_typed(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                  bool add, const GemmRun& run) {
  const int64_t n = w.dim(0), k = w.dim(1), m = x.numel() / k;
  const float* bias_f32 = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  if (k == 0) {
    if (add) return launch_bias_act<float>(c, y, bias_f32, m, n, Epilogue::None);
    DACPP_CUDA_CHECK(cudaMemsetAsync(y.raw(), 0, y.nbytes(), c.stream()), "linear: zero y (K = 0)");
    return launch_bias_act<T>(c, y, bias_f32, m, n, act);
  }
  // cuBLASLt reads the bias with vector loads: an f32 bias that is not 16-byte aligned (a view into a packed
  // buffer) is added by bias_act_kernel instead. bf16 / f16 outputs take the bias in their own dtype: converted
  // once per weight and kept by the context.
  constexpr bool kF32 = std::is_same_v<T, float>;
  const bool f32_out = kF32 || add;
  const bool bias_unfused = bias_f32 && f32_out && !aligned_to(bias_f32, 16);
  std::shared_ptr<const void> bias_conv;
  const void* bias_d = bias_unfused ? nullptr : bias_f32;
  if (bias_f32 && !f32_out) {
    bias_conv = c.converted(bias, x.dtype());
    bias_d = bias_conv.get();
  }
  cublasLtEpilogue_t epi = bias_d ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  if (act == Epilogue::Relu && !bias_unfused) epi = bias_d ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  constexpr bool kFusedGelu = !kF32;
  if (act == Epilogue::Gelu && kFusedGelu) epi = bias_d ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  const std::string what = str_cat("linear ", w.name().empty() ? std::string("w") : "'" + w.name() + "'", " [",
                                   m, "x", k, "]·[", n, "x", k, "]^T");
  // Operands padded to kp (pad_k): x's rows into scratch, w's derived once per weight (a borrowed w, without
  // owned storage, behind x's rows in the same scratch, which a second scratch() call would replace).
  // (A borrowed bias's converted copy lives in scratch: such a call keeps its unpadded operands.)
  const int64_t kp = bias_f32 && !bias.storage() && !f32_out ? k : pad_k<T>(m, k);
  const void* a_ptr = w.raw();
  const void* b_ptr = x.raw();
  std::shared_ptr<const void> w_rows;
  if (kp != k) {
    const size_t x_bytes = (sizeof(T) * static_cast<size_t>(m * kp) + 255) / 256 * 256;
    const size_t w_bytes = sizeof(T) * static_cast<size_t>(n * kp);
    auto* mem = static_cast<char*>(c.scratch(x_bytes + (CudaContext::keeps(w) ? 0 : w_bytes), "linear padded rows"));
    pitch_rows(c, x.dtype(), x.raw(), mem, m, k, kp);
    const auto fill = [&](void* dst) { pitch_rows(c, w.dtype(), w.raw(), dst, n, k, kp); };
    w_rows = c.derived(w, kDerivedPaddedRows, w_bytes, fill, "linear padded weight rows", nullptr, mem + x_bytes);
    a_ptr = w_rows.get();
    b_ptr = mem;
  }
  // Row-major y[M, N] = x[M, K]·w[N, K]^T is column-major D[N, M] = (w buffer as [K, N])^T · (x buffer as [K, M]).
  GemmSpec g;
  g.m = n;
  g.n = m;
  g.k = kp;
  g.trans_a = true;
  g.lda = kp;
  g.ldb = kp;
  g.ldd = n;
  g.dtype = x.dtype();
  g.epilogue = epi;
  g.accumulate = add;
  g.d_f32 = add && !kF32;
  run(g, a_ptr, b_ptr, y.raw(), bias_d, what.c_str());
  if (add) {
    if (bias_unfused) launch_bias_act<float>(c, y, bias_f32, m, n, Epilogue::None);
    return;
  }
  if (bias_unfused) launch_bias_act<T>(c, y, bias_f32, m, n, act);
  else if (act == Epilogue::Gelu && !kFusedGelu) launch_bias_act<T>(c, y, nullptr, m, n, Epilogue::Gelu);
}

}  // namespace

namespace {

// linear with its GEMM run by `run`: the op itself, or the tests' candidate hooks below.
void run_linear(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                const GemmRun& run, bool add = false) {
  c.make_current();
  dispatch_float(x.dtype(), "linear", [&](auto tag) { linear_typed<decltype(tag)>(c, x, w, bias, y, act, add, run); });
}

}  // namespace

void linear(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act) {
  if (y.numel() == 0) return;
  run_linear(c, x, w, bias, y, act,
             [&](const GemmSpec& g, const void* a, const void* b, void* d, const void* bias_d, const char* what) {
               gemm(c, g, a, b, d, bias_d, what);
             });
}

void linear_add(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  if (y.numel() == 0) return;
  run_linear(
      c, x, w, bias, y, Epilogue::None,
      [&](const GemmSpec& g, const void* a, const void* b, void* d, const void* bias_d, const char* what) {
        gemm(c, g, a, b, d, bias_d, what);
      },
      /*add=*/true);
}

std::vector<std::string> linear_gemm_candidates(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias,
                                                Tensor& y, Epilogue act) {
  std::vector<std::string> labels;
  run_linear(c, x, w, bias, y, act,
             [&](const GemmSpec& g, const void* a, const void* b, void* d, const void* bias_d, const char* what) {
               labels = gemm_candidate_labels(c, g, a, b, d, bias_d, what);
             });
  return labels;
}

void linear_with_gemm_candidate(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                Epilogue act, size_t index) {
  run_linear(c, x, w, bias, y, act,
             [&](const GemmSpec& g, const void* a, const void* b, void* d, const void* bias_d, const char* what) {
               gemm_candidate(c, g, a, b, d, bias_d, index, what);
             });
}

std::vector<KernelInfo> linear_kernels() {
  return {
      {"linear_bias_act<f32>", reinterpret_cast<const void*>(&bias_act_kernel<float>)},
      {"linear_bias_act<bf16>", reinterpret_cast<const void*>(&bias_act_kernel<__nv_bfloat16>)},
      {"linear_bias_act<f16>", reinterpret_cast<const void*>(&bias_act_kernel<__half>)},
      {"linear_gelu_vec<f32>", reinterpret_cast<const void*>(&gelu_vec_kernel<float>)},
      {"linear_gelu_vec<bf16>", reinterpret_cast<const void*>(&gelu_vec_kernel<__nv_bfloat16>)},
      {"linear_gelu_vec<f16>", reinterpret_cast<const void*>(&gelu_vec_kernel<__half>)},
  };
}

}  // namespace dacpp::cuda
