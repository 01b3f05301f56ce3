// Dinov2Block: the pre-norm ViT block of DINOv2 (model/dinov2/layers/block.py; DA2 dinov2_layers/block.py):
//   x ← x + ls1 ⊙ attn(norm1(x));   x ← x + ls2 ⊙ ffn(norm2(x))
// LayerScale gammas "<blk>.ls1" / "<blk>.ls2" [C] are applied when present (gguf-compat §1.4).
// Names come from formats/tensor_names.h: vit_block(vit_prefix, index, leaf).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layers/feed_forward.h"
#include "layers/layer_norm.h"
#include "layers/self_attention.h"

namespace dacpp::layers {

enum class FfnKind { Mlp, SwiGlu };

// How a block adds its two branches to the f32 residual stream x:
//   Separate: the branch's last linear writes its output in the activation dtype, then one pass x += ls ⊙ out fused
//             with the next LayerNorm (ops::add_scaled_layer_norm);
//   InGemm:   the LayerScale ls is folded into that linear at load (W' = diag(ls)·W, b' = ls ⊙ b) and its GEMM adds
//             its f32 product to x itself (ops::linear_add); the next LayerNorm then only reads x. The output is
//             never rounded to the activation dtype, and nothing writes or reads it back.
//   Auto:     DACPP_RESIDUAL_GEMM=1 or 0 says which; otherwise InGemm on a GPU (DA2-L −2 %, DA2-S −1 % on the
//             H200: docs/PERFORMANCE.md, version 1.23) and Separate on the CPU, where f32 weights are used in place
//             from the mapped file (folding would copy every proj / fc2 weight) and bf16 measured 1-4 % slower.
enum class ResidualForm { Auto, Separate, InGemm };

struct Dinov2BlockSpec {
  int64_t dim = 0;
  int64_t num_heads = 0;
  int64_t ffn_hidden = 0;
  FfnKind ffn = FfnKind::Mlp;
  float ln_eps = 1e-6f;
  bool qk_norm = false;  // fetch attn_qnorm / attn_knorm
  ResidualForm residual = ResidualForm::Auto;
};

class Dinov2Block {
 public:
  // vit_prefix: "vit" (or "m_vit"); index: the block number.
  Dinov2Block(const ModelFile& mf, const std::string& vit_prefix, int index, const Dinov2BlockSpec& spec);

  // x: [B, N, C], updated in place (the residual stream); rope/positions as in SelfAttention::forward. The first
  // norm is the caller's and, when `next` is given, the next block's first norm is fused into this block's last
  // residual add (one pass over x instead of an add and a norm): h (x's shape, the activation dtype) holds norm1(x)
  // on entry and next->norm1(x) on return (scratch when next is null). The caller computes the first block's h with
  // norm1_into, and again after anything else writes x between two blocks. `collect` (a collected layer's output
  // norm, LayerNorm::drop_leading) is taken in the same pass as that last residual add.
  void forward(Exec& ex, Tensor& x, Tensor& h, const Dinov2Block* next, const Rope2d* rope = nullptr,
               const Tensor* positions = nullptr, const ops::DropLeadingNorm* collect = nullptr) const;
  void norm1_into(Exec& ex, const Tensor& x, Tensor& h) const;

  // Whether forward_rows applies: the block attends straight from its fused projection (no qk-norm, no RoPE).
  bool rows_apart(bool rope) const { return !rope && !attn_.has_qk_norm(); }
  // forward for the rows [row0, row0 + R) of one sequence, so that row chunks run side by side (Dinov2::forward on
  // ops::Lanes): everything in a block but attention is per token, and attention needs only every token's keys and
  // values. qkv: this block's fused projection of norm1(x) for all N tokens (qkv_into); x, h: the chunk's rows of
  // the stream and of norm1(x), [B, R, C]. On return x is updated and h holds next->norm1(x) as forward's; with
  // next_qkv (the chunk's rows of a second projection buffer: qkv is still read by other chunks) also the next
  // block's projection of them. collect: the chunk's rows of the collected norm (DropLeadingNorm's skip and y
  // narrowed to them).
  void forward_rows(Exec& ex, const Tensor& qkv, int64_t row0, Tensor& x, Tensor& h, const Dinov2Block* next,
                    Tensor* next_qkv, const ops::DropLeadingNorm* collect) const;
  // The fused projection qkv [B, N, 3C] of h = norm1(x) (or of some rows, into the same rows of qkv).
  void qkv_into(Exec& ex, const Tensor& h, Tensor& qkv) const { attn_.qkv_into(ex, h, qkv); }

  const SelfAttention& attention() const { return attn_; }
  // Whether the branches' GEMMs add to the stream (ResidualForm::InGemm, as resolved at load).
  bool residual_in_gemm() const { return in_gemm_; }

 private:
  // What follows attention (Separate): x += LayerScale(a), h = norm2(x), the FFN, and its residual add fused with
  // the next block's norm1 (and the collected norm).
  void finish(Exec& ex, Tensor& x, const Tensor& a, Tensor& h, const Dinov2Block* next,
              const ops::DropLeadingNorm* collect) const;
  // The same after attention has added itself to x (InGemm): h = norm2(x), the FFN added to x, then h =
  // next.norm1(x) (and the collected norm).
  void finish_added(Exec& ex, Tensor& x, Tensor& h, const Dinov2Block* next, const ops::DropLeadingNorm* collect) const;

  bool in_gemm_;  // ResidualForm::InGemm (first: the branches are built according to it)
  LayerNorm norm1_, norm2_;
  SelfAttention attn_;
  std::unique_ptr<FeedForward> ffn_;
  Tensor ls1_, ls2_;  // [C] or undefined (and always undefined InGemm: folded into the branches)
};

}  // namespace dacpp::layers
