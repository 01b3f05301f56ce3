// FeedForward: the token-wise FFN of a transformer block, [..., C] → [..., C]. Implemented by Mlp (fc1 → exact
// GELU → fc2) and SwiGlu (w12 → silu(a)·b → w3).
#pragma once

#include "layers/exec.h"

namespace dacpp::layers {

class FeedForward {
 public:
  virtual ~FeedForward() = default;
  // x: [..., C] → a new [..., C] activation.
  virtual Tensor forward(Exec& ex, const Tensor& x) const = 0;
  // stream [..., C] (f32) ← stream + out_scale ⊙ forward(x), out_scale being what the FFN's last linear was built
  // with (a LayerScale folded at load; none: 1), its product added to the stream (Linear::add_into). An FFN built
  // with an out_scale has only this.
  virtual void forward_add(Exec& ex, const Tensor& x, Tensor& stream) const = 0;
  virtual int64_t hidden() const = 0;
};

}  // namespace dacpp::layers
