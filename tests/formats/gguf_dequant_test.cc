// Half conversions, hand-built quantized blocks with values computed by hand from the layout definitions
// (formats/dequant.h), and quantize → dequantize round trips with per-type error bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "formats/dequant.h"
#include "formats/half.h"
#include "formats/quantize.h"

namespace dacpp {
namespace {

TEST(GgufHalf, F16KnownValues) {
  EXPECT_EQ(f16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(f16_to_f32(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7C00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7E00)));
  EXPECT_EQ(f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);  // the tie above the largest finite rounds to inf
  EXPECT_EQ(f32_to_f16(1e-8f), 0x0000);
  EXPECT_EQ(f32_to_f16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie → even
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie → even (up)
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);             // subnormal tie 1.5 → 2
  EXPECT_EQ(f32_to_f16(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(f32_to_f16(NAN) & 0x03FF, 0);
}

TEST(GgufHalf, F16EveryValueRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), h) << "f16 bits 0x" << std::hex << h;
  }
}

TEST(GgufHalf, Bf16) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16_to_f32(0xC040), -3.0f);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie → even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie → even (up)
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16(f), h);
  }
}

TEST(GgufDequant, Q8_0HandBuilt) {
  uint8_t b[34];
  b[0] = 0x00, b[1] = 0x38;  // d = f16 0x3800 = 0.5, little-endian
  for (int l = 0; l < 32; ++l) b[2 + l] = static_cast<uint8_t>(static_cast<int8_t>(l * 8 - 128));
  float y[32];
  dequantize_row(DType::Q8_0, b, y, 32);
  EXPECT_EQ(y[0], -64.0f);
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_EQ(y[31], 60.0f);
  for (int l = 0; l < 32; ++l) EXPECT_EQ(y[l], 0.5f * (l * 8 - 128));
}

// Sub-block scales {1,2,3,4,20,37,50,63} and mins {5,6,7,8,35,17,0,63}, packed by hand:
// bytes 0-3 = scale j | (scale j+4 >> 4) << 6, bytes 4-7 = min j | (min j+4 >> 4) << 6,
// bytes 8-11 = (scale j+4 & 15) | (min j+4 & 15) << 4.
const uint8_t kKScales[12] = {0x41, 0x82, 0xC3, 0xC4, 0x85, 0x46, 0x07, 0xC8, 0x34, 0x15, 0x02, 0xFF};

TEST(GgufDequant, KScaleMinUnpacking) {
  const uint8_t sc[8] = {1, 2, 3, 4, 20, 37, 50, 63}, mn[8] = {5, 6, 7, 8, 35, 17, 0, 63};
  for (int j = 0; j < 8; ++j) {
    uint8_t s, m;
    k_scale_min(j, kKScales, &s, &m);
    EXPECT_EQ(s, sc[j]) << j;
    EXPECT_EQ(m, mn[j]) << j;
  }
}

TEST(GgufDequant, Q4_KHandBuilt) {
  uint8_t b[144];
  b[0] = 0x00, b[1] = 0x3C;  // d = 1
  b[2] = 0x00, b[3] = 0x38;  // dmin = 0.5
  std::memcpy(b + 4, kKScales, 12);
  for (int i = 0; i < 128; ++i) b[16 + i] = static_cast<uint8_t>(i);  // qs
  std::vector<float> y(256);
  dequantize_row(DType::Q4_K, b, y.data(), 256);
  // Value v: chunk c = v/64, sub-block 2c (low nibble of qs[32c + l]) or 2c+1 (high nibble), x = d*sc*q - dmin*m.
  EXPECT_EQ(y[0], -2.5f);     // q 0, sub-block 0: 0 - 0.5*5
  EXPECT_EQ(y[33], -3.0f);    // qs[1] high nibble 0, sub-block 1: 0 - 0.5*6
  EXPECT_EQ(y[100], 4.0f);    // qs[36]=0x24 high nibble 2, sub-block 3: 4*2 - 0.5*8
  EXPECT_EQ(y[130], 22.5f);   // qs[66]=0x42 low nibble 2, sub-block 4: 20*2 - 0.5*35
  EXPECT_EQ(y[170], 139.5f);  // qs[74]=0x4A high nibble 4, sub-block 5: 37*4 - 0.5*17
  EXPECT_EQ(y[200], 400.0f);  // qs[104]=0x68 low nibble 8, sub-block 6: 50*8 - 0
  EXPECT_EQ(y[255], 409.5f);  // qs[127]=0x7F high nibble 7, sub-block 7: 63*7 - 0.5*63
}

TEST(GgufDequant, Q5_KHandBuilt) {
  uint8_t b[176];
  b[0] = 0x00, b[1] = 0x3C;  // d = 1
  b[2] = 0x00, b[3] = 0x38;  // dmin = 0.5
  std::memcpy(b + 4, kKScales, 12);
  for (int l = 0; l < 32; ++l) b[16 + l] = static_cast<uint8_t>(1u << (l % 8));  // qh: bit j of qh[l] = 5th bit
  for (int i = 0; i < 128; ++i) b[48 + i] = static_cast<uint8_t>(i);             // qs
  std::vector<float> y(256);
  dequantize_row(DType::Q5_K, b, y.data(), 256);
  EXPECT_EQ(y[0], 13.5f);      // sub-block 0, l 0: qh[0] bit 0 set → q 16: 16 - 2.5
  EXPECT_EQ(y[33], 29.0f);     // sub-block 1, l 1: qh[1] bit 1 set → q 16: 2*16 - 3
  EXPECT_EQ(y[130], 22.5f);    // sub-block 4, l 2: qh[2] = bit 2 only → q 2
  EXPECT_EQ(y[165], 731.5f);   // sub-block 5, l 5: qs[69]=0x45 high 4, qh[5] bit 5 → q 20: 37*20 - 8.5
  EXPECT_EQ(y[200], 400.0f);   // sub-block 6, l 8: qh[8] = bit 0 only → q 8
  EXPECT_EQ(y[255], 1417.5f);  // sub-block 7, l 31: qh[31] bit 7 → q 23: 63*23 - 31.5
}

TEST(GgufDequant, Q6_KHandBuilt) {
  uint8_t b[210];
  for (int i = 0; i < 128; ++i) b[i] = static_cast<uint8_t>(i);       // ql
  for (int i = 0; i < 64; ++i) b[128 + i] = static_cast<uint8_t>(i);  // qh
  for (int j = 0; j < 16; ++j) b[192 + j] = static_cast<uint8_t>(static_cast<int8_t>((j % 2 ? -1 : 1) * (j + 1)));
  b[208] = 0x00, b[209] = 0x34;  // d = 0.25
  std::vector<float> y(256);
  dequantize_row(DType::Q6_K, b, y.data(), 256);
  // Value v: half h = v/128, r = (v%128)/32, l = v%32; low 4 bits from ql[64h + l + 32(r&1)] (high nibble when
  // r ≥ 2), high 2 bits = bits 2r.. of qh[32h + l], q - 32, scale scales[8h + 2r + l/16].
  EXPECT_EQ(y[0], -8.0f);     // ql[0]=0, qh[0]=0 → q -32, scale 1: 0.25*-32
  EXPECT_EQ(y[45], 21.75f);   // ql[45]=0x2D low 13, qh[13]=0b1101 bits 2-3 = 3 → 61-32 = 29, scale 3
  EXPECT_EQ(y[113], 58.0f);   // ql[49]=0x31 high 3, qh[17] bits 6-7 = 0 → -29, scale -8
  EXPECT_EQ(y[200], 13.0f);   // ql[72]=0x48 high 4, qh[40]=0b101000 bits 4-5 = 2 → 36-32 = 4, scale 13
  EXPECT_EQ(y[255], 100.0f);  // ql[127]=0x7F high 7, qh[63] bits 6-7 = 0 → -25, scale -16
}

TEST(GgufDequant, RejectsPartialBlocks) {
  uint8_t b[34] = {};
  float y[32];
  try {
    dequantize_row(DType::Q8_0, b, y, 31);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("q8_0"), std::string::npos);
  }
}

struct RoundTripCase {
  DType dt;
  float max_abs;  // on values uniform in [-1, 1]
  float max_rel_rms;
};

std::vector<float> random_values(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) {
    do x = dist(rng);
    while (x == 0.0f);
  }
  return v;
}

void check_round_trip(const RoundTripCase& c, const std::vector<float>& x, float range) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> q(dtype_nbytes(c.dt, n));
  ASSERT_FALSE(q.empty());
  quantize_row(c.dt, x.data(), q.data(), n);
  std::vector<float> y(x.size());
  dequantize_row(c.dt, q.data(), y.data(), n);
  double err2 = 0, sig2 = 0, max_err = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = std::fabs(double(y[i]) - x[i]);
    max_err = std::max(max_err, e);
    err2 += e * e;
    sig2 += double(x[i]) * x[i];
  }
  EXPECT_LE(max_err, c.max_abs * range) << dtype_name(c.dt);
  EXPECT_LE(std::sqrt(err2 / sig2), c.max_rel_rms) << dtype_name(c.dt);
  EXPECT_GT(max_err, 0.0) << dtype_name(c.dt) << ": lossy formats must show some error on random data";
}

// Bounds: about half a quantization step of each format over a block's range (q8_0: amax/127; q4_K: range/15;
// q5_K: range/31; q6_K: amax/31) plus slack for the 6/8-bit scale rounding; f16/bf16: half an ulp.
const RoundTripCase kCases[] = {
    {DType::F16, 1.0f / 2048, 1.0f / 2048}, {DType::BF16, 1.0f / 256, 1.0f / 256}, {DType::Q8_0, 0.0045f, 0.006f},
    {DType::Q4_K, 0.085f, 0.09f},           {DType::Q5_K, 0.042f, 0.045f},         {DType::Q6_K, 0.021f, 0.022f},
};

TEST(GgufQuantize, RoundTripSymmetric) {
  for (const RoundTripCase& c : kCases) check_round_trip(c, random_values(256 * 16, 7, -1.f, 1.f), 1.0f);
}

TEST(GgufQuantize, RoundTripOffsetAndScaled) {
  // All-positive blocks (mins unused), all-negative blocks, and a small magnitude (scales near f16 subnormals).
  for (const RoundTripCase& c : kCases) {
    check_round_trip(c, random_values(256 * 4, 11, 2.f, 3.f), 3.0f);
    check_round_trip(c, random_values(256 * 4, 13, -3.f, -1.f), 3.0f);
    check_round_trip(c, random_values(256 * 4, 17, -0.05f, 0.05f), 0.05f);
  }
}

TEST(GgufQuantize, ZerosStayZero) {
  for (DType dt : {DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    std::vector<float> x(256, 0.0f), y(256, 1.0f);
    std::vector<uint8_t> q(dtype_nbytes(dt, 256));
    quantize_row(dt, x.data(), q.data(), 256);
    dequantize_row(dt, q.data(), y.data(), 256);
    for (float v : y) ASSERT_EQ(v, 0.0f) << dtype_name(dt);
  }
}

TEST(GgufQuantize, RejectsNonFiniteAndBadCounts) {
  std::vector<float> x(256, 1.0f);
  x[17] = NAN;
  std::vector<uint8_t> q(dtype_nbytes(DType::Q4_K, 256));
  EXPECT_THROW(quantize_row(DType::Q4_K, x.data(), q.data(), 256), Error);
  EXPECT_THROW(quantize_row(DType::Q6_K, x.data(), q.data(), 128), Error);
  EXPECT_THROW(quantize_row(DType::I32, x.data(), q.data(), 16), Error);
}

}  // namespace
}  // namespace dacpp
