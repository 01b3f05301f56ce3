// Rope2d: 2-D rotary position embedding of DA3 (model/dinov2/layers/rope.py::RotaryPositionEmbedding2D).
// The head dim D is split in two halves: the first rotates with the token's row (y), the second with its column
// (x). Within a half of width d = D/2, standard rotate-half RoPE with inverse frequencies base^(−2j/d),
// j < d/2, the angles concatenated twice: t·cos + rotate_half(t)·sin, rotate_half(t) = [−t₂, t₁].
// Applied to q and k after qk-norm. Positions are supplied by the caller (local vs global blocks differ).
//
// The rotation itself is the op ops::rope2d (any device the op supports); this layer holds the frequency base.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/exec.h"

namespace dacpp::layers {

class Rope2d {
 public:
  explicit Rope2d(float base = 100.0f) : base_(base) {}

  // x: [B, H, N, D] activation on ex's device, rotated in place. positions: [N, 2] i32 (row, column) per token on
  // ex's device, shared by every batch item and head. Throws InvalidArgument when D % 4 != 0, sizes disagree or
  // (on the CPU) a position is negative.
  void apply(Exec& ex, Tensor& x, const Tensor& positions) const;

  // Same, positions given as 2·N host integers: uploaded per call (tests, one-off use; models cache theirs).
  void apply(Exec& ex, Tensor& x, const std::vector<int32_t>& pos_yx) const;

  float base() const { return base_; }

 private:
  float base_;
};

// pos_yx (2·N integers, row then column per token) as an [N, 2] i32 tensor on ctx's device: a new owning host
// tensor on the CPU, else a device tensor from ops::empty filled by ops::copy. InvalidArgument on an odd count.
Tensor upload_positions(ops::Context& ctx, const std::vector<int32_t>& pos_yx);

}  // namespace dacpp::layers
