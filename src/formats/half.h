// Scalar conversions between f32 and the 16-bit float storage formats (IEEE binary16 and bfloat16), as raw bits.
// f32 → 16-bit rounds to nearest, ties to even; NaN stays NaN, overflow becomes ±inf. Pure functions.
#pragma once

#include <cstdint>
#include <cstring>

namespace dacpp {

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);

// Inline, so that loops converting many values vectorise.
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // keep NaN a NaN
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace dacpp
