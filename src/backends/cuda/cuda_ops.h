// CUDA implementations of the ops (one .cu per op) and the backend's CUDA-free entry points. This header includes
// no CUDA header, so src/ops/ (and the stub build) can use it; the stub (stub/cuda_stub.cc) defines every function
// here to throw Unsupported "dacpp was built without CUDA (rebuild with -DDACPP_CUDA=ON)".
//
// The op functions are called only by the validating dispatchers in src/ops/, which have already checked shapes,
// dtypes (one activation dtype per call: f32, bf16 or f16; bias / gamma / beta f32) and residency (every tensor on
// the context's device): they trust their arguments. Work is enqueued on ctx.stream(); nothing synchronizes.
// Contracts (shapes, layouts) are those of the matching src/ops/<op>.h.
//
// Ops owned by the other CUDA helper (attention, conv2d, conv_transpose2d, rope) are declared in their own
// header(s) in this folder, with their stubs in stub/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/arena.h"
#include "core/tensor.h"

namespace dacpp::cuda {

class CudaContext;

// ---- context creation (ops::Context holds one; CudaContext is incomplete outside src/backends/cuda) ----
struct CudaContextDeleter {
  void operator()(CudaContext* c) const noexcept;
};
using CudaContextPtr = std::unique_ptr<CudaContext, CudaContextDeleter>;
// Throws Backend (no such device, driver failure) / OutOfMemory; Unsupported in a build without CUDA.
CudaContextPtr create_context(int device_index);
// True when this binary has the CUDA backend.
bool built_with_cuda();
// Synchronizes ctx's stream; a failure throws Backend naming `what`.
void synchronize(CudaContext& ctx, const char* what);
// Load-time probe (design.md §4.3) of every kernel of the backend on ctx's GPU: Backend "kernel <name> has no
// image for sm_XX; rebuild with CMAKE_CUDA_ARCHITECTURES=XX" when one is missing. Site "kernel.probe".
void probe_all_kernels(CudaContext& ctx);
// "NVIDIA H200 (sm_90, cuda:0)": for logs and errors.
std::string describe(CudaContext& ctx);

// ---- CUDA graphs (design.md §3): a forward captured once per input geometry, then replayed ----
struct Graph;
struct GraphDeleter {
  void operator()(Graph* g) const noexcept;
};
using GraphPtr = std::unique_ptr<Graph, GraphDeleter>;
// Starts capturing ctx's stream (this thread only). Until end_capture, enqueued work is recorded, not run; a
// synchronizing call fails (Backend) and the caller must abort_capture.
void begin_capture(CudaContext& ctx);
// Ends the capture and instantiates the graph. Throws Backend with CUDA's reason when the capture was invalidated.
GraphPtr end_capture(CudaContext& ctx);
// Ends and discards a capture after a failure; safe when none is active.
void abort_capture(CudaContext& ctx) noexcept;
// Enqueues a replay of g on ctx's stream.
void launch(CudaContext& ctx, const Graph& g);
// Whether g was instantiated to keep its kernel nodes' priorities (CudaContext::fork_lanes), and the priority each
// kernel node carries, in the graph's node order (for tests).
bool keeps_node_priorities(const Graph& g);
std::vector<int> kernel_node_priorities(const Graph& g);
// CudaContext::pinned: page-locked host staging memory of ctx (>= bytes, valid until the next call), or nullptr.
void* pinned_staging(CudaContext& ctx, size_t bytes);
// Mean GPU milliseconds per replay of g over `reps` replays after one warm-up (CUDA events; waits for them).
float time_replays_ms(CudaContext& ctx, const Graph& g, int reps);

// ---- lanes (CudaContext::fork_lanes; ops::Lanes wraps them) ----
// Whether ctx runs lanes at all: unless DACPP_LANES=0 (then every lane is lane 0, for A/B runs).
bool lanes_enabled(CudaContext& ctx);
// At most this many lanes (lane 0 included).
int max_lanes();
// lane0_first: CudaContext::fork_lanes.
void fork_lanes(CudaContext& ctx, int count, bool lane0_first);
void set_lane(CudaContext& ctx, int lane);
void join_lane(CudaContext& ctx, int lane);
void end_lanes(CudaContext& ctx) noexcept;

// ---- memory ----
// A new uninitialised device tensor from ctx's caching allocator (256-byte aligned), owning its block.
Tensor empty(CudaContext& ctx, const Shape& shape, DType dtype, std::string name = {});
// ctx's caching allocator: bytes handed out, free bytes cached for reuse, peak of the first.
struct MemoryStats {
  size_t live_bytes = 0, cached_bytes = 0, peak_bytes = 0;
};
MemoryStats memory_stats(CudaContext& ctx);
// Device memory in use by every process and context on ctx's GPU (cudaMemGetInfo: total − free), in bytes.
size_t device_used_bytes(CudaContext& ctx);
// Returns ctx's cached free blocks to the driver (e.g. after a large one-off forward).
void release_cached(CudaContext& ctx);
// An activation arena whose blocks come from ctx's allocator; its tensors are on cuda:N.
HostArena make_arena(CudaContext& ctx, size_t block_bytes = size_t{64} << 20);
// Uploads a host f32 / bf16 / f16 tensor to the device converted to `target` (F32, BF16 or F16), in a device
// allocation owned by the returned tensor (which keeps host's name). Synchronous: `host` may be freed afterwards.
// Throws InvalidArgument on another dtype or a non-host source, OutOfMemory, Backend.
Tensor upload(CudaContext& ctx, const Tensor& host, DType target);

// ---- ops ----
enum class Epilogue { None, Relu, Gelu };           // mirrors ops::Activation
enum class UnaryKind { Gelu, Silu, Relu, Exp, Sigmoid };  // mirrors ops::Unary
enum class BinaryKind { Add, Mul };

// x: [M, K] (flattened), w: [N, K] same dtype as x, bias: [N] f32 or undefined, y: [M, N] same dtype as x.
void linear(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act);
// y += x · wᵀ + bias, y f32 [M, N] whatever x's dtype (the GEMM accumulates into y in f32: the residual stream).
void linear_add(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y);
// Tests: the cuBLASLt candidates linear's tuning would time for these operands, and
// linear run with candidate `index` of that list instead of the tuned one (InvalidArgument past the end).
std::vector<std::string> linear_gemm_candidates(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias,
                                                Tensor& y, Epilogue act);
void linear_with_gemm_candidate(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                Epilogue act, size_t index);
// x, y: [R, C] (flattened; same dtype, or x f32 and y bf16 / f16); gamma, beta: [C] f32; y may alias x.
void layer_norm(CudaContext& c, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y);
// y[b] = layer_norm(x[b, skip:]): x [B, N, C], y [B, N − skip, C] (dtypes as layer_norm's, not aliased); one launch.
void layer_norm_drop_leading(CudaContext& c, const Tensor& x, int64_t skip, const Tensor& gamma, const Tensor& beta,
                             float eps, Tensor& y);
// add_scaled_layer_norm's second norm (ops::DropLeadingNorm): *y = layer_norm(x[b, skip:]; *gamma, *beta, eps).
struct SecondNorm {
  const Tensor* gamma = nullptr;
  const Tensor* beta = nullptr;
  float eps = 0.f;
  int64_t skip = 0;
  Tensor* y = nullptr;
};
// x ← x + a ⊙ ls (ls [C] f32 or undefined), then y = layer_norm(x) unless y is undefined, and the second norm when
// given: x f32, a and the outputs any float dtype, the outputs aliasing nothing.
void add_scaled_layer_norm(CudaContext& c, Tensor& x, const Tensor& a, const Tensor& ls, const Tensor& gamma,
                           const Tensor& beta, float eps, Tensor& y, const SecondNorm& second = {});
void unary(CudaContext& c, UnaryKind kind, const Tensor& x, Tensor& y);
// y = a (op) broadcast(b); b's shape right-aligned against a's, already validated.
void binary(CudaContext& c, BinaryKind kind, const Tensor& a, const Tensor& b, Tensor& y);
// y = x + a ⊙ gamma in f32 (x, y one dtype; a any activation dtype; gamma [C] f32 or undefined); y may alias x.
void add_scaled(CudaContext& c, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y);
// ops::embed_tokens (lead undefined: no leading rows; patches any float dtype); contract ops/elementwise.h.
void embed_tokens(CudaContext& c, const Tensor& lead, const Tensor& table, const Tensor& patches, Tensor& tokens);
void permute(CudaContext& c, const Tensor& x, const std::vector<int>& perm, Tensor& y);
// bias (f32 [C], or null) added per channel and, with `accumulate`, y's own values, before y's one rounding.
void resize_bilinear(CudaContext& c, const Tensor& x, Tensor& y, bool align_corners, const float* bias = nullptr,
                     bool accumulate = false);
void resize_bilinear_rows(CudaContext& c, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners);
void resize_bicubic(CudaContext& c, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w);
// Byte copy between any residency pair (host/device), same shape and dtype; host memory may be pageable.
// Synchronous when either side is on the host (the host buffer is safe to reuse on return).
void copy(CudaContext& c, const Tensor& src, Tensor& dst);
// copy() without the wait: enqueued on c's stream, returns at once. A host side must be page-locked
// (CudaContext::pinned) and stay untouched until the stream has passed the copy (synchronize()).
void copy_async(CudaContext& c, const Tensor& src, Tensor& dst);
// dst = src converted between f32 / bf16 / f16 (round to nearest even), both on the device, same shape.
void cast(CudaContext& c, const Tensor& src, Tensor& dst);

}  // namespace dacpp::cuda
