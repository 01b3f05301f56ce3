// Storage data types. Compute is f32 on the CPU; the others are storage formats that are converted on load
// (f16, bf16, the ggml block types) or used by quantized paths (int8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dacpp {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  I8,
  I32,
  Q8_0,  // ggml block: 32 values, f16 scale + 32 int8                     (34 bytes)
  Q4_K,  // ggml super-block: 256 values                                  (144 bytes)
  Q5_K,  // ggml super-block: 256 values                                  (176 bytes)
  Q6_K,  // ggml super-block: 256 values                                  (210 bytes)
};

// "f32", "f16", "bf16", "i8", "i32", "q8_0", "q4_K", "q5_K", "q6_K".
const char* dtype_name(DType dt);
// Values per storage block (1 for plain types, 32 or 256 for block types).
int64_t dtype_block_values(DType dt);
// Bytes per storage block.
size_t dtype_block_bytes(DType dt);
// True for the ggml block-quantized types.
bool dtype_is_quantized(DType dt);
// Bytes for `n` values; `n` must be a multiple of the block size (else returns 0: callers validate first).
size_t dtype_nbytes(DType dt, int64_t n);

}  // namespace dacpp
