#include "formats/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "formats/dequant.h"
#include "formats/half.h"

namespace dacpp {
namespace {

void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// f16 scale for `v` (≥ 0) and its exact f32 value after rounding. Throws when it overflows f16.
float store_scale(uint8_t* p, float v, DType dt) {
  const uint16_t h = f32_to_f16(v);
  const float back = f16_to_f32(h);
  DACPP_CHECK(std::isfinite(back), ErrorCode::InvalidArgument, "quantize ", dtype_name(dt), ": block scale ", v,
              " does not fit in f16");
  store_u16(p, h);
  return back;
}

void check_finite(const float* x, int64_t n, DType dt) {
  for (int64_t i = 0; i < n; ++i)
    DACPP_CHECK(std::isfinite(x[i]), ErrorCode::InvalidArgument, "quantize ", dtype_name(dt), ": value ", x[i],
                " at index ", i, " is not finite");
}

// Round to nearest (ties away from zero), clamped to [lo, hi] before the conversion so no value overflows.
int clamp_round(float v, int lo, int hi) {
  return static_cast<int>(std::lround(std::min(static_cast<float>(hi), std::max(static_cast<float>(lo), v))));
}

void quant_q8_0(const float* x, uint8_t* b) {
  float amax = 0;
  for (int l = 0; l < 32; ++l) amax = std::max(amax, std::fabs(x[l]));
  const float d = store_scale(b, amax / 127.f, DType::Q8_0);
  const float id = d > 0 ? 1.f / d : 0.f;
  for (int l = 0; l < 32; ++l) b[2 + l] = static_cast<uint8_t>(static_cast<int8_t>(clamp_round(x[l] * id, -128, 127)));
}

// Packs 6-bit scale `ls` and min `lm` of sub-block j into the 12 scale bytes (inverse of k_scale_min).
void pack_scale_min(int j, uint8_t ls, uint8_t lm, uint8_t* s) {
  if (j < 4) {
    s[j] = static_cast<uint8_t>((s[j] & 0xC0) | ls);
    s[j + 4] = static_cast<uint8_t>((s[j + 4] & 0xC0) | lm);
  } else {
    s[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
    s[j - 4] = static_cast<uint8_t>(s[j - 4] | ((ls >> 4) << 6));
    s[j] = static_cast<uint8_t>(s[j] | ((lm >> 4) << 6));
  }
}

// q4_K (nmax 15) / q5_K (nmax 31): x ≈ d*ls[j]*q - dmin*lm[j], q in [0, nmax]. Mins are chosen first (rounded up
// so every sub-block's lowest value stays representable), then scales cover max + min.
void quant_q45_k(const float* x, uint8_t* b, bool five_bit) {
  const DType dt = five_bit ? DType::Q5_K : DType::Q4_K;
  const int nmax = five_bit ? 31 : 15;
  float lo[8], hi[8];
  float max_min = 0;
  for (int j = 0; j < 8; ++j) {
    lo[j] = 0, hi[j] = 0;
    for (int l = 0; l < 32; ++l) lo[j] = std::min(lo[j], x[32 * j + l]), hi[j] = std::max(hi[j], x[32 * j + l]);
    max_min = std::max(max_min, -lo[j]);
  }
  const float dmin = store_scale(b + 2, max_min / 63.f, dt);
  uint8_t lm[8];
  float need[8], max_need = 0;
  for (int j = 0; j < 8; ++j) {
    lm[j] = dmin > 0 ? static_cast<uint8_t>(std::min(63.f, std::ceil(-lo[j] / dmin))) : 0;
    need[j] = (hi[j] + dmin * lm[j]) / nmax;
    max_need = std::max(max_need, need[j]);
  }
  const float d = store_scale(b, max_need / 63.f, dt);
  uint8_t* scales = b + 4;
  std::memset(scales, 0, 12);
  uint8_t ls[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = d > 0 ? static_cast<uint8_t>(std::min(63.f, std::ceil(need[j] / d))) : 0;
    pack_scale_min(j, ls[j], lm[j], scales);
  }
  uint8_t* qh = b + 16;
  uint8_t* qs = five_bit ? b + 48 : b + 16;
  if (five_bit) std::memset(qh, 0, 32);
  std::memset(qs, 0, 128);
  for (int j = 0; j < 8; ++j) {
    const float dl = d * ls[j], ml = dmin * lm[j];
    const int c = j / 2, half = j % 2;
    for (int l = 0; l < 32; ++l) {
      const int q = dl > 0 ? clamp_round((x[32 * j + l] + ml) / dl, 0, nmax) : 0;
      qs[32 * c + l] = static_cast<uint8_t>(qs[32 * c + l] | ((q & 0xF) << (4 * half)));
      if (q > 15) qh[l] = static_cast<uint8_t>(qh[l] | (1u << j));
    }
  }
}

// q6_K: x ≈ d*sc[j]*(q-32), q in [0, 63], 16 sub-blocks of 16 with positive int8 scales.
void quant_q6_k(const float* x, uint8_t* b) {
  float amax[16], max_amax = 0;
  for (int j = 0; j < 16; ++j) {
    amax[j] = 0;
    for (int l = 0; l < 16; ++l) amax[j] = std::max(amax[j], std::fabs(x[16 * j + l]));
    max_amax = std::max(max_amax, amax[j]);
  }
  const float d = store_scale(b + 208, max_amax / 31.f / 127.f, DType::Q6_K);
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  std::memset(b, 0, 192);
  for (int j = 0; j < 16; ++j) sc[j] = static_cast<int8_t>(d > 0 ? std::min(127.f, std::ceil(amax[j] / 31.f / d)) : 0);
  for (int i = 0; i < 256; ++i) {
    const int h = i / 128, r = (i % 128) / 32, l = i % 32;
    const float dl = d * sc[i / 16];
    const int q = (dl > 0 ? clamp_round(x[i] / dl, -32, 31) : 0) + 32;
    uint8_t& lo = ql[64 * h + l + 32 * (r & 1)];
    lo = static_cast<uint8_t>(lo | ((q & 0xF) << (r < 2 ? 0 : 4)));
    qh[32 * h + l] = static_cast<uint8_t>(qh[32 * h + l] | ((q >> 4) << (2 * r)));
  }
}

}  // namespace

void quantize_row(DType dt, const float* src, void* dst, int64_t n) {
  const int64_t bv = dtype_block_values(dt);
  DACPP_CHECK(n >= 0 && n % bv == 0, ErrorCode::InvalidArgument, "quantize_row: ", n,
              " values is not a multiple of the ", dtype_name(dt), " block size ", bv);
  uint8_t* b = static_cast<uint8_t*>(dst);
  const size_t bb = dtype_block_bytes(dt);
  if (dtype_is_quantized(dt)) check_finite(src, n, dt);
  switch (dt) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) store_u16(b + 2 * i, f32_to_f16(src[i]));
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) store_u16(b + 2 * i, f32_to_bf16(src[i]));
      return;
    case DType::Q8_0:
      for (int64_t i = 0; i < n / bv; ++i) quant_q8_0(src + i * bv, b + i * bb);
      return;
    case DType::Q4_K:
    case DType::Q5_K:
      for (int64_t i = 0; i < n / bv; ++i) quant_q45_k(src + i * bv, b + i * bb, dt == DType::Q5_K);
      return;
    case DType::Q6_K:
      for (int64_t i = 0; i < n / bv; ++i) quant_q6_k(src + i * bv, b + i * bb);
      return;
    case DType::I8:
    case DType::I32:
      break;
  }
  DACPP_THROW(ErrorCode::Unsupported, "quantize_row: cannot quantize f32 to ", dtype_name(dt));
}

}  // namespace dacpp
