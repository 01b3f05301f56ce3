// Scalar conversions between f32 and the 16-bit float storage formats (IEEE binary16 and bfloat16), as raw bits.
// f32 → 16-bit rounds to nearest, ties to even; NaN stays NaN, overflow becomes ±inf. Pure functions.
#pragma once

#include <cstdint>

namespace dacpp {

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

}  // namespace dacpp
