// Kernel-availability probe (design.md §4.3): every kernel the model will launch is looked up with
// cudaFuncGetAttributes at load, so a binary built without an image for this GPU's architecture fails with a clear
// Backend error instead of at the first launch.
//
// Each .cu file exposes a table function returning its kernels, e.g.
//   std::vector<KernelInfo> layer_norm_kernels() { return {{"layer_norm_f32", (const void*)&layer_norm_kernel<float>}, ...}; }
// and all_kernels() (kernel_probe.cc) concatenates the tables of every .cu file.
#pragma once

#include <string>
#include <vector>

namespace dacpp::cuda {

class CudaContext;

struct KernelInfo {
  std::string name;   // shown in errors
  const void* func;   // the __global__ function, cast to const void*
};

// Throws Backend "kernel <name> has no image for sm_XX; rebuild with CMAKE_CUDA_ARCHITECTURES=XX" for the first
// kernel that cannot be loaded on ctx's device (other failures: Backend with the CUDA text). Site "kernel.probe".
void probe_kernels(CudaContext& ctx, const std::vector<KernelInfo>& kernels);

// Every kernel of the CUDA backend (each .cu file's table, including cuda_ops_nn.h's nn_kernels()).
std::vector<KernelInfo> all_kernels();

// Tables of the .cu files (one per op file).
std::vector<KernelInfo> linear_kernels();
std::vector<KernelInfo> layer_norm_kernels();
std::vector<KernelInfo> elementwise_kernels();
std::vector<KernelInfo> permute_kernels();
std::vector<KernelInfo> resize_kernels();
std::vector<KernelInfo> copy_kernels();
std::vector<KernelInfo> tuning_kernels();  // stream_hold.cu
std::vector<KernelInfo> arch_probe_kernels();  // arch_probe.cu

// Whether the image the driver runs on `device` was built for sm_90a (CMAKE_CUDA_ARCHITECTURES holding 90a), i.e.
// the Hopper-only kernels (wgmma) are real there; false on other GPUs and for an sm_90 / PTX-only build. Runs a
// one-thread kernel and waits for it. Throws Backend when the driver fails.
bool sm90a_image_runs(int device);

}  // namespace dacpp::cuda
