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
// scale type f32. cuBLASLt wants the bias in D's type, so for bf16 / f16 the f32 bias is converted into a
// temporary device vector first. cuBLASLt's GELU epilogue is the tanh approximation: GELU runs as the BIAS
// epilogue followed by our exact erf GELU kernel in place. ReLU is fused (RELU_BIAS / RELU).
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {
namespace {

constexpr int kBlock = 256;

// y = act(y + bias) for K == 0 (y zeroed first) and the exact GELU after the matmul (bias already added: null).
template <typename T>
__global__ void bias_act_kernel(T* y, const float* __restrict__ bias, int64_t m, int64_t n, int act) {
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    float v = to_f32(y[i]) + (bias ? bias[i % n] : 0.f);
    if (act == static_cast<int>(Epilogue::Gelu)) v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    else if (act == static_cast<int>(Epilogue::Relu)) v = v > 0.f ? v : 0.f;
    y[i] = from_f32<T>(v);
  }
}

template <typename T>
__global__ void bias_to_kernel(const float* __restrict__ src, T* __restrict__ dst, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = from_f32<T>(src[i]);
}

cudaDataType_t cuda_type(DType dt) {
  switch (dt) {
    case DType::F32: return CUDA_R_32F;
    case DType::BF16: return CUDA_R_16BF;
    case DType::F16: return CUDA_R_16F;
    default: break;
  }
  DACPP_THROW(ErrorCode::Internal, "linear: dtype ", dtype_name(dt), " reached cuBLASLt");
}

// Largest power of two <= 256 dividing the address (cuBLASLt's alignment preferences).
uint32_t alignment_of(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && a % al != 0) al >>= 1;
  return al;
}

// Owns the cuBLASLt descriptors of one call.
struct LtDescs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescs() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

struct Gemm {
  int64_t m, n, k;          // column-major D[m, n] = op(A)[m, k] · op(B)[k, n]
  const void* a;            // w
  const void* b;            // x
  void* d;                  // y
  const void* bias;         // in D's type, or null
  cudaDataType_t type;
  cublasLtEpilogue_t epilogue;
  const char* what;
};

void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void* v, size_t sz,
              const char* what) {
  DACPP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, v, sz), what, ": cublasLtMatmulDescSetAttribute");
}

void run_gemm(CudaContext& c, const Gemm& g) {
  LtDescs s;
  DACPP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&s.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), g.what, ": matmul desc");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  set_attr(s.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta), g.what);
  set_attr(s.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb), g.what);
  set_attr(s.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &g.epilogue, sizeof(g.epilogue), g.what);
  if (g.bias) set_attr(s.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof(g.bias), g.what);
  DACPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s.a, g.type, g.k, g.m, g.k), g.what, ": layout of w");
  DACPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s.b, g.type, g.k, g.n, g.k), g.what, ": layout of x");
  DACPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s.d, g.type, g.m, g.n, g.m), g.what, ": layout of y");
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&s.pref), g.what, ": preference");
  const size_t ws = c.workspace_bytes();
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                          sizeof(ws)), g.what, ": workspace preference");
  const uint32_t al_a = alignment_of(g.a), al_b = alignment_of(g.b), al_d = alignment_of(g.d);
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
                                                          sizeof(al_a)), g.what, ": alignment preference");
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
                                                          sizeof(al_b)), g.what, ": alignment preference");
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d,
                                                          sizeof(al_d)), g.what, ": alignment preference");
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d,
                                                          sizeof(al_d)), g.what, ": alignment preference");
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  DACPP_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(c.lt(), s.op, s.a, s.b, s.d, s.d, s.pref, 1, &heur, &found),
                     g.what, ": algorithm heuristic");
  DACPP_CHECK(found > 0, ErrorCode::Backend, g.what, ": cuBLASLt has no algorithm for m=", g.m, " n=", g.n,
              " k=", g.k, " (device cuda:", c.device_index(), ")");
  const float alpha = 1.f, beta = 0.f;
  DACPP_CUBLAS_CHECK(cublasLtMatmul(c.lt(), s.op, &alpha, g.a, s.a, g.b, s.b, &beta, g.d, s.d, g.d, s.d, &heur.algo,
                                    c.workspace(), c.workspace_bytes(), c.stream()),
                     g.what, ": cublasLtMatmul");
}

template <typename T>
void launch_bias_act(CudaContext& c, Tensor& y, const float* bias, int64_t m, int64_t n, Epilogue act) {
  bias_act_kernel<T><<<grid_for(c, m * n, kBlock), kBlock, 0, c.stream()>>>(static_cast<T*>(y.raw()), bias, m, n,
                                                                            static_cast<int>(act));
  DACPP_CUDA_LAUNCH_CHECK("linear_bias_act");
}

template <typename T>
void linear_typed(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act) {
  const int64_t n = w.dim(0), k = w.dim(1), m = x.numel() / k;
  const float* bias_f32 = bias.defined() ? static_cast<const float*>(bias.raw()) : nullptr;
  if (k == 0) {
    DACPP_CUDA_CHECK(cudaMemsetAsync(y.raw(), 0, y.nbytes(), c.stream()), "linear: zero y (K = 0)");
    return launch_bias_act<T>(c, y, bias_f32, m, n, act);
  }
  // cuBLASLt reads the bias with vector loads: an f32 bias that is not 16-byte aligned (a view into a packed
  // buffer) is added by bias_act_kernel instead.
  const bool bias_unfused = bias_f32 && std::is_same_v<T, float> && !aligned_to(bias_f32, 16);
  std::shared_ptr<void> bias_tmp;  // bias in D's type (bf16 / f16); freed to the cache after enqueueing (stream order)
  const void* bias_d = bias_unfused ? nullptr : bias_f32;
  if (bias_f32 && !std::is_same_v<T, float>) {
    bias_tmp = c.allocator().allocate_shared(sizeof(T) * n, "linear: bias in the activation dtype");
    bias_to_kernel<T><<<grid_for(c, n, kBlock), kBlock, 0, c.stream()>>>(bias_f32, static_cast<T*>(bias_tmp.get()),
                                                                        n);
    DACPP_CUDA_LAUNCH_CHECK("linear_bias_to");
    bias_d = bias_tmp.get();
  }
  cublasLtEpilogue_t epi = bias_d ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  if (act == Epilogue::Relu && !bias_unfused) epi = bias_d ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  const std::string what = str_cat("linear ", w.name().empty() ? std::string("w") : "'" + w.name() + "'", " [",
                                   m, "x", k, "]·[", n, "x", k, "]^T");
  run_gemm(c, Gemm{n, m, k, w.raw(), x.raw(), y.raw(), bias_d, cuda_type(x.dtype()), epi, what.c_str()});
  if (bias_unfused) launch_bias_act<T>(c, y, bias_f32, m, n, act);
  else if (act == Epilogue::Gelu) launch_bias_act<T>(c, y, nullptr, m, n, Epilogue::Gelu);
}

}  // namespace

void linear(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act) {
  if (y.numel() == 0) return;
  c.make_current();
  dispatch_float(x.dtype(), "linear", [&](auto tag) { linear_typed<decltype(tag)>(c, x, w, bias, y, act); });
}

std::vector<KernelInfo> linear_kernels() {
  return {
      {"linear_bias_act<f32>", reinterpret_cast<const void*>(&bias_act_kernel<float>)},
      {"linear_bias_act<bf16>", reinterpret_cast<const void*>(&bias_act_kernel<__nv_bfloat16>)},
      {"linear_bias_act<f16>", reinterpret_cast<const void*>(&bias_act_kernel<__half>)},
      {"linear_bias_to<bf16>", reinterpret_cast<const void*>(&bias_to_kernel<__nv_bfloat16>)},
      {"linear_bias_to<f16>", reinterpret_cast<const void*>(&bias_to_kernel<__half>)},
  };
}

}  // namespace dacpp::cuda
