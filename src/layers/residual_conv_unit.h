// ResidualConvUnit (DPT, model/dpt.py; DA2 util/blocks.py), no BatchNorm:
//   y = conv2(relu(conv1(relu(x)))) + x, conv1/conv2 3×3 F → F with bias: the two convs as one
//   ops::residual_conv_pair (on Hopper the first conv stores its output as the second's padded input), then the add.
// Weights "<prefix>.c1.*", "<prefix>.c2.*" (prefix e.g. head_rn("head", 2, false, "rc1")).
#pragma once

#include <string>

#include "layers/conv2d.h"

namespace dacpp::layers {

class ResidualConvUnit {
 public:
  ResidualConvUnit(const ModelFile& mf, const std::string& prefix, int64_t features);

  // x: [N, F, H, W] → a new [N, F, H, W] activation.
  Tensor forward(Exec& ex, const Tensor& x) const;

 private:
  Conv2d conv1_, conv2_;
};

}  // namespace dacpp::layers
