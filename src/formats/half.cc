#include "formats/half.h"

#include <cstring>

#include "core/error.h"

namespace dacpp {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return bits_float(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);  // ±0
  // Subnormal: value = mant * 2^-24. Normalise the mantissa.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return bits_float(sign | static_cast<uint32_t>(112 - e) << 23 | ((mant & 0x3FFu) << 13));
}

uint16_t f32_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);   // NaN (quiet)
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to ≥ 65520: inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero) in f16: value / 2^-24, rounded to nearest even.
    if (abs < 0x33000000u) return sign;  // < 2^-25: rounds to zero
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (112 - exp) ... brings the value to units of 2^-24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  uint32_t v = abs - 0x38000000u;  // exponent bias 127 → 15
  const uint32_t rem = v & 0x1FFFu;
  v >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;  // may carry into the exponent: still correct
  return static_cast<uint16_t>(sign | v);
}

float bf16_to_f32(uint16_t h) {
  return bits_float(static_cast<uint32_t>(h) << 16);
}

void throw_bf16_overflow(std::string_view name, const float* src, int64_t n) {
  int64_t at = 0;
  while (at + 1 < n && !bf16_exponent_all_ones(f32_to_bf16(src[at]))) ++at;
  DACPP_THROW(ErrorCode::InvalidModel, "tensor '", name, "': value ", n > 0 ? src[at] : 0.f, " at index ", at,
              " overflows bf16 (precision bf16 on the CPU); load with precision f32");
}

}  // namespace dacpp
