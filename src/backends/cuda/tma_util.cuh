// Hopper (sm_90a) tensor-memory-accelerator loads and the shared-memory barriers that count them, for kernels that
// feed wgmma from a producer warp (conv3x3_wgmma.cuh). Only code compiled for sm_90a may call them (guard with
// DACPP_HAS_WGMMA, wgmma_util.cuh); other targets see nothing.
//
// A barrier is one 8-byte word of shared memory, addressed by its 32-bit shared address. It completes a phase when
// `count` arrivals have happened and the transaction bytes announced for the phase (arrive_expect_tx) have landed;
// phases alternate parity 0, 1, 0, … and wait(bar, parity) returns once the phase of that parity has completed.
// A fresh barrier is in phase 0, so wait(bar, 1) returns at once: a producer waiting for "stage free" starts there.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: nothing here links the driver)

#include <cstdint>

#include "backends/cuda/wgmma_util.cuh"

namespace dacpp::cuda::tma {

#if DACPP_HAS_WGMMA
__device__ __forceinline__ void barrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// After the initializing thread's barrier_init calls, before the block-wide barrier that publishes them: makes the
// initialized barriers visible to the tensor-memory accelerator's completions as well as to the other threads.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` more transaction bytes for the current phase.
__device__ __forceinline__ void arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// The polling loop is one asm statement (a C++ loop around try_wait would let the lanes of a warp leave it in
// different iterations); callers about to issue .sync.aligned instructions (wgmma) also __syncwarp() after it.
__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_AGAIN:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_AGAIN;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// Brings a tensor map (a __grid_constant__ kernel parameter) into the descriptor cache ahead of its first load.
__device__ __forceinline__ void prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// The box of `map` whose first element is at (x0 along the contiguous dimension, x1 along the rows) into shared
// memory at `dst` (aligned as the map's swizzle needs: 1024 bytes for 128-byte swizzle); elements outside the
// tensor read as zero. Its bytes count towards the current phase of `bar`. x0 · element size must be a multiple of
// 16 bytes (the H200 raises an illegal instruction otherwise); x1 may be any row.
__device__ __forceinline__ void load_2d(uint32_t dst, const CUtensorMap* map, int x0, int x1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n"
      :
      : "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x0), "r"(x1), "r"(bar)
      : "memory");
}
// The box of a 4-D map whose first element is at (x0, x1, x2, x3), as load_2d.
__device__ __forceinline__ void load_4d(uint32_t dst, const CUtensorMap* map, int x0, int x1, int x2, int x3,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
      :
      : "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x0), "r"(x1), "r"(x2), "r"(x3), "r"(bar)
      : "memory");
}
#endif  // DACPP_HAS_WGMMA

}  // namespace dacpp::cuda::tma
