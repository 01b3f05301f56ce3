// Helpers of the model-level GPU tests (run from the repository root on the GPU machine): whether a CUDA device is
// usable, and a random normalised input batch. Header-only.
#pragma once

#include <cstdint>
#include <random>

#include "backends/cuda/cuda_ops.h"
#include "core/error.h"
#include "core/tensor.h"

namespace dacpp::gputest {

inline bool have_gpu() {
  try {
    cuda::create_context(0);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// [n, 3, h, w] f32, standard normal values from `seed`.
inline Tensor random_input(int64_t h, int64_t w, unsigned seed, int64_t n = 1) {
  Tensor x = Tensor::empty({n, 3, h, w}, DType::F32, "input");
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = nd(rng);
  return x;
}

}  // namespace dacpp::gputest
