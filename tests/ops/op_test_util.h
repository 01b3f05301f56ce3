// Helpers for the op tests: random non-zero inputs and a relative-L2 / max-abs comparison against dacpp::ref.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "formats/half.h"

namespace dacpp::test {

// Uniform in ±[0.05, 1]·amp (never zero), deterministic per seed.
inline Tensor random_tensor(const Shape& shape, uint32_t seed, float amp = 1.f, std::string name = {}) {
  Tensor t = Tensor::empty(shape, DType::F32, std::move(name));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mag(0.05f, 1.f);
  std::bernoulli_distribution sign(0.5);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (sign(rng) ? 1.f : -1.f) * mag(rng) * amp;
  return t;
}

// t rounded to a bf16 tensor (nearest even, formats/half.h), as a model loaded in bf16 holds its weights.
inline Tensor to_bf16(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), DType::BF16, t.name());
  auto* p = static_cast<uint16_t*>(out.raw());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = f32_to_bf16(t.data<float>()[i]);
  return out;
}

// A host tensor filled with a NaN sentinel, so an op that leaves outputs unwritten fails the comparison.
inline Tensor output_tensor(const Shape& shape, std::string name = "y") {
  Tensor t = Tensor::empty(shape, DType::F32, std::move(name));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = NAN;
  return t;
}

struct Diff {
  double rel_l2 = 0, max_abs = 0;
};

inline Diff diff(const Tensor& got, const Tensor& want) {
  double num = 0, den = 0, mx = 0;
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double d = static_cast<double>(g[i]) - w[i];
    num += d * d;
    den += static_cast<double>(w[i]) * w[i];
    mx = std::isnan(d) ? INFINITY : std::max(mx, std::fabs(d));
  }
  if (std::isnan(num)) num = INFINITY;
  return {den > 0 ? std::sqrt(num / den) : std::sqrt(num), mx};
}

// Asserts shapes are equal, relative L2 error <= rel and max abs error <= abs.
inline void expect_close(const Tensor& got, const Tensor& want, double rel = 1e-5, double abs = 1e-4,
                         const std::string& what = {}) {
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape())) << what;
  const Diff d = diff(got, want);
  EXPECT_LE(d.rel_l2, rel) << what << " max_abs=" << d.max_abs;
  EXPECT_LE(d.max_abs, abs) << what << " rel_l2=" << d.rel_l2;
}

// "1x3x7x5": a shape as a test-name fragment (gtest names must be alphanumeric or '_').
inline std::string shape_tag(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out.empty() ? "scalar" : out;
}

// "case3_<detail>": the name generator body for INSTANTIATE_TEST_SUITE_P (the index keeps names unique).
inline std::string case_name(size_t index, const std::string& detail) {
  return "case" + std::to_string(index) + (detail.empty() ? "" : "_" + detail);
}

}  // namespace dacpp::test
