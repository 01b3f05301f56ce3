// cuBLASLt GEMM shared by linear, conv2d and conv_transpose2d, with a per-context plan cache.
//
// Column-major, as cuBLASLt sees it:  D[m, n] = op(A)[m, k] · op(B)[k, n]  (+ bias[m], + ReLU per `epilogue`),
// `batch` times with element strides stride_a / stride_b / stride_d between the matrices (stride 0 reuses one).
// Accumulation and scale in f32 (CUBLAS_COMPUTE_32F: exact f32 for f32 inputs, no TF32). The bias, when given,
// has D's dtype (cuBLASLt's rule for f32 / bf16 / f16 outputs; f32 for an f32 D) and is 16-byte aligned.
//
// The plan (descriptors + an algorithm) depends only on the spec and the operands' alignments, so it is built once
// per distinct shape and reused; the cache is bounded (cleared when full). The algorithm: on a shape new to the
// process (and not while a graph is captured; not with DACPP_AUTOTUNE=0), the heuristic's top candidates are timed
// on the call's own operands and the fastest is kept per device for the process; otherwise the heuristic's first.
// Inside a CUDA graph only the matmul itself is recorded, so the plans are host-side state no graph refers to.
// Include only from src/backends/cuda/.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace dacpp::cuda {

class CudaContext;

struct GemmSpec {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0, ldd = 0;  // leading dimensions of the stored (untransposed) matrices
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_d = 0;
  DType dtype = DType::F32;  // A, B and D
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  // D = A·B (+ bias) + D (beta 1) instead of D = A·B (+ bias). Tuning such a GEMM times it on the caller's D and
  // puts D's values back afterwards (a copy of D made first).
  bool accumulate = false;
  // D stored in f32 whatever `dtype` (A and B keep it): partial sums added over several GEMMs stay unrounded, or an
  // f32 residual stream added to. Its bias, when given, is f32.
  bool d_f32 = false;
};

// Enqueues the GEMM on c's stream. `what` names the call in errors (Backend with cuBLAS's status text; fault
// site blas.call). Throws Backend when cuBLASLt has no algorithm for the shape.
void gemm(CudaContext& c, const GemmSpec& s, const void* a, const void* b, void* d, const void* bias, const char* what);

// Tests: the candidates tuning would time for this call (labels "algo<i>"), and the GEMM run
// once with candidate `index` of that list (plan cache and tuned table untouched). InvalidArgument past the end.
std::vector<std::string> gemm_candidate_labels(CudaContext& c, const GemmSpec& s, const void* a, const void* b,
                                               void* d, const void* bias, const char* what);
void gemm_candidate(CudaContext& c, const GemmSpec& s, const void* a, const void* b, void* d, const void* bias,
                    size_t index, const char* what);

// The plans of one context (owned by CudaContext).
class GemmPlans {
 public:
  GemmPlans();
  ~GemmPlans();
  GemmPlans(const GemmPlans&) = delete;
  GemmPlans& operator=(const GemmPlans&) = delete;
  size_t size() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dacpp::cuda
