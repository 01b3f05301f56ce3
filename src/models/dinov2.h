// Dinov2: the ViT backbone of DA2 and DA3 (single-view path).
// Upstream: DepthAnything/Depth-Anything-V2 depth_anything_v2/dinov2.py (DinoVisionTransformer,
// get_intermediate_layers) and ByteDance-Seed/Depth-Anything-3 src/depth_anything_3/model/dinov2/
// vision_transformer.py (_get_intermediate_layers_not_chunked with alt_start = −1, cat_token = False).
//
// Patch embed (conv P/P) → prepend cls → add the (interpolated) position embedding → blocks → at each of the 4
// out_layers: final `norm` of the tokens, slot 0 dropped → [B, P, E].
//
// DA3 any-view (forward_views, dinov2_views.cc; spec/models.md §3c): the S views of one scene run local blocks
// per view and global blocks (i ≥ alt_start, odd i) over all S·N tokens at once; the reference view is picked at
// block alt_start − 1 (S ≥ 3); the camera token overwrites slot 0 at alt_start; RoPE positions differ per block
// kind; outputs are cat_token features [local ‖ norm(global)] and the un-normalised slot-0 camera tokens.
#pragma once

#include <string>
#include <vector>

#include "layers/patch_embed.h"
#include "layers/dinov2_block.h"
#include "layers/layer_norm.h"
#include "layers/rope2d.h"
#include "models/model_config.h"
#include "models/run_state.h"

namespace dacpp::models {

class Dinov2 {
 public:
  // prefix: "vit" (or "m_vit" for the nested metric branch). Fetches and shape-checks every tensor.
  Dinov2(const ModelFile& mf, const VitConfig& cfg, const std::string& prefix = "vit");

  // images: [B, 3, H, W] f32, H and W multiples of the patch size → 4 features [B, gh·gw, E] (arena tensors),
  // in out_layers order. Throws InvalidArgument on a bad input shape.
  // Single-view models only (alt_start == −1).
  std::vector<Tensor> forward(RunState& rs, const Tensor& images) const;

  struct ViewFeatures {
    std::vector<Tensor> feats;  // 4 × [S, gh·gw, 2E] (arena): [local ‖ norm(global)], input view order
    Tensor cam_tokens;          // [S, 2E] (arena): slot 0 of the last out layer, un-normalised
    int64_t ref_view = 0;       // input index of the reference view (0 when S < 3)
  };
  // Any-view models (alt_start ≥ 1, cat_token): images [S, 3, H, W], the S views of one scene; the reference
  // view strategy comes from rs.ref_view. Throws InvalidArgument on a bad input shape.
  ViewFeatures forward_views(RunState& rs, const Tensor& images) const;

  const VitConfig& config() const { return cfg_; }

  // The row chunks [cuts[i], cuts[i + 1]) forward runs the blocks in side by side (RunState::row_chunks) for tokens
  // x [B, N, E] of which the first `skip` are not patches (cls, registers), or empty where they run whole: one
  // chunk asked, more than one image, a block with qk-norm or RoPE, a GPU without a lane arena per chunk, or a first
  // chunk no longer than `skip`. Cuts fall on multiples of 128 rows (a GEMM's row tile) where N >= 256 per chunk.
  std::vector<int64_t> row_cuts(const RunState& rs, const Tensor& x, int64_t skip) const;

 private:
  Tensor embed(RunState& rs, const Tensor& images, int64_t gh, int64_t gw) const;
  // The blocks over x (h = norm1(x) of the first block) in row chunks on ops::Lanes, chunk i on lane i; the
  // collected norms into feats (preallocated).
  void blocks_in_rows(RunState& rs, Tensor& x, Tensor& h, const std::vector<int64_t>& cuts, int64_t skip,
                      std::vector<Tensor>& feats) const;
  void check_input(const Tensor& images) const;
  void collect_views(RunState& rs, const Tensor& local, const Tensor& x, int64_t patches, Tensor& feat) const;
  void write_camera_tokens(RunState& rs, Tensor& x, int64_t ref) const;

  VitConfig cfg_;
  layers::PatchEmbed patch_embed_;
  Tensor cls_row_;  // [1, E]   cls_token + pos_embed[0], the class token's input row
  Tensor pos_patch_;  // [M·M, E] the patch rows of pos_embed
  Tensor camera_token_;  // [2, E] any-view only: row 0 for the reference view, row 1 for the others
  std::vector<layers::Dinov2Block> blocks_;
  std::vector<bool> block_rope_;
  layers::Rope2d rope_;
  layers::LayerNorm norm_;
};

}  // namespace dacpp::models
