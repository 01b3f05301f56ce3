// Dequantization of stored tensor bytes into f32 (the ggml block formats as published in the GGUF description).
//
// Block layouts (little-endian, packed, no padding):
//   q8_0 (32 values, 34 bytes):  f16 d; int8 qs[32]                          x = d * q
//   q4_K (256 values, 144 bytes): f16 d; f16 dmin; u8 scales[12]; u8 qs[128]  x = d*sc[j]*q - dmin*m[j]
//   q5_K (256 values, 176 bytes): f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]
//   q6_K (256 values, 210 bytes): u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d  x = d*scales[j]*(q-32)
// The K formats split a super-block into sub-blocks (8 × 32 for q4_K/q5_K with 6-bit packed scale and min,
// 16 × 16 for q6_K with int8 scales); the exact bit placement is documented in dequant.cc.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace dacpp {

// Converts `n` values of storage type `dt` at `src` to f32 at `dst`. Supports every DType (i8/i32 are converted
// by value). Throws InvalidArgument when `n` is negative or not a multiple of dtype_block_values(dt). `src` must
// hold dtype_nbytes(dt, n) bytes; it needs no alignment.
void dequantize_row(DType dt, const void* src, float* dst, int64_t n);

// The 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes of a q4_K/q5_K super-block:
// j < 4: scale = s[j] & 63, min = s[j+4] & 63;
// j ≥ 4: scale = (s[j+4] & 15) | (s[j-4] >> 6) << 4, min = (s[j+4] >> 4) | (s[j] >> 6) << 4.
void k_scale_min(int j, const uint8_t* packed, uint8_t* scale, uint8_t* min);

}  // namespace dacpp
