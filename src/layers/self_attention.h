// SelfAttention: DINOv2 multi-head attention (model/dinov2/layers/attention.py).
//   qkv: Linear(C → 3C) laid out q | k | v, each heads × head_dim; optional per-head qk-norm (LayerNorm(head_dim),
//   eps 1e-5) on q and k; optional 2-D RoPE on q and k (after qk-norm); softmax(q·kᵀ/√D)·v; proj: Linear(C → C).
// Weights: "<qkv_prefix>.weight" [3C, C], ".bias" [3C] (used when present); "<proj_prefix>.*" [C, C] / [C];
// qk-norm "<q_norm_prefix>.*", "<k_norm_prefix>.*" [head_dim] when those prefixes are non-empty.
#pragma once

#include <optional>
#include <string>

#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/rope2d.h"

namespace dacpp::layers {

struct SelfAttentionNames {
  std::string qkv, proj;
  std::string q_norm, k_norm;  // empty: no qk-norm
};

class SelfAttention {
 public:
  static constexpr float kQkNormEps = 1e-5f;

  // out_scale (host f32 [C], or undefined): the block's LayerScale, folded into proj at load for forward_add (then
  // forward and forward_rows do not apply).
  SelfAttention(const ModelFile& mf, const SelfAttentionNames& names, int64_t dim, int64_t num_heads,
                const Tensor& out_scale = Tensor());

  // x: [B, N, C] → a new [B, N, C] activation. rope/positions: rotate q and k by token positions ([N, 2] i32
  // (row, column) on ex's device) when rope is non-null.
  Tensor forward(Exec& ex, const Tensor& x, const Rope2d* rope = nullptr, const Tensor* positions = nullptr) const;
  // stream [B, N, C] (f32) ← stream + out_scale ⊙ forward(x): the residual update as proj's product added to the
  // stream (Linear::add_into).
  void forward_add(Exec& ex, const Tensor& x, Tensor& stream, const Rope2d* rope = nullptr,
                   const Tensor* positions = nullptr) const;

  // The same forward in two steps, for row chunks of one sequence (Dinov2Block::forward_rows): qkv_into computes
  // the fused projection qkv [B, N, 3C] of x (or of some of its rows, into the matching rows of a larger qkv), and
  // forward_rows attends tokens [row0, row0 + rows) to all N of qkv and projects them: a new [B, rows, C]. Only
  // without qk-norm and RoPE (has_qk_norm() false, no rope); throws Internal otherwise.
  void qkv_into(Exec& ex, const Tensor& x, Tensor& qkv) const;
  Tensor forward_rows(Exec& ex, const Tensor& qkv, int64_t row0, int64_t rows) const;
  // forward_rows added to stream, the chunk's rows [B, rows, C] of the f32 stream (as forward_add).
  void forward_rows_add(Exec& ex, const Tensor& qkv, int64_t row0, Tensor& stream) const;

  bool has_qk_norm() const { return q_norm_.has_value(); }
  int64_t num_heads() const { return heads_; }
  int64_t head_dim() const { return head_dim_; }

 private:
  // InvalidArgument unless x is [B, N, C]; Internal / InvalidArgument unless qkv is a row-chunkable [B, N, 3C].
  void check_input(const Tensor& x) const;
  void check_projection(const Tensor& qkv) const;
  // Attention's output before proj, [B, N, C] (or the rows' [B, rows, C]), allocated in the caller's arena scope;
  // the public entry points check x / qkv first (check_input / check_projection), before they allocate anything.
  Tensor heads_out(Exec& ex, const Tensor& x, const Rope2d* rope, const Tensor* positions) const;
  Tensor heads_out_rows(Exec& ex, const Tensor& qkv, int64_t row0, int64_t rows) const;

  int64_t dim_, heads_, head_dim_;
  Linear qkv_, proj_;
  std::optional<LayerNorm> q_norm_, k_norm_;
};

}  // namespace dacpp::layers
