// Scalar conversions between f32 and the 16-bit float storage formats (IEEE binary16 and bfloat16), as raw bits.
// f32 → 16-bit rounds to nearest, ties to even; NaN stays NaN, overflow becomes ±inf. Pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

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

// Whether a bf16 value has an all-ones exponent (±inf or NaN): rounded from a finite f32, only an overflow makes one.
inline bool bf16_exponent_all_ones(uint16_t h) {
  return (h & 0x7f80u) == 0x7f80u;
}

// Throws InvalidModel naming the f32 tensor `name` (src[0, n)), its first value that rounds past bf16's range and
// that value's index, and what to do instead (load with precision f32). For the CPU's bf16 weights, once their
// rounded copy was found to hold an overflow.
[[noreturn]] void throw_bf16_overflow(std::string_view name, const float* src, int64_t n);

}  // namespace dacpp
