// The neural-network op entry points of cuda_ops_nn.h in a build without CUDA: each throws Unsupported (no
// CudaContext can exist in this build; they still throw rather than trust that).
#include "backends/cuda/cuda_ops_nn.h"
#include "core/error.h"

namespace dacpp::cuda {
namespace {

[[noreturn]] void no_cuda_nn(const char* what) {
  DACPP_THROW(ErrorCode::Unsupported, what, ": dacpp was built without CUDA (rebuild with -DDACPP_CUDA=ON)");
}

}  // namespace

void attention(CudaContext&, const Tensor&, const Tensor&, const Tensor&, float, Tensor&) { no_cuda_nn("attention"); }
void attention_qkv(CudaContext&, const Tensor&, int64_t, float, int64_t, Tensor&) {
  no_cuda_nn("attention_qkv");
}
void conv2d(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, const ConvGeometry&, Epilogue) {
  no_cuda_nn("conv2d");
}
void conv_transpose2d(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, int) {
  no_cuda_nn("conv_transpose2d");
}
void im2col3x3_tokens(CudaContext&, const Tensor&, int64_t, int64_t, int, int, bool, Tensor&) {
  no_cuda_nn("im2col3x3_tokens");
}
void patch_rows(CudaContext&, const Tensor&, int, Tensor&) {
  no_cuda_nn("patch_rows");
}
void conv_transpose2d_tokens(CudaContext&, const Tensor&, int64_t, int64_t, const Tensor&, const Tensor&, Tensor&,
                             int) {
  no_cuda_nn("conv_transpose2d_tokens");
}
void rope2d(CudaContext&, Tensor&, const Tensor&, float) { no_cuda_nn("rope2d"); }
std::string conv2d_upsampled_refusal(const CudaContext&, const Tensor&, const Tensor&, const Tensor&) {
  return "dacpp was built without CUDA";
}
void conv2d_upsampled(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Epilogue) {
  no_cuda_nn("conv2d_upsampled");
}
std::string conv2d_upsampled_taps_refusal(const Tensor&, const Tensor&, const Tensor&, Epilogue) {
  return "dacpp was built without CUDA";
}
void conv2d_upsampled_taps(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Epilogue, const Tensor*,
                           const Tensor*) {
  no_cuda_nn("conv2d_upsampled_taps");
}
void conv2d_upsampled_tma(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Epilogue) {
  no_cuda_nn("conv2d_upsampled_tma");
}
void residual_conv_pair(CudaContext&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        const Tensor&, Tensor&, Tensor&) {
  no_cuda_nn("residual_conv_pair");
}
std::string upsample_conv_head_refusal(const Tensor&, const Tensor&, const Tensor&) {
  return "dacpp was built without CUDA";
}
void upsample_conv_head(CudaContext&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        Tensor&, int) {
  no_cuda_nn("upsample_conv_head");
}
void upsample_conv_head_path(CudaContext&, HeadPath, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                             const Tensor&, Tensor&, int) {
  no_cuda_nn("upsample_conv_head_path");
}

}  // namespace dacpp::cuda
