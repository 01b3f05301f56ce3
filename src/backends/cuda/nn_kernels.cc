// The probe table of the neural-network op kernels (cuda_ops_nn.h): attention, conv2d, conv_transpose2d, rope2d,
// upsample_conv_head.
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {

std::vector<KernelInfo> nn_kernels() {
  std::vector<KernelInfo> all = attention_kernels();
  for (auto&& table : {conv2d_kernels(), conv_transpose2d_kernels(), rope_kernels(), upsample_conv_head_kernels()})
    all.insert(all.end(), table.begin(), table.end());
  return all;
}

}  // namespace dacpp::cuda
