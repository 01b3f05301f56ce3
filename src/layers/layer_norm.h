// LayerNorm over the last dimension, torch nn.LayerNorm(dim, eps) with affine weights
// "<prefix>.weight" [dim] and "<prefix>.bias" [dim].
#pragma once

#include <string>

#include "formats/model_file.h"
#include "layers/exec.h"
#include "ops/layer_norm.h"

namespace dacpp::layers {

class LayerNorm {
 public:
  LayerNorm(const ModelFile& mf, const std::string& prefix, int64_t dim, float eps);

  // x: [..., dim] → a new activation of the same shape.
  Tensor forward(Exec& ex, const Tensor& x) const;
  // x: [..., dim] → y (same shape; may alias x for in place).
  void forward_into(Exec& ex, const Tensor& x, Tensor& y) const;
  // x: [B, N, dim] → y: [B, N − skip, dim] = norm(x[:, skip:]) (one launch on CUDA).
  void forward_drop_leading_into(Exec& ex, const Tensor& x, int64_t skip, Tensor& y) const;
  // The residual update before this norm, fused: x ← x + a ⊙ ls (ls [dim] or undefined), then y = norm(x).
  // y must not alias x or a.
  // `also`: a second norm of the updated x in the same pass (ops::add_scaled_layer_norm).
  void add_scaled_forward_into(Exec& ex, Tensor& x, const Tensor& a, const Tensor& ls, Tensor& y,
                               const ops::DropLeadingNorm* also = nullptr) const;
  // y = norm(x) of an f32 residual stream x that is not updated here (a GEMM added the branch already), and with
  // `also` the collected norm beside it: one pass on CUDA (ops::add_scaled_layer_norm without a branch).
  void stream_forward_into(Exec& ex, Tensor& x, Tensor& y, const ops::DropLeadingNorm* also = nullptr) const;
  // This norm as the second of ops::add_scaled_layer_norm: out = norm(x[:, skip:]) of the updated x.
  ops::DropLeadingNorm drop_leading(int64_t skip, const Tensor& out) const;

  int64_t dim() const { return dim_; }
  float eps() const { return eps_; }

 private:
  int64_t dim_;
  float eps_;
  Tensor gamma_, beta_;
};

}  // namespace dacpp::layers
