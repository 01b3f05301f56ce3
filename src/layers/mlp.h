// Mlp: DINOv2 FFN, fc1 (C → hidden) → exact GELU (fused into fc1) → fc2 (hidden → C).
// Upstream: model/dinov2/layers/mlp.py (DA3), depth_anything_v2/dinov2_layers/mlp.py (DA2).
#pragma once

#include <string>

#include "layers/feed_forward.h"
#include "layers/linear.h"

namespace dacpp::layers {

class Mlp final : public FeedForward {
 public:
  // fc1_prefix / fc2_prefix: the two linear layers' name prefixes (tensor_names.h). out_scale: host f32 [dim] folded
  // into fc2 (FeedForward::forward_add), or undefined.
  Mlp(const ModelFile& mf, const std::string& fc1_prefix, const std::string& fc2_prefix, int64_t dim, int64_t hidden,
      const Tensor& out_scale = Tensor());

  Tensor forward(Exec& ex, const Tensor& x) const override;
  void forward_add(Exec& ex, const Tensor& x, Tensor& stream) const override;
  int64_t hidden() const override { return fc1_.out_features(); }

 private:
  Linear fc1_, fc2_;
};

}  // namespace dacpp::layers
