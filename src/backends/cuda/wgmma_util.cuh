// Hopper (sm_90a) warpgroup MMA helpers: shared-memory matrix descriptors for the 128-byte swizzle, the wgmma
// fences, and the m64nNk16 wgmma.mma_async shapes the attention kernel uses, f32 accumulation, bf16 or f16 inputs.
// Only code compiled for sm_90a may call them (guard with DACPP_HAS_WGMMA); other targets see the declarations only.
//
// Shared-memory tiles (128-byte swizzle): a tile of rows of 64 16-bit elements (128 bytes each), 1024-byte aligned;
// the 16-byte chunk c of row r is stored at chunk c ^ (r % 8). Eight rows (1024 bytes) form one swizzle atom.
//   K-major operand (A = 64×16 or B = N×16 with K contiguous): rows are M / N, the K step of 16 elements advances
//   the start address by 32 bytes inside the atom; atoms of 8 rows are 1024 bytes apart (stride byte offset).
//   MN-major operand (B = 16×N, N contiguous): rows are K, 64 columns per 128-byte row (a wider N is held as
//   separate 64-column tiles, `leading_bytes` apart); the K step of 16 rows advances 2048 bytes.
//
// Accumulator layout of m64nNk16 (f32): warp w of the warpgroup holds rows 16w..16w+15, each n8 block j of the
// columns in d[j][0..3] exactly like the mma.m16n8k16 C fragment (mma_util.cuh): d[j][0..1] = (g, 8j+2t..),
// d[j][2..3] = (g+8, 8j+2t..), g = lane / 4, t = lane % 4.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DACPP_HAS_WGMMA 1
#else
#define DACPP_HAS_WGMMA 0
#endif

namespace dacpp::cuda::wgmma {

// Byte offset of the 16-byte chunk `chunk` (0..7) of row `row` in a 128-byte-swizzled tile.
__device__ __forceinline__ int swizzle128(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

// Descriptor of a 128-byte-swizzled operand starting at shared address `addr` (1024-byte aligned tile; a K step
// inside the atom adds to the address): start >> 4 in bits 0-13, leading byte offset >> 4 in bits 16-29, stride
// byte offset 1024 >> 4 (between 8-row atoms) in bits 32-45, swizzle mode 1 (128 B) in bits 62-63. The leading
// byte offset matters only for an MN-major operand wider than one atom (N > 64): the distance between its 64-column
// halves; K-major operands ignore it.
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr, uint32_t leading_bytes = 16) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (uint64_t{1} << 62);
}

#if DACPP_HAS_WGMMA
// Orders this thread's generic-proxy writes to shared memory (stores, cp.async) before later async-proxy reads
// (wgmma operands): after the writes complete, before the barrier that publishes them.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Before the first wgmma of a batch: accumulator / A-fragment registers written by ordinary instructions are ready.
__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of accumulator registers across an in-flight wgmma (use on every
// accumulator right after the batch is issued and after it is waited for).
template <int R>
__device__ __forceinline__ void fence_operands(float (&d)[R][4]) {
#pragma unroll
  for (int j = 0; j < R; ++j) asm volatile("" : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])::"memory");
}

// Operand lists shared by the wrappers below: the "+f" operands of accumulator rows d[j..j + 7] (32 registers) and
// the placeholders of the first and second 32; DACPP_WG_BY_TYPE expands one asm statement macro (taking the PTX
// type string) for f16 or bf16 inputs.
#define DACPP_WG_ACC4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define DACPP_WG_ACC32(j)                                                                                   \
  DACPP_WG_ACC4(j), DACPP_WG_ACC4(j + 1), DACPP_WG_ACC4(j + 2), DACPP_WG_ACC4(j + 3), DACPP_WG_ACC4(j + 4), \
      DACPP_WG_ACC4(j + 5), DACPP_WG_ACC4(j + 6), DACPP_WG_ACC4(j + 7)
#define DACPP_WG_REGS_0_31                                                 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define DACPP_WG_REGS_32_63                                                          \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define DACPP_WG_REGS_64_87                                                          \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87"
#define DACPP_WG_BY_TYPE(T, MMA)             \
  if constexpr (std::is_same_v<T, __half>) { \
    MMA("f16");                              \
  } else {                                   \
    MMA("bf16");                             \
  }

// d (+)= A·B for m64n64k16, A (64×16) and B (64×16) in shared memory, A K-major, B K-major (kTransB = 0) or
// MN-major (1); scale_d = 0 overwrites d.
template <typename T, int kTransB = 0>
__device__ __forceinline__ void wgmma_ss_n64(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
#define DACPP_MMA(TY)                                                                 \
  asm volatile(                                                                       \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                    \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {" DACPP_WG_REGS_0_31 \
      "}, %32, %33, p, 1, 1, 0, %35;\n}\n"                                            \
      : DACPP_WG_ACC32(0)                                                             \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  DACPP_WG_BY_TYPE(T, DACPP_MMA)
#undef DACPP_MMA
}

// d (+)= A·B for m64n128k16, A (64×16) and B (128×16) in shared memory, A K-major, B K-major (kTransB = 0) or
// MN-major (1); scale_d = 0 overwrites d.
template <typename T, int kTransB = 0>
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
#define DACPP_MMA(TY)                                                                                           \
  asm volatile(                                                                                                 \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                              \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" DACPP_WG_REGS_0_31 ", " DACPP_WG_REGS_32_63 \
      "}, %64, %65, p, 1, 1, 0, %67;\n}\n"                                                                      \
      : DACPP_WG_ACC32(0), DACPP_WG_ACC32(8)                                                                    \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  DACPP_WG_BY_TYPE(T, DACPP_MMA)
#undef DACPP_MMA
}

// d (+)= A·B for m64n176k16, A (64×16) and B (176×16) in shared memory, both K-major; scale_d = 0 overwrites d.
// (conv3x3_wgmma_tma_kernel's 176-pixel tiles: DA2-L's 148² maps in 254 tiles, two waves of 132 multiprocessors.)
template <typename T>
__device__ __forceinline__ void wgmma_ss_n176(float (&d)[22][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
#define DACPP_MMA(TY)                                                                                           \
  asm volatile(                                                                                                 \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"                                                              \
      "wgmma.mma_async.sync.aligned.m64n176k16.f32." TY "." TY " {" DACPP_WG_REGS_0_31 ", " DACPP_WG_REGS_32_63 \
      ", " DACPP_WG_REGS_64_87 "}, %88, %89, p, 1, 1, 0, 0;\n}\n"                                               \
      : DACPP_WG_ACC32(0), DACPP_WG_ACC32(8), DACPP_WG_ACC4(16), DACPP_WG_ACC4(17), DACPP_WG_ACC4(18),          \
        DACPP_WG_ACC4(19), DACPP_WG_ACC4(20), DACPP_WG_ACC4(21)                                                 \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))
  DACPP_WG_BY_TYPE(T, DACPP_MMA)
#undef DACPP_MMA
}

// d += A·B for m64n64k16, A from registers (per warp the mma.m16n8k16 A fragment of its 16 rows), B (16×64) in
// shared memory MN-major (N contiguous, i.e. transposed).
template <typename T>
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b) {
#define DACPP_MMA(TY)                                                                 \
  asm volatile(                                                                       \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                    \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {" DACPP_WG_REGS_0_31 \
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                \
      : DACPP_WG_ACC32(0)                                                             \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1))
  DACPP_WG_BY_TYPE(T, DACPP_MMA)
#undef DACPP_MMA
}

#undef DACPP_WG_BY_TYPE
#undef DACPP_WG_REGS_64_87
#undef DACPP_WG_REGS_32_63
#undef DACPP_WG_REGS_0_31
#undef DACPP_WG_ACC32
#undef DACPP_WG_ACC4
#endif  // DACPP_HAS_WGMMA

}  // namespace dacpp::cuda::wgmma
