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

// d (+)= A·B for m64n64k16, A (64×16) and B (64×16) in shared memory, A K-major, B K-major (kTransB = 0) or
// MN-major (1); scale_d = 0 overwrites d.
template <typename T, int kTransB = 0>
__device__ __forceinline__ void wgmma_ss_n64(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
#define DACPP_WGMMA_SS(TY)                                                                                       \
  asm volatile(                                                                                                  \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                               \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY                                                    \
      " {"                                                                                                       \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                   \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                           \
      "}, %32, %33, p, 1, 1, 0, %35;\n}\n"                                                                         \
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), \
        "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
        "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
        "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
        "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                                               \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (std::is_same_v<T, __half>) {
    DACPP_WGMMA_SS("f16");
  } else {
    DACPP_WGMMA_SS("bf16");
  }
#undef DACPP_WGMMA_SS
}

// d (+)= A·B for m64n128k16, A (64×16) and B (128×16) in shared memory, A K-major, B K-major (kTransB = 0) or
// MN-major (1); scale_d = 0 overwrites d.
template <typename T, int kTransB = 0>
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
#define DACPP_WGMMA_SS(TY)                                                                                         \
  asm volatile(                                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                                 \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY                                                     \
      " {"                                                                                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                     \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                           \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                           \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"                             \
      "}, %64, %65, p, 1, 1, 0, %67;\n}\n"                                                                           \
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),   \
        "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]),   \
        "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]),   \
        "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),   \
        "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]),   \
        "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
        "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),            \
        "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]),            \
        "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),            \
        "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])                                             \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (std::is_same_v<T, __half>) {
    DACPP_WGMMA_SS("f16");
  } else {
    DACPP_WGMMA_SS("bf16");
  }
#undef DACPP_WGMMA_SS
}

// d += A·B for m64n64k16, A from registers (per warp the mma.m16n8k16 A fragment of its 16 rows), B (16×64) in
// shared memory MN-major (N contiguous, i.e. transposed).
template <typename T>
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b) {
#define DACPP_WGMMA_RS(TY)                                                                                       \
  asm volatile(                                                                                                  \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                               \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY                                                    \
      " {"                                                                                                       \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                   \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                           \
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                                           \
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), \
        "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
        "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
        "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
        "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                                               \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1))
  if constexpr (std::is_same_v<T, __half>) {
    DACPP_WGMMA_RS("f16");
  } else {
    DACPP_WGMMA_RS("bf16");
  }
#undef DACPP_WGMMA_RS
}

#endif  // DACPP_HAS_WGMMA

}  // namespace dacpp::cuda::wgmma
