// Quantization of f32 values into the storage formats read by dequantize_row (dequant.h documents the block
// layouts). Round-to-nearest with per-(sub-)block scales chosen to cover each block's range: reference quality,
// deterministic, single-threaded per call (callers parallelise over rows).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace dacpp {

// Writes dtype_nbytes(dt, n) bytes for `n` f32 values of `src` to `dst` (no alignment needed). Supports F32, F16,
// BF16, Q8_0, Q4_K, Q5_K, Q6_K. Throws InvalidArgument when `n` is not a multiple of the block size, when a value
// is not finite (quantized types), or when a block's scale does not fit in f16; Unsupported for I8/I32.
void quantize_row(DType dt, const float* src, void* dst, int64_t n);

}  // namespace dacpp
