#include "backends/cuda/check.h"

namespace dacpp::cuda::detail {
namespace {

std::string current_device_str() {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return "device unknown";
  }
  return str_cat("device cuda:", dev);
}

// " (free F of T bytes on the device)" or "" when the runtime cannot say.
std::string mem_info_str() {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return str_cat(", free ", free_b, " of ", total_b, " bytes");
}

}  // namespace

void throw_cuda(cudaError_t err, const std::string& what) {
  cudaGetLastError();  // clear a non-sticky error so the context stays usable
  const std::string dev = current_device_str();
  if (err == cudaErrorMemoryAllocation)
    DACPP_THROW(ErrorCode::OutOfMemory, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err), " (",
                dev, mem_info_str(), ")");
  DACPP_THROW(ErrorCode::Backend, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err), " (", dev, ")");
}

void throw_cublas(cublasStatus_t st, const std::string& what) {
  const std::string dev = current_device_str();
  if (st == CUBLAS_STATUS_ALLOC_FAILED)
    DACPP_THROW(ErrorCode::OutOfMemory, what, ": ", cublasLtGetStatusName(st), ": ", cublasLtGetStatusString(st),
                " (", dev, mem_info_str(), ")");
  DACPP_THROW(ErrorCode::Backend, what, ": ", cublasLtGetStatusName(st), ": ", cublasLtGetStatusString(st), " (",
              dev, ")");
}

}  // namespace dacpp::cuda::detail
