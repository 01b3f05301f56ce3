// The CUDA backend's entry points in a build without CUDA (DACPP_CUDA=OFF): each throws Unsupported. No
// CudaContext can exist in this build, so the op functions are unreachable through ops::Context; they still throw
// rather than trust that.
#include "backends/cuda/cuda_ops.h"
#include "core/error.h"

namespace dacpp::cuda {

namespace {

[[noreturn]] void no_cuda(const char* what) {
  DACPP_THROW(ErrorCode::Unsupported, what, ": dacpp was built without CUDA (rebuild with -DDACPP_CUDA=ON)");
}

}  // namespace

void CudaContextDeleter::operator()(CudaContext*) const noexcept {}

CudaContextPtr create_context(int device_index) {
  no_cuda(str_cat("CUDA context for cuda:", device_index).c_str());
}
bool built_with_cuda() { return false; }
void synchronize(CudaContext&, const char*) { no_cuda("synchronize"); }
void probe_all_kernels(CudaContext&) { no_cuda("kernel probe"); }
std::string describe(CudaContext&) { no_cuda("describe"); }

void GraphDeleter::operator()(Graph*) const noexcept {}
void begin_capture(CudaContext&) { no_cuda("CUDA graph capture"); }
GraphPtr end_capture(CudaContext&) { no_cuda("CUDA graph capture"); }
void abort_capture(CudaContext&) noexcept {}
void launch(CudaContext&, const Graph&) { no_cuda("CUDA graph launch"); }
bool keeps_node_priorities(const Graph&) { no_cuda("CUDA graph"); }
std::vector<int> kernel_node_priorities(const Graph&) { no_cuda("CUDA graph"); }
float time_replays_ms(CudaContext&, const Graph&, int) { no_cuda("CUDA graph replay timing"); }
void* pinned_staging(CudaContext&, size_t) { no_cuda("pinned staging memory"); }
void copy_async(CudaContext&, const Tensor&, Tensor&) { no_cuda("copy_async"); }

bool lanes_enabled(CudaContext&) {
  no_cuda("cuda::lanes_enabled");
}
int max_lanes() {
  return 1;
}
void fork_lanes(CudaContext&, int, bool) {
  no_cuda("cuda::fork_lanes");
}
void set_lane(CudaContext&, int) {
  no_cuda("cuda::set_lane");
}
void join_lane(CudaContext&, int) {
  no_cuda("cuda::join_lane");
}
void end_lanes(CudaContext&) noexcept {}

Tensor empty(CudaContext&, const Shape&, DType, std::string) { no_cuda("cuda::empty"); }
MemoryStats memory_stats(CudaContext&) { no_cuda("cuda::memory_stats"); }
size_t device_used_bytes(CudaContext&) { no_cuda("cuda::device_used_bytes"); }
void release_cached(CudaContext&) { no_cuda("cuda::release_cached"); }
HostArena make_arena(CudaContext&, size_t) { no_cuda("cuda::make_arena"); }
Tensor upload(CudaContext&, const Tensor&, DType) { no_cuda("cuda::upload"); }

void linear(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Epilogue) { no_cuda("linear"); }
void linear_add(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&) {
  no_cuda("linear_add");
}
std::vector<std::string> linear_gemm_candidates(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&,
                                                Epilogue) {
  no_cuda("linear_gemm_candidates");
}
void linear_with_gemm_candidate(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Epilogue, size_t) {
  no_cuda("linear_with_gemm_candidate");
}
void layer_norm(CudaContext&, const Tensor&, const Tensor&, const Tensor&, float, Tensor&) {
  no_cuda("layer_norm");
}
void layer_norm_drop_leading(CudaContext&, const Tensor&, int64_t, const Tensor&, const Tensor&, float, Tensor&) {
  no_cuda("layer_norm_drop_leading");
}
void add_scaled_layer_norm(CudaContext&, Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, float,
                           Tensor&, const SecondNorm&) {
  no_cuda("add_scaled_layer_norm");
}
void unary(CudaContext&, UnaryKind, const Tensor&, Tensor&) { no_cuda("unary"); }
void binary(CudaContext&, BinaryKind, const Tensor&, const Tensor&, Tensor&) { no_cuda("binary"); }
void add_scaled(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&) { no_cuda("add_scaled"); }
void embed_tokens(CudaContext&, const Tensor&, const Tensor&, const Tensor&, Tensor&) { no_cuda("embed_tokens"); }
void permute(CudaContext&, const Tensor&, const std::vector<int>&, Tensor&) { no_cuda("permute"); }
void resize_bilinear(CudaContext&, const Tensor&, Tensor&, bool, const float*, bool) {
  no_cuda("resize_bilinear");
}
void resize_bilinear_rows(CudaContext&, const Tensor&, Tensor&, int64_t, int64_t, bool) {
  no_cuda("resize_bilinear_rows");
}
void resize_bicubic(CudaContext&, const Tensor&, Tensor&, bool, double, double) { no_cuda("resize_bicubic"); }
void copy(CudaContext&, const Tensor&, Tensor&) { no_cuda("copy"); }
void cast(CudaContext&, const Tensor&, Tensor&) { no_cuda("cast"); }

}  // namespace dacpp::cuda
