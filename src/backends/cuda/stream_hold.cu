// hold_stream (tuning.h): a one-thread kernel that spins on the GPU's nanosecond timer.
#include <cuda_runtime.h>

#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/tuning.h"

namespace dacpp::cuda {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_kernel(unsigned long long ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < ns) __nanosleep(1000);
}

}  // namespace

void hold_stream(CudaContext& c, int microseconds) {
  hold_kernel<<<1, 1, 0, c.stream()>>>(static_cast<unsigned long long>(microseconds) * 1000ull);
  DACPP_CUDA_LAUNCH_CHECK("tuning: stream hold");
}

std::vector<KernelInfo> tuning_kernels() {
  return {{"stream_hold", reinterpret_cast<const void*>(&hold_kernel)}};
}

}  // namespace dacpp::cuda
