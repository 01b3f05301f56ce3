#include "backends/cuda/kernel_probe.h"

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_ops_nn.h"

namespace dacpp::cuda {
namespace {

void append(std::vector<KernelInfo>& all, std::vector<KernelInfo> part) {
  for (KernelInfo& k : part) all.push_back(std::move(k));
}

}  // namespace

void probe_kernels(CudaContext& ctx, const std::vector<KernelInfo>& kernels) {
  ctx.make_current();
  const int sm = ctx.sm_version();
  for (const KernelInfo& k : kernels) {
    DACPP_FAULT_POINT("kernel.probe", ErrorCode::Backend, "kernel ", k.name, " has no image for sm_", sm,
                      "; rebuild with CMAKE_CUDA_ARCHITECTURES=", sm);
    DACPP_CHECK(k.func != nullptr, ErrorCode::Internal, "kernel probe: kernel ", k.name, " has no function");
    cudaFuncAttributes attr{};
    const cudaError_t err = cudaFuncGetAttributes(&attr, k.func);
    if (err == cudaErrorInvalidDeviceFunction || err == cudaErrorNoKernelImageForDevice) {
      cudaGetLastError();
      DACPP_THROW(ErrorCode::Backend, "kernel ", k.name, " has no image for sm_", sm,
                  "; rebuild with CMAKE_CUDA_ARCHITECTURES=", sm, " (", ctx.device_name(), ", cuda:",
                  ctx.device_index(), ": ", cudaGetErrorName(err), ")");
    }
    DACPP_CUDA_CHECK(err, "kernel probe of ", k.name);
  }
}

std::vector<KernelInfo> all_kernels() {
  std::vector<KernelInfo> all;
  append(all, linear_kernels());
  append(all, layer_norm_kernels());
  append(all, elementwise_kernels());
  append(all, permute_kernels());
  append(all, resize_kernels());
  append(all, copy_kernels());
  append(all, tuning_kernels());
  append(all, arch_probe_kernels());
  append(all, nn_kernels());
  return all;
}

void probe_all_kernels(CudaContext& ctx) { probe_kernels(ctx, all_kernels()); }

}  // namespace dacpp::cuda
