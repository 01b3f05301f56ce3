// SwiGlu: the ViT-g FFN (SwiGLUFFNFused): w12 (C → 2h), split into halves a | b, silu(a) · b, w3 (h → C).
// Upstream: model/dinov2/layers/swiglu_ffn.py (DA3), depth_anything_v2/dinov2_layers/swiglu_ffn.py (DA2).
#pragma once

#include <string>

#include "layers/feed_forward.h"
#include "layers/linear.h"

namespace dacpp::layers {

class SwiGlu final : public FeedForward {
 public:
  // out_scale: host f32 [dim] folded into w3 (FeedForward::forward_add), or undefined.
  SwiGlu(const ModelFile& mf, const std::string& w12_prefix, const std::string& w3_prefix, int64_t dim, int64_t hidden,
         const Tensor& out_scale = Tensor());

  Tensor forward(Exec& ex, const Tensor& x) const override;
  void forward_add(Exec& ex, const Tensor& x, Tensor& stream) const override;
  int64_t hidden() const override { return w3_.in_features(); }

 private:
  // x's rows M (x: [..., C]); InvalidArgument for another width.
  int64_t rows(const Tensor& x) const;
  // silu(a)·b of x2 [M, C]: [M, h], allocated in the caller's arena scope.
  Tensor gated(Exec& ex, const Tensor& x2) const;

  Linear w12_, w3_;
};

}  // namespace dacpp::layers
