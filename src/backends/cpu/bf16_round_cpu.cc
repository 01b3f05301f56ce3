// bf16_round_cpu.h. The AVX512-BF16 loop is compiled for that instruction set alone (a target attribute), the rest of
// the file for the baseline, and it runs only where bf16_rounding_native() has seen the CPU support it.
#include "backends/cpu/bf16_round_cpu.h"

#include <immintrin.h>

#include "backends/cpu/cpu_ops.h"
#include "formats/half.h"

namespace dacpp::cpu {
namespace {

constexpr int64_t kGrain = int64_t{1} << 16;  // values per thread's share, at least: ~2 µs of work

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void round_native(const float* x, uint16_t* y,
                                                                                  int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512bh r = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(y + i, (__m512i)r);
  }
  if (i < n) {
    const __mmask16 lo = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1u);
    const __m512 a = _mm512_maskz_loadu_ps(lo, x + i);
    _mm256_mask_storeu_epi16(y + i, lo, (__m256i)_mm512_cvtneps_pbh(a));
    if (n - i > 16) {
      const __mmask16 hi = static_cast<__mmask16>((1u << (n - i - 16)) - 1u);
      const __m512 b = _mm512_maskz_loadu_ps(hi, x + i + 16);
      _mm256_mask_storeu_epi16(y + i + 16, hi, (__m256i)_mm512_cvtneps_pbh(b));
    }
  }
}

void round_scalar(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

}  // namespace

bool bf16_rounding_native() {
  static const bool native = [] {
    __builtin_cpu_init();
    const Bf16Support& s = bf16_support();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16") && s.native && s.refusal.empty();
  }();
  return native;
}

void round_to_bf16_serial(const float* x, uint16_t* y, int64_t n) {
  if (bf16_rounding_native())
    round_native(x, y, n);
  else
    round_scalar(x, y, n);
}

void round_to_bf16(CpuContext& c, const float* x, uint16_t* y, int64_t n) {
  c.pool().parallel_for(n, kGrain, [&](int64_t b, int64_t e) { round_to_bf16_serial(x + b, y + b, e - b); });
}

}  // namespace dacpp::cpu
