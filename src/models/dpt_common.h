// Helpers shared by the DPT heads (dpt_head.cc, dual_dpt_head.cc).
#pragma once

#include <cstdint>

#include "layers/conv2d.h"

namespace dacpp::models::detail {

// A k×k convolution with "same" padding (k / 2), as the DPT heads declare them upstream.
inline layers::ConvSpec dpt_conv(int64_t in, int64_t out, int k, int stride,
                                 layers::Bias bias = layers::Bias::Required) {
  layers::ConvSpec s;
  s.in = in;
  s.out = out;
  s.kernel = k;
  s.stride = stride;
  s.pad = k / 2;
  s.bias = bias;
  return s;
}

// Spatial size after resize stage s for a g-patch grid side: ×4, ×2, ×1, conv 3×3 s2 p1.
inline int64_t dpt_stage_size(int s, int64_t g) {
  switch (s) {
    case 0: return 4 * g;
    case 1: return 2 * g;
    case 2: return g;
    default: return (g - 1) / 2 + 1;
  }
}

}  // namespace dacpp::models::detail
