// Rope2d: 2-D rotary position embedding of DA3 (model/dinov2/layers/rope.py::RotaryPositionEmbedding2D).
// The head dim D is split in two halves: the first rotates with the token's row (y), the second with its column
// (x). Within a half of width d = D/2, standard rotate-half RoPE with inverse frequencies base^(−2j/d),
// j < d/2, the angles concatenated twice: t·cos + rotate_half(t)·sin, rotate_half(t) = [−t₂, t₁].
// Applied to q and k after qk-norm. Positions are supplied by the caller (local vs global blocks differ).
//
// Host implementation: x must be resident on the CPU (Backend error otherwise, naming the tensor).
#pragma once

#include <cstdint>
#include <vector>

#include "layers/exec.h"

namespace dacpp::layers {

class Rope2d {
 public:
  explicit Rope2d(float base = 100.0f) : base_(base) {}

  // x: [B, H, N, D] f32, rotated in place. pos_yx: 2·N integers (row, column) per token, shared by every batch
  // item and head. Throws InvalidArgument when D % 4 != 0, sizes disagree or a position is negative.
  void apply(Exec& ex, Tensor& x, const std::vector<int32_t>& pos_yx) const;

  float base() const { return base_; }

 private:
  float base_;
};

}  // namespace dacpp::layers
