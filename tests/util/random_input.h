// A random normalised input batch for model-level tests: [n, 3, h, w] f32, standard normal values from `seed`
// (never all zero: a forward on zeros proves little). Header-only.
#pragma once

#include <cstdint>
#include <random>

#include "core/tensor.h"

namespace dacpp::testing {

inline Tensor random_input(int64_t h, int64_t w, unsigned seed, int64_t n = 1) {
  Tensor x = Tensor::empty({n, 3, h, w}, DType::F32, "input");
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = nd(rng);
  return x;
}

}  // namespace dacpp::testing
