// Constants of the GGUF container shared by the reader and the writer (GGUF v3, little-endian).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/dtype.h"

namespace dacpp::gguf {

inline constexpr uint8_t kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxAlignment = 1u << 20;
inline constexpr uint32_t kMaxDims = 4;
// ggml's GGML_MAX_NAME is 64 bytes including the terminating NUL.
inline constexpr size_t kMaxTensorName = 63;
inline constexpr const char* kAlignmentKey = "general.alignment";

// The ggml type id of a storage dtype (F32=0, F16=1, Q8_0=8, Q4_K=12, Q5_K=13, Q6_K=14, I8=24, I32=26, BF16=30).
uint32_t ggml_type_id(DType dt);
// The dtype of a ggml type id, or nullopt for ids this engine does not read.
std::optional<DType> dtype_from_ggml(uint32_t id);

}  // namespace dacpp::gguf
