// A deterministic GGUF exercising every writer KV type and every tensor dtype, shared by the round-trip tests and
// the gguf-py interoperability check (GgufInterop in gguf_roundtrip_test.cc).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "formats/gguf_writer.h"
#include "formats/quantize.h"

namespace dacpp::gguf_test {

struct SampleTensor {
  std::string name;
  DType dtype;
  Shape shape;  // torch order
};

inline const std::vector<SampleTensor>& sample_tensors() {
  static const std::vector<SampleTensor> kTensors = {
      {"t.f32", DType::F32, {2, 3, 32}},       {"t.f16", DType::F16, {4, 32}},    {"t.bf16", DType::BF16, {64}},
      {"t.q8_0", DType::Q8_0, {2, 64}},        {"t.q4_k", DType::Q4_K, {2, 256}}, {"t.q5_k", DType::Q5_K, {256}},
      {"t.q6_k", DType::Q6_K, {1, 1, 2, 256}}, {"t.i8", DType::I8, {16}},         {"t.i32", DType::I32, {2, 4}},
  };
  return kTensors;
}

// Never zero: sin of a non-multiple of pi, scaled.
inline std::vector<float> sample_values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.37 * double(i) + seed + 0.5) * (1 + i % 7) / 4);
  return v;
}

// The stored bytes of sample tensor k: quantized from sample_values; i8/i32 hold small integers.
inline Tensor sample_tensor(size_t k) {
  const SampleTensor& s = sample_tensors()[k];
  Tensor t = Tensor::empty(s.shape, s.dtype, s.name);
  const std::vector<float> v = sample_values(t.numel(), static_cast<int>(k));
  if (s.dtype == DType::I8 || s.dtype == DType::I32) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int x = static_cast<int>(i * 37 % 201) - 100;
      if (s.dtype == DType::I8)
        t.data<int8_t>()[i] = static_cast<int8_t>(x);
      else
        t.data<int32_t>()[i] = x * 100000;
    }
  } else {
    quantize_row(s.dtype, v.data(), t.data<uint8_t>(), t.numel());
  }
  return t;
}

inline GgufWriter sample_writer() {
  GgufWriter w;
  w.add_string("general.architecture", "depthanything3");
  w.add_u32("depthanything3.vit.depth", 12);
  w.add_i32("depthanything3.vit.alt_start", -1);
  w.add_f32("depthanything3.vit.rope_freq", 100.0f);
  w.add_bool("depthanything3.vit.cat_token", true);
  w.add_bool("depthanything3.vit.qkv_bias", false);
  w.add_string("depthanything3.img.resize_mode", "upper_bound");
  w.add_i32_array("depthanything3.vit.out_layers", {5, 7, 9, -11});
  w.add_f32_array("depthanything3.img.mean", {0.485f, 0.456f, 0.406f});
  w.add_string_array("depthanything3.test.names", {"a", "bc", ""});
  for (size_t k = 0; k < sample_tensors().size(); ++k) w.add_tensor(sample_tensors()[k].name, sample_tensor(k));
  return w;
}

}  // namespace dacpp::gguf_test
