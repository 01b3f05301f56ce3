#include "core/dtype.h"

namespace dacpp {

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I8: return "i8";
    case DType::I32: return "i32";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_K: return "q4_K";
    case DType::Q5_K: return "q5_K";
    case DType::Q6_K: return "q6_K";
  }
  return "?";
}

int64_t dtype_block_values(DType dt) {
  switch (dt) {
    case DType::Q8_0: return 32;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return 256;
    default: return 1;
  }
}

size_t dtype_block_bytes(DType dt) {
  switch (dt) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::I8: return 1;
    case DType::I32: return 4;
    case DType::Q8_0: return 34;
    case DType::Q4_K: return 144;
    case DType::Q5_K: return 176;
    case DType::Q6_K: return 210;
  }
  return 0;
}

bool dtype_is_quantized(DType dt) { return dtype_block_values(dt) > 1; }

size_t dtype_nbytes(DType dt, int64_t n) {
  const int64_t bv = dtype_block_values(dt);
  if (n < 0 || n % bv != 0) return 0;
  return static_cast<size_t>(n / bv) * dtype_block_bytes(dt);
}

}  // namespace dacpp
