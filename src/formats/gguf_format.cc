#include "formats/gguf_format.h"

namespace dacpp::gguf {

uint32_t ggml_type_id(DType dt) {
  switch (dt) {
    case DType::F32:
      return 0;
    case DType::F16:
      return 1;
    case DType::Q8_0:
      return 8;
    case DType::Q4_K:
      return 12;
    case DType::Q5_K:
      return 13;
    case DType::Q6_K:
      return 14;
    case DType::I8:
      return 24;
    case DType::I32:
      return 26;
    case DType::BF16:
      return 30;
  }
  return UINT32_MAX;
}

std::optional<DType> dtype_from_ggml(uint32_t id) {
  switch (id) {
    case 0:
      return DType::F32;
    case 1:
      return DType::F16;
    case 8:
      return DType::Q8_0;
    case 12:
      return DType::Q4_K;
    case 13:
      return DType::Q5_K;
    case 14:
      return DType::Q6_K;
    case 24:
      return DType::I8;
    case 26:
      return DType::I32;
    case 30:
      return DType::BF16;
    default:
      return std::nullopt;
  }
}

}  // namespace dacpp::gguf
