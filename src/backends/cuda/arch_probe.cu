// sm90a_image_runs (kernel_probe.h): a one-thread kernel that reports whether it was compiled with the sm_90a
// features (wgmma), i.e. whether the image the driver picked for this device holds the Hopper-only kernels.
#include <cuda_runtime.h>

#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/wgmma_util.cuh"

namespace dacpp::cuda {
namespace {

__global__ void sm90a_probe_kernel(int* flag) { *flag = DACPP_HAS_WGMMA; }

}  // namespace

bool sm90a_image_runs(int device) {
  int major = 0, minor = 0;
  DACPP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                   "sm_90a probe: compute capability of cuda:", device);
  DACPP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                   "sm_90a probe: compute capability of cuda:", device);
  if (major != 9 || minor != 0) return false;  // sm_90a code runs on compute capability 9.0 only
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(&sm90a_probe_kernel)) != cudaSuccess) {
    cudaGetLastError();  // no image for this device at all: the kernel probe reports it
    return false;
  }
  int* flag = nullptr;
  DACPP_CUDA_CHECK(cudaMalloc(&flag, sizeof(int)), "sm_90a probe: 4 bytes on cuda:", device);
  int value = 0;
  sm90a_probe_kernel<<<1, 1>>>(flag);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaMemcpy(&value, flag, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(flag);
  DACPP_CUDA_CHECK(err, "sm_90a probe on cuda:", device);
  return value == 1;
}

std::vector<KernelInfo> arch_probe_kernels() {
  return {{"sm90a_probe", reinterpret_cast<const void*>(&sm90a_probe_kernel)}};
}

}  // namespace dacpp::cuda
