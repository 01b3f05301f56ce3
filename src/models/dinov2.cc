#include "models/dinov2.h"

#include <algorithm>

#include "formats/tensor_names.h"
#include "layers/weights.h"
#include "ops/elementwise.h"
#include "ops/permute.h"

namespace dacpp::models {
namespace {

layers::ConvSpec patch_spec(const VitConfig& c) {
  layers::ConvSpec s;
  s.in = 3;
  s.out = c.embed_dim;
  s.kernel = s.stride = c.patch_size;
  return s;
}

// Rows [row, row + shape[0]) of a row-major tensor whose last dim matches, as a view (no copy, any device).
Tensor rows_view(Tensor& t, int64_t row, const Shape& shape) {
  const int64_t width = t.dim(-1);
  float* base = static_cast<float*>(t.raw()) + row * width;
  return Tensor::view(base, shape, DType::F32, t.device(), nullptr, t.name());
}

// Local-block RoPE positions: slot 0 at (0, 0), patch (r, c) at (r + 1, c + 1).
std::vector<int32_t> local_positions(int64_t gh, int64_t gw) {
  std::vector<int32_t> p(static_cast<size_t>(2 * (1 + gh * gw)), 0);
  for (int64_t r = 0; r < gh; ++r)
    for (int64_t c = 0; c < gw; ++c) {
      const size_t i = static_cast<size_t>(2 * (1 + r * gw + c));
      p[i] = static_cast<int32_t>(r + 1);
      p[i + 1] = static_cast<int32_t>(c + 1);
    }
  return p;
}

}  // namespace

Dinov2::Dinov2(const ModelFile& mf, const VitConfig& cfg, const std::string& p)
    : cfg_(cfg),
      patch_embed_(mf, names::vit(p, "patch_embed"), patch_spec(cfg)),
      rope_(cfg.rope_freq),
      norm_(mf, names::vit(p, "norm"), cfg.embed_dim, cfg.final_norm_eps) {
  DACPP_CHECK(cfg.alt_start == -1, ErrorCode::Unsupported, "model '", mf.path(),
              "': alternating (any-view) attention is not implemented yet");
  const int64_t e = cfg.embed_dim, m2 = int64_t{cfg.pos_embed_grid} * cfg.pos_embed_grid;
  cls_token_ = layers::fetch(mf, names::vit(p, "cls_token"), {1, 1, e}).reshape({1, e});
  Tensor pos = layers::fetch(mf, names::vit(p, "pos_embed"), {1, 1 + m2, e}).reshape({1 + m2, e});
  pos_cls_ = pos.slice0(0, 1);
  pos_patch_ = pos.slice0(1, 1 + m2);
  blocks_.reserve(static_cast<size_t>(cfg.depth));
  for (int i = 0; i < cfg.depth; ++i) {
    layers::Dinov2BlockSpec s;
    s.dim = e;
    s.num_heads = cfg.num_heads;
    s.ffn_hidden = cfg.ffn_hidden;
    s.ffn = cfg.ffn;
    s.ln_eps = cfg.ln_eps;
    s.qk_norm = mf.has_tensor(names::vit_block(p, i, "attn_qnorm.weight"));
    blocks_.emplace_back(mf, p, i, s);
    block_rope_.push_back(cfg.rope_start != -1 && i >= cfg.rope_start);
  }
}

Tensor Dinov2::embed(RunState& rs, const Tensor& images, int64_t gh, int64_t gw) const {
  // images: [B, 3, H, W] → patches: [B, E, gh, gw] → tokens: [B, 1 + P, E]
  layers::Exec& ex = rs.ex;
  const int64_t b = images.dim(0), e = cfg_.embed_dim, np = gh * gw, n = 1 + np;
  Tensor tokens = ex.alloc({b, n, e}, "vit.tokens");
  layers::ArenaScope scope(ex.arena);
  Tensor patches = patch_embed_.forward(ex, images);
  Tensor table = rs.pos_cache.get(ex.ctx, pos_patch_, cfg_.pos_embed_grid, gh, gw, cfg_.interpolate_offset);
  for (int64_t i = 0; i < b; ++i) {
    Tensor cls_row = rows_view(tokens, i * n, {1, e});
    ops::add(ex.ctx, cls_token_, pos_cls_, cls_row);
    Tensor patch_rows = rows_view(tokens, i * n + 1, {np, e});
    ops::permute(ex.ctx, patches.slice0(i, i + 1).reshape({e, np}), {1, 0}, patch_rows);
    ops::add(ex.ctx, patch_rows, table, patch_rows);
  }
  return tokens;
}

Tensor Dinov2::collect(RunState& rs, Tensor& x, int64_t patches) const {
  // x: [B, 1 + P, E] → norm(x)[:, 1:]: [B, P, E]
  const int64_t b = x.dim(0), n = x.dim(1), e = x.dim(2);
  Tensor feat = rs.ex.alloc({b, patches, e}, "vit.feature");
  for (int64_t i = 0; i < b; ++i) {
    Tensor src = rows_view(x, i * n + 1, {patches, e});
    Tensor dst = rows_view(feat, i * patches, {patches, e});
    norm_.forward_into(rs.ex, src, dst);
  }
  return feat;
}

std::vector<Tensor> Dinov2::forward(RunState& rs, const Tensor& images) const {
  // images: [B, 3, H, W] → features: 4 × [B, gh·gw, E]
  const int64_t p = cfg_.patch_size;
  DACPP_CHECK(images.rank() == 4 && images.dim(1) == 3 && images.dim(0) > 0 && images.dim(2) >= p &&
                  images.dim(3) >= p && images.dim(2) % p == 0 && images.dim(3) % p == 0,
              ErrorCode::InvalidArgument, "backbone: input '", images.name(), "' has shape ",
              shape_str(images.shape()), ", expected [B, 3, H, W] with H and W positive multiples of ", p);
  const int64_t gh = images.dim(2) / p, gw = images.dim(3) / p;
  Tensor x = embed(rs, images, gh, gw);
  const std::vector<int32_t> pos = cfg_.rope_start != -1 ? local_positions(gh, gw) : std::vector<int32_t>();
  std::vector<Tensor> feats;
  for (int i = 0; i < cfg_.depth; ++i) {
    const bool rope = block_rope_[static_cast<size_t>(i)];
    blocks_[static_cast<size_t>(i)].forward(rs.ex, x, rope ? &rope_ : nullptr, rope ? &pos : nullptr);
    if (std::find(cfg_.out_layers.begin(), cfg_.out_layers.end(), i) != cfg_.out_layers.end()) {
      feats.push_back(collect(rs, x, gh * gw));
      rs.dump("feat" + std::to_string(feats.size() - 1), feats.back());
    }
  }
  return feats;
}

}  // namespace dacpp::models
