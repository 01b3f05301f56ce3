// Dinov2::forward_views: the DA3 any-view backbone (model/dinov2/vision_transformer.py,
// _get_intermediate_layers_not_chunked and get_intermediate_layers with cat_token), spec/models.md §3c.
//
// Upstream moves the reference view to slot 0 before block alt_start − 1 and restores the input order of the
// collected features. Every block is equivariant under a permutation of the views (local blocks act per view;
// global blocks see the same RoPE position for every view's tokens), so the only effect of the reordering is which
// view gets camera_token[0]. We keep the input order throughout and give that token to the chosen view: the
// outputs are the same, without the two copies.
#include <algorithm>

#include "models/dinov2.h"
#include "models/dinov2_internal.h"
#include "ops/copy.h"
#include "ops/permute.h"
#include "ops/transfer.h"

namespace dacpp::models {
namespace {

using detail::rows_view;

// dst ← src (same shape), through the op dispatcher.
void copy(layers::Exec& ex, const Tensor& src, Tensor& dst) {
  std::vector<int> perm(static_cast<size_t>(src.rank()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  ops::permute(ex.ctx, src, perm, dst);
}

bool is_global(const VitConfig& c, int i) { return c.alt_start != -1 && i >= c.alt_start && i % 2 == 1; }

// Whether the stream after local block i must be kept as `local`: an output layer in [i, next local block) reads it.
bool local_needed(const VitConfig& c, int i) {
  int next = i + 1;
  while (next < c.depth && is_global(c, next)) ++next;
  return std::any_of(c.out_layers.begin(), c.out_layers.end(), [&](int j) { return j >= i && j < next; });
}

// The reference view chosen from each view's slot-0 token of x [S, N, E] (copied to the host, f32).
int64_t reference_view(RunState& rs, const Tensor& x) {
  const int64_t s = x.dim(0), n = x.dim(1), e = x.dim(2);
  std::vector<float> cls(static_cast<size_t>(s * e));
  for (int64_t v = 0; v < s; ++v) {
    const Tensor row = ops::to_host_f32(rs.ex.ctx, rows_view(x, v * n, {1, e}));
    std::copy_n(row.data<float>(), e, cls.data() + v * e);
  }
  return select_reference_view(cls.data(), s, e, rs.ref_view);
}

}  // namespace

void Dinov2::write_camera_tokens(RunState& rs, Tensor& x, int64_t ref) const {
  // x: [S, N, E]; slot 0 of view v ← camera_token[v == ref ? 0 : 1]
  const int64_t s = x.dim(0), n = x.dim(1), e = x.dim(2);
  for (int64_t v = 0; v < s; ++v) {
    Tensor dst = rows_view(x, v * n, {1, e});
    copy(rs.ex, camera_token_.slice0(v == ref ? 0 : 1, v == ref ? 1 : 2), dst);
  }
}

void Dinov2::collect_views(RunState& rs, const Tensor& local, const Tensor& x, int64_t patches, Tensor& feat) const {
  // local, x: [S, N, E] → feat: [S, P, 2E] = [local[:, 1:] ‖ norm(x[:, 1:])]
  layers::Exec& ex = rs.ex;
  const int64_t s = x.dim(0), n = x.dim(1), e = x.dim(2);
  layers::ArenaScope scope(ex.arena);
  Tensor pair = ex.alloc({2, patches, e}, "vit.cat_token");
  Tensor first = pair.slice0(0, 1).reshape({patches, e});
  Tensor second = pair.slice0(1, 2).reshape({patches, e});
  for (int64_t v = 0; v < s; ++v) {
    ops::cast(ex.ctx, rows_view(local, v * n + 1, {patches, e}), first);  // f32 stream → activation dtype
    norm_.forward_into(ex, rows_view(x, v * n + 1, {patches, e}), second);
    Tensor dst = rows_view(feat.reshape({s * patches * 2, e}), v * patches * 2, {patches, 2, e});
    ops::permute(ex.ctx, pair, {1, 0, 2}, dst);
  }
}

Dinov2::ViewFeatures Dinov2::forward_views(RunState& rs, const Tensor& images) const {
  // images: [S, 3, H, W] → feats 4 × [S, P, 2E], cam_tokens [S, 2E]
  DACPP_CHECK(cfg_.alt_start >= 1 && cfg_.cat_token && camera_token_.defined(), ErrorCode::Internal,
              "backbone: any-view forward on a model without alternating attention");
  check_input(images);
  layers::Exec& ex = rs.ex;
  const int64_t p = cfg_.patch_size, s = images.dim(0), e = cfg_.embed_dim;
  const int64_t gh = images.dim(2) / p, gw = images.dim(3) / p, np = gh * gw, n = 1 + np;
  ViewFeatures out;
  for (size_t k = 0; k < cfg_.out_layers.size(); ++k) out.feats.push_back(ex.alloc({s, np, 2 * e}, "vit.feature"));
  out.cam_tokens = ex.alloc({s, 2 * e}, "vit.cam_tokens");
  Tensor x = embed(rs, images, gh, gw);  // [S, N, E]
  Tensor local = ex.alloc_f32({s, n, e}, "vit.local");  // a copy of the f32 residual stream
  copy(ex, x, local);
  const bool any_rope = cfg_.rope_start != -1;
  const Tensor local_pos = any_rope ? rs.pos_cache.rope_positions(ex.ctx, gh, gw, /*global=*/false, 1) : Tensor();
  const Tensor global_pos = any_rope ? rs.pos_cache.rope_positions(ex.ctx, gh, gw, /*global=*/true, s) : Tensor();
  size_t collected = 0;
  // Each block's last residual add computes the next block's first norm into h (Dinov2Block::forward), except
  // before block alt_start, whose input the camera tokens change: h is computed anew there.
  Tensor h = ex.alloc({s, n, e}, "vit.norm1");
  bool h_current = false;
  for (int i = 0; i < cfg_.depth; ++i) {
    if (i == cfg_.alt_start - 1 && s >= kMinViewsForSelection) out.ref_view = reference_view(rs, x);
    if (i == cfg_.alt_start) write_camera_tokens(rs, x, out.ref_view);
    const bool rope = block_rope_[static_cast<size_t>(i)];
    const layers::Dinov2Block& blk = blocks_[static_cast<size_t>(i)];
    if (!h_current) blk.norm1_into(ex, x, h);
    h_current = i + 1 < cfg_.depth && i + 1 != cfg_.alt_start;
    const layers::Dinov2Block* next = h_current ? &blocks_[static_cast<size_t>(i) + 1] : nullptr;
    if (is_global(cfg_, i)) {
      Tensor flat = x.reshape({1, s * n, e}), hflat = h.reshape({1, s * n, e});
      blk.forward(ex, flat, hflat, next, rope ? &rope_ : nullptr, rope ? &global_pos : nullptr);
    } else {
      blk.forward(ex, x, h, next, rope ? &rope_ : nullptr, rope ? &local_pos : nullptr);
      if (local_needed(cfg_, i)) copy(ex, x, local);
    }
    if (std::find(cfg_.out_layers.begin(), cfg_.out_layers.end(), i) == cfg_.out_layers.end()) continue;
    collect_views(rs, local, x, np, out.feats[collected]);
    rs.dump("feat" + std::to_string(collected), out.feats[collected]);
    if (++collected == cfg_.out_layers.size()) {
      for (int64_t v = 0; v < s; ++v) {
        Tensor half0 = rows_view(out.cam_tokens.reshape({2 * s, e}), 2 * v, {1, e});
        Tensor half1 = rows_view(out.cam_tokens.reshape({2 * s, e}), 2 * v + 1, {1, e});
        ops::cast(ex.ctx, rows_view(local, v * n, {1, e}), half0);
        ops::cast(ex.ctx, rows_view(x, v * n, {1, e}), half1);
      }
      rs.dump("cam_token", out.cam_tokens);
    }
  }
  return out;
}

}  // namespace dacpp::models
