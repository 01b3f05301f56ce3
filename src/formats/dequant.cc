#include "formats/dequant.h"

#include <cstring>

#include "core/error.h"
#include "formats/half.h"

namespace dacpp {
namespace {

constexpr int kQK = 256;  // values per K super-block

uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
float load_f16(const uint8_t* p) {
  return f16_to_f32(load_u16(p));
}

void dequant_q8_0(const uint8_t* b, float* y, int64_t nblocks) {
  for (int64_t i = 0; i < nblocks; ++i, b += 34, y += 32) {
    const float d = load_f16(b);
    const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
    for (int l = 0; l < 32; ++l) y[l] = d * qs[l];
  }
}

// q4_K / q5_K: the 256 values are 4 chunks of 64; chunk c holds sub-blocks 2c (low nibbles of qs[32c..32c+31])
// and 2c+1 (high nibbles). q5_K adds a fifth bit: qh[l] bit 2c for value l of sub-block 2c, bit 2c+1 for 2c+1.
void dequant_q45_k(const uint8_t* b, float* y, int64_t nblocks, bool five_bit) {
  const size_t block_bytes = five_bit ? 176 : 144;
  for (int64_t i = 0; i < nblocks; ++i, b += block_bytes) {
    const float d = load_f16(b);
    const float dmin = load_f16(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* qh = b + 16;
    const uint8_t* qs = five_bit ? b + 48 : b + 16;
    for (int c = 0; c < 4; ++c) {
      for (int half = 0; half < 2; ++half) {
        uint8_t sc, m;
        k_scale_min(2 * c + half, scales, &sc, &m);
        const float dl = d * sc, ml = dmin * m;
        const int bit = 2 * c + half;
        for (int l = 0; l < 32; ++l) {
          int q = half ? (qs[32 * c + l] >> 4) : (qs[32 * c + l] & 0xF);
          if (five_bit && ((qh[l] >> bit) & 1)) q += 16;
          *y++ = dl * q - ml;
        }
      }
    }
  }
}

// q6_K: two halves of 128 values. In half h, value 32r + l (r = 0..3, l = 0..31) takes its low 4 bits from
// ql[64h + l + 32(r & 1)] (low nibble for r < 2, high nibble for r ≥ 2) and its high 2 bits from bits 2r..2r+1 of
// qh[32h + l]; its scale is scales[8h + 2r + l / 16].
void dequant_q6_k(const uint8_t* b, float* y, int64_t nblocks) {
  for (int64_t i = 0; i < nblocks; ++i, b += 210) {
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = load_f16(b + 208);
    for (int h = 0; h < 2; ++h) {
      for (int r = 0; r < 4; ++r) {
        for (int l = 0; l < 32; ++l) {
          const uint8_t lo_byte = ql[64 * h + l + 32 * (r & 1)];
          const int lo = r < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
          const int hi = (qh[32 * h + l] >> (2 * r)) & 3;
          const int q = (lo | (hi << 4)) - 32;
          y[128 * h + 32 * r + l] = d * sc[8 * h + 2 * r + l / 16] * q;
        }
      }
    }
    y += kQK;
  }
}

}  // namespace

void k_scale_min(int j, const uint8_t* s, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

void dequantize_row(DType dt, const void* src, float* dst, int64_t n) {
  const int64_t bv = dtype_block_values(dt);
  DACPP_CHECK(n >= 0 && n % bv == 0, ErrorCode::InvalidArgument, "dequantize_row: ", n,
              " values is not a multiple of the ", dtype_name(dt), " block size ", bv);
  const uint8_t* b = static_cast<const uint8_t*>(src);
  switch (dt) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(load_u16(b + 2 * i));
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(b + 2 * i));
      return;
    case DType::I8:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(b[i]);
      return;
    case DType::I32:
      for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, b + 4 * i, 4);
        dst[i] = static_cast<float>(v);
      }
      return;
    case DType::Q8_0:
      dequant_q8_0(b, dst, n / bv);
      return;
    case DType::Q4_K:
      dequant_q45_k(b, dst, n / bv, /*five_bit=*/false);
      return;
    case DType::Q5_K:
      dequant_q45_k(b, dst, n / bv, /*five_bit=*/true);
      return;
    case DType::Q6_K:
      dequant_q6_k(b, dst, n / bv);
      return;
  }
  DACPP_THROW(ErrorCode::Internal, "dequantize_row: unknown dtype ", static_cast<int>(dt));
}

}  // namespace dacpp
