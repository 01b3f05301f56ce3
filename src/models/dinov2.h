// Dinov2: the ViT backbone of DA2 and DA3 (single-view path).
// Upstream: DepthAnything/Depth-Anything-V2 depth_anything_v2/dinov2.py (DinoVisionTransformer,
// get_intermediate_layers) and ByteDance-Seed/Depth-Anything-3 src/depth_anything_3/model/dinov2/
// vision_transformer.py (_get_intermediate_layers_not_chunked with alt_start = −1, cat_token = False).
//
// Patch embed (conv P/P) → prepend cls → add the (interpolated) position embedding → blocks → at each of the 4
// out_layers: final `norm` of the tokens, slot 0 dropped → [B, P, E].
//
// Extension point for DA3 any-view (not implemented here): views S folded into the batch for local blocks and
// flattened per item for global blocks (i ≥ alt_start, odd i), the camera token written into slot 0 at
// alt_start, RoPE positions per block kind, and cat_token features [local ‖ norm(global)].
#pragma once

#include <string>
#include <vector>

#include "layers/conv2d.h"
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
  std::vector<Tensor> forward(RunState& rs, const Tensor& images) const;

  const VitConfig& config() const { return cfg_; }

 private:
  Tensor embed(RunState& rs, const Tensor& images, int64_t gh, int64_t gw) const;
  Tensor collect(RunState& rs, Tensor& x, int64_t patches) const;

  VitConfig cfg_;
  layers::Conv2d patch_embed_;
  Tensor cls_token_;  // [1, E]
  Tensor pos_cls_;    // [1, E]   the cls row of pos_embed
  Tensor pos_patch_;  // [M·M, E] the patch rows of pos_embed
  std::vector<layers::Dinov2Block> blocks_;
  std::vector<bool> block_rope_;
  layers::Rope2d rope_;
  layers::LayerNorm norm_;
};

}  // namespace dacpp::models
