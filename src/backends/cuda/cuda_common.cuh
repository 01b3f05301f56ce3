// Device-side helpers shared by the .cu files of the CUDA backend: element types, f32 conversion, dtype dispatch
// and launch geometry. Only .cu files include this.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "core/tensor.h"

namespace dacpp::cuda {

// f32 <-> element type, round to nearest even on the way down.
template <typename T>
__device__ __forceinline__ float to_f32(T v);
template <>
__device__ __forceinline__ float to_f32<float>(float v) { return v; }
template <>
__device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <>
__device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }

template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }

// The unsigned type of a 16-, 8-, 4- or 2-byte access: a run of V elements of T moved as one VecOf<V·sizeof(T)>.
template <int Bytes> struct VecOf;
template <> struct VecOf<16> { using type = uint4; };
template <> struct VecOf<8> { using type = uint2; };
template <> struct VecOf<4> { using type = unsigned; };
template <> struct VecOf<2> { using type = unsigned short; };

// Calls run(std::integral_constant<int, V>{}) with the widest V of {16 / sizeof(T), 4, 2, 1} elements that divides
// `count` while `p` is 16-byte aligned (V = 1 otherwise): kernels then move V elements per access, and every run of
// V starts aligned when their rows are `count` long.
template <typename T, typename Run>
void with_vector_width(long long count, const void* p, Run&& run) {
  constexpr int kMax = 16 / static_cast<int>(sizeof(T));
  const bool aligned = reinterpret_cast<uintptr_t>(p) % 16 == 0;
  if (aligned && count % kMax == 0) return run(std::integral_constant<int, kMax>{});
  if constexpr (kMax > 4)
    if (aligned && count % 4 == 0) return run(std::integral_constant<int, 4>{});
  if (aligned && count % 2 == 0) return run(std::integral_constant<int, 2>{});
  run(std::integral_constant<int, 1>{});
}

// 16 bytes of T (4 floats or 8 halves), for vectorised loads and stores.
template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kN = 16 / sizeof(T);
  T v[kN];
};

// Calls f(T{}) with T = float, __nv_bfloat16 or __half for the activation dtype; Internal on anything else (the
// dispatchers in src/ops/ validated the dtype already).
template <typename F>
void dispatch_float(DType dt, const char* op, F&& f) {
  switch (dt) {
    case DType::F32: f(float{}); return;
    case DType::BF16: f(__nv_bfloat16{}); return;
    case DType::F16: f(__half{}); return;
    default: break;
  }
  DACPP_THROW(ErrorCode::Internal, op, ": dtype ", dtype_name(dt), " reached the CUDA backend");
}

// Grid size for a grid-stride loop over n items with `block` threads: enough blocks to fill the GPU, never more
// than the items need. n == 0 gives 0 (callers return early).
inline unsigned grid_for(const CudaContext& ctx, int64_t n, int block) {
  const int64_t want = (n + block - 1) / block;
  const int64_t cap = int64_t{ctx.sm_count()} * 32;
  return static_cast<unsigned>(std::max<int64_t>(0, std::min(want, std::max<int64_t>(cap, 1))));
}

// Rows of `src` (`rows` rows of `len` elements of `dt`, `len` apart) copied to rows `pitch` apart (pitch >= len)
// with a zero tail, on the device: the operand copies whose row stride cuBLASLt's aligned kernels need (linear's
// K off 16-byte alignment; conv2d's pitched 1×1 GEMM on an odd pixel count). Defined in copy.cu.
void pitch_rows(const CudaContext& c, DType dt, const void* src, void* dst, int64_t rows, int64_t len, int64_t pitch);

// Programmatic dependent launch (sm_90 and later). launch_kernel lets the GPU schedule a kernel's blocks while the
// kernel before it on the stream is still finishing, so a launch's latency hides under that kernel's tail (a DA2
// forward is ~170 kernels, most a few microseconds long). Such a kernel must call pdl_enter() before it touches
// global memory: it waits there until every kernel before it has completed and its writes are visible
// (griddepcontrol.wait: a completed grid, not a partial one), then lets the kernel after it be scheduled
// (griddepcontrol.launch_dependents). Reads and writes both come after the wait, so reusing a buffer that the
// previous kernel still reads is as safe as without PDL. Before sm_90 both instructions compile away and
// launch_kernel launches plainly; DACPP_PDL=0 turns it off (CudaContext::pdl).
__device__ __forceinline__ void pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, c.stream()>>>(args...) as a programmatic dependent of the work before it when c.pdl().
// Only for kernels that begin with pdl_enter(). A launch error (and the "kernel.launch" fault site) throws as
// DACPP_CUDA_LAUNCH_CHECK(name) does: Backend "launch of kernel <name>: ..." with the CUDA error text.
template <typename... P, typename... A>
void launch_kernel(const CudaContext& c, const char* name, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                   A&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = c.stream();
  cfg.attrs = &attr;
  cfg.numAttrs = c.pdl_launch() ? 1 : 0;
  const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
  DACPP_FAULT_POINT("kernel.launch", ErrorCode::Backend, "kernel ", name);
  if (err != cudaSuccess) detail::throw_cuda(err, str_cat("launch of kernel ", name));
}

// True when p is aligned to `bytes`.
inline bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

}  // namespace dacpp::cuda
