#include "models/dinov2.h"

#include <algorithm>

#include "formats/tensor_names.h"
#include "layers/weights.h"
#include "models/dinov2_internal.h"
#include "ops/elementwise.h"
#include "ops/lanes.h"

namespace dacpp::models {
namespace {

using detail::rows_view;

}  // namespace

Dinov2::Dinov2(const ModelFile& mf, const VitConfig& cfg, const std::string& p)
    : cfg_(cfg),
      patch_embed_(mf, names::vit(p, "patch_embed"), 3, cfg.embed_dim, cfg.patch_size),
      rope_(cfg.rope_freq),
      norm_(mf, names::vit(p, "norm"), cfg.embed_dim, cfg.final_norm_eps) {
  const int64_t e = cfg.embed_dim, m2 = int64_t{cfg.pos_embed_grid} * cfg.pos_embed_grid;
  // The residual stream is f32 on every device (as under PyTorch autocast), so the tokens written into it are too.
  // pos_embed, read once. Its patch rows stay f32 (on the device when placed): they are interpolated per input grid
  // before use. Its class row goes into the class token's input row, cls_token + pos_embed[0]: the f32 sum every
  // forward would take, taken once.
  const Tensor pos_host = mf.host_f32(names::vit(p, "pos_embed"), {1, 1 + m2, e}).reshape({1 + m2, e});
  const Tensor cls = mf.host_f32(names::vit(p, "cls_token"), {1, 1, e});
  Tensor lead = Tensor::empty({1, e}, DType::F32, names::vit(p, "cls_token") + " + pos_embed[0]");
  for (int64_t i = 0; i < e; ++i) lead.data<float>()[i] = cls.data<float>()[i] + pos_host.data<float>()[i];
  const Tensor pos = mf.placement() ? mf.placement()->place(pos_host, /*keep_f32=*/true) : pos_host;
  pos_patch_ = pos.slice0(1, 1 + m2);
  cls_row_ = mf.placement() ? mf.placement()->place(lead, /*keep_f32=*/true) : lead;
  // The mapped pages of what was copied are not read again (as ModelFile::device_f32 does).
  if (pos.raw() != pos_host.raw()) mf.release_pages(pos_host);
  mf.release_pages(cls);
  if (cfg.alt_start != -1) camera_token_ = mf.device_f32(names::vit(p, "camera_token"), {1, 2, e}).reshape({2, e});
  blocks_.reserve(static_cast<size_t>(cfg.depth));
  for (int i = 0; i < cfg.depth; ++i) {
    layers::Dinov2BlockSpec s;
    s.dim = e;
    s.num_heads = cfg.num_heads;
    s.ffn_hidden = cfg.ffn_hidden;
    s.ffn = cfg.ffn;
    s.ln_eps = cfg.ln_eps;
    // Any-view models declare where qk-norm starts, so a missing qnorm/knorm tensor there is an error; others key it
    // on tensor presence (spec/gguf-compat.md §1.4).
    s.qk_norm = (cfg.qknorm_start != -1 && i >= cfg.qknorm_start) ||
                mf.has_tensor(names::vit_block(p, i, "attn_qnorm.weight"));
    blocks_.emplace_back(mf, p, i, s);
    block_rope_.push_back(cfg.rope_start != -1 && i >= cfg.rope_start);
  }
}

Tensor Dinov2::embed(RunState& rs, const Tensor& images, int64_t gh, int64_t gw) const {
  // images: [B, 3, H, W] → patch tokens: [B, P, E] (activation dtype) → tokens: [B, 1 + P, E] (f32: the residual
  // stream)
  layers::Exec& ex = rs.ex;
  const int64_t b = images.dim(0), e = cfg_.embed_dim, np = gh * gw, n = 1 + np;
  Tensor tokens = ex.alloc_f32({b, n, e}, "vit.tokens");
  layers::ArenaScope scope(ex.arena);
  const Tensor patches = patch_embed_.forward(ex, images);
  Tensor table = rs.pos_cache.get(ex.ctx, pos_patch_, cfg_.pos_embed_grid, gh, gw, cfg_.interpolate_offset);
  // Every image's class row and its patch rows + the f32 table, into the f32 stream, in one pass.
  ops::embed_tokens(ex.ctx, cls_row_, table, patches, tokens);
  return tokens;
}

void Dinov2::check_input(const Tensor& images) const {
  const int64_t p = cfg_.patch_size;
  DACPP_CHECK(images.rank() == 4 && images.dim(1) == 3 && images.dim(0) > 0 && images.dim(2) >= p &&
                  images.dim(3) >= p && images.dim(2) % p == 0 && images.dim(3) % p == 0,
              ErrorCode::InvalidArgument, "backbone: input '", images.name(), "' has shape ",
              shape_str(images.shape()), ", expected [B, 3, H, W] with H and W positive multiples of ", p);
}

std::vector<Tensor> Dinov2::forward(RunState& rs, const Tensor& images) const {
  // images: [B, 3, H, W] → features: 4 × [B, gh·gw, E]
  DACPP_CHECK(cfg_.alt_start == -1, ErrorCode::Internal, "backbone: single-view forward on an any-view model");
  check_input(images);
  const int64_t p = cfg_.patch_size;
  const int64_t gh = images.dim(2) / p, gw = images.dim(3) / p;
  Tensor x = embed(rs, images, gh, gw);
  const Tensor pos =
      cfg_.rope_start != -1 ? rs.pos_cache.rope_positions(rs.ex.ctx, gh, gw, /*global=*/false, 1) : Tensor();
  std::vector<Tensor> feats;
  // Each block's last residual add computes the next block's first norm into h (Dinov2Block::forward).
  Tensor h = rs.ex.alloc(x.shape(), "vit.norm1");
  if (cfg_.depth > 0) blocks_.front().norm1_into(rs.ex, x, h);
  const int64_t skip = x.dim(1) - gh * gw;
  if (const std::vector<int64_t> cuts = row_cuts(rs, x, skip); !cuts.empty()) {
    for (size_t i = 0; i < cfg_.out_layers.size(); ++i)
      feats.push_back(rs.ex.alloc({x.dim(0), gh * gw, x.dim(2)}, "vit.feature"));
    blocks_in_rows(rs, x, h, cuts, skip, feats);
    for (size_t i = 0; i < feats.size(); ++i) rs.dump("feat" + std::to_string(i), feats[i]);
    return feats;
  }
  for (int i = 0; i < cfg_.depth; ++i) {
    const bool rope = block_rope_[static_cast<size_t>(i)];
    const layers::Dinov2Block* next = i + 1 < cfg_.depth ? &blocks_[static_cast<size_t>(i) + 1] : nullptr;
    const bool collected = std::find(cfg_.out_layers.begin(), cfg_.out_layers.end(), i) != cfg_.out_layers.end();
    // A collected layer's output norm, norm(x)[:, 1:], is taken in the block's last residual pass.
    Tensor feat = collected ? rs.ex.alloc({x.dim(0), gh * gw, x.dim(2)}, "vit.feature") : Tensor();
    const ops::DropLeadingNorm collect = norm_.drop_leading(skip, feat);
    blocks_[static_cast<size_t>(i)].forward(rs.ex, x, h, next, rope ? &rope_ : nullptr, rope ? &pos : nullptr,
                                            collected ? &collect : nullptr);
    if (collected) {
      feats.push_back(feat);
      rs.dump("feat" + std::to_string(feats.size() - 1), feats.back());
    }
  }
  return feats;
}

std::vector<int64_t> Dinov2::row_cuts(const RunState& rs, const Tensor& x, int64_t skip) const {
  const int chunks = std::min(rs.row_chunks, RunState::kMaxRowChunks);
  if (chunks <= 1 || x.dim(0) != 1 || cfg_.depth == 0) return {};
  for (int i = 0; i < cfg_.depth; ++i)
    if (!blocks_[static_cast<size_t>(i)].rows_apart(block_rope_[static_cast<size_t>(i)])) return {};
  if (!rs.ex.ctx.device().is_cpu() &&
      (rs.lane_arenas == nullptr || rs.lane_arenas->size() < static_cast<size_t>(chunks - 1)))
    return {};
  // Cuts on multiples of 128 rows (a GEMM's row tile) where the chunks are long enough to have them.
  const int64_t n = x.dim(1), grain = n >= 256 * chunks ? 128 : 1;
  std::vector<int64_t> cuts{0};
  for (int i = 1; i < chunks; ++i) {
    const int64_t cut = (n * i / chunks + grain / 2) / grain * grain;
    if (cut > cuts.back() && cut < n) cuts.push_back(cut);
  }
  cuts.push_back(n);
  if (cuts.size() < 3 || cuts[1] <= skip) return {};
  return cuts;
}

void Dinov2::blocks_in_rows(RunState& rs, Tensor& x, Tensor& h, const std::vector<int64_t>& cuts, int64_t skip,
                            std::vector<Tensor>& feats) const {
  layers::Exec& ex = rs.ex;
  const int64_t n = x.dim(1), e = x.dim(2);
  const int chunks = static_cast<int>(cuts.size()) - 1;
  // Two projection buffers: a chunk writes the next block's projection of its rows while the other chunks may
  // still attend to this block's.
  Tensor qkv[2] = {ex.alloc({1, n, 3 * e}, "vit.qkv"), ex.alloc({1, n, 3 * e}, "vit.qkv_next")};
  blocks_.front().qkv_into(ex, h, qkv[0]);
  size_t collected = 0;
  for (int i = 0; i < cfg_.depth; ++i) {
    const layers::Dinov2Block& block = blocks_[static_cast<size_t>(i)];
    const layers::Dinov2Block* next = i + 1 < cfg_.depth ? &blocks_[static_cast<size_t>(i) + 1] : nullptr;
    const bool is_collected = std::find(cfg_.out_layers.begin(), cfg_.out_layers.end(), i) != cfg_.out_layers.end();
    const Tensor* feat = is_collected ? &feats[collected++] : nullptr;
    const Tensor& cur = qkv[i % 2];
    Tensor& nxt = qkv[(i + 1) % 2];
    ops::Lanes lanes(ex.ctx, chunks);
    // Chunk c on lane c % count(), the side lanes' first: work entering a side lane comes after lane 0's so far.
    for (int c = chunks - 1; c >= 0; --c) {
      const int64_t r0 = cuts[static_cast<size_t>(c)], rows = cuts[static_cast<size_t>(c) + 1] - r0;
      Tensor xc = rows_view(x, r0, {1, rows, e});
      Tensor hc = rows_view(h, r0, {1, rows, e});
      Tensor qc = rows_view(nxt, r0, {1, rows, 3 * e});
      // The collected norm of the chunk's patch rows: y rows [first - skip, r0 + rows - skip).
      ops::DropLeadingNorm collect;
      if (feat != nullptr) {
        const int64_t first = std::max(r0, skip);
        collect = norm_.drop_leading(first - r0, rows_view(*feat, first - skip, {1, r0 + rows - first, e}));
      }
      const int lane = c % lanes.count();
      const auto on = lanes.on(lane);
      layers::Exec lane_ex{ex.ctx, lane == 0 ? ex.arena : (*rs.lane_arenas)[static_cast<size_t>(lane) - 1]};
      block.forward_rows(lane_ex, cur, r0, xc, hc, next, next ? &qc : nullptr, feat ? &collect : nullptr);
    }
  }
}

}  // namespace dacpp::models
