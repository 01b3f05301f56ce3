// Helpers of the model-level GPU tests (run from the repository root on the GPU machine): whether a CUDA device is
// usable, and a random normalised input batch. Header-only.
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_ops.h"
#include "core/error.h"
#include "core/tensor.h"
#include "util/random_input.h"

namespace dacpp::gputest {

inline bool have_gpu() {
  try {
    cuda::create_context(0);
    return true;
  } catch (const Error&) {
    return false;
  }
}

using testing::random_input;  // [n, 3, h, w] f32, standard normal values from `seed`

}  // namespace dacpp::gputest
