// Checked CUDA / cuBLAS calls (design.md §4.1): every call's status becomes a dacpp::Error at the call site.
//
//   DACPP_CUDA_CHECK(cudaMemcpyAsync(...), "copy h2d of '", name, "'");
//   DACPP_CUBLAS_CHECK(cublasLtMatmul(...), "linear 'blocks.0.attn.qkv'");
//   kernel<<<grid, block, 0, stream>>>(...); DACPP_CUDA_LAUNCH_CHECK("layer_norm_f32");
//
// Message: "<what>: <cudaGetErrorName>: <cudaGetErrorString> (device cuda:N)". cudaErrorMemoryAllocation and
// CUBLAS_STATUS_ALLOC_FAILED become OutOfMemory with the device's free/total bytes; everything else is Backend.
// A non-sticky error is cleared (cudaGetLastError) before throwing so the context stays usable.
// Fault sites: "kernel.launch" in DACPP_CUDA_LAUNCH_CHECK, "blas.call" in DACPP_CUBLAS_CHECK.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "core/error.h"
#include "core/fault.h"

namespace dacpp::cuda::detail {

[[noreturn]] void throw_cuda(cudaError_t err, const std::string& what);
[[noreturn]] void throw_cublas(cublasStatus_t st, const std::string& what);

}  // namespace dacpp::cuda::detail

#define DACPP_CUDA_CHECK(call, ...)                                                      \
  do {                                                                                   \
    cudaError_t dacpp_cuda_err_ = (call);                                                \
    if (dacpp_cuda_err_ != cudaSuccess)                                                  \
      ::dacpp::cuda::detail::throw_cuda(dacpp_cuda_err_, ::dacpp::str_cat(__VA_ARGS__)); \
  } while (0)

#define DACPP_CUBLAS_CHECK(call, ...)                                                       \
  do {                                                                                      \
    DACPP_FAULT_POINT("blas.call", ::dacpp::ErrorCode::Backend, __VA_ARGS__);               \
    cublasStatus_t dacpp_blas_st_ = (call);                                                 \
    if (dacpp_blas_st_ != CUBLAS_STATUS_SUCCESS)                                            \
      ::dacpp::cuda::detail::throw_cublas(dacpp_blas_st_, ::dacpp::str_cat(__VA_ARGS__));   \
  } while (0)

// After a <<<...>>> launch: configuration errors (bad grid, no kernel image, too many resources) surface here.
#define DACPP_CUDA_LAUNCH_CHECK(kernel_name)                                                   \
  do {                                                                                         \
    DACPP_FAULT_POINT("kernel.launch", ::dacpp::ErrorCode::Backend, "kernel ", kernel_name);   \
    cudaError_t dacpp_launch_err_ = cudaGetLastError();                                        \
    if (dacpp_launch_err_ != cudaSuccess)                                                      \
      ::dacpp::cuda::detail::throw_cuda(dacpp_launch_err_,                                     \
                                        ::dacpp::str_cat("launch of kernel ", kernel_name));   \
  } while (0)
