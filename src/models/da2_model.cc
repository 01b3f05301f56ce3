#include "models/da2_model.h"

#include "core/crash_context.h"

namespace dacpp::models {
namespace {

DptHeadSpec da2_head_spec(const ModelConfig& cfg) {
  DptHeadSpec s;
  s.in_dim = cfg.vit.embed_dim;
  s.patch_size = cfg.vit.patch_size;
  s.head = cfg.head;
  s.activation = cfg.head.max_depth > 0 ? DepthActivation::SigmoidMax : DepthActivation::Relu;
  return s;
}

}  // namespace

Da2Model::Da2Model(const ModelFile& mf, const ModelConfig& cfg)
    : DepthModel(cfg), backbone_(mf, cfg.vit), head_(mf, da2_head_spec(cfg)) {}

ModelOutputs Da2Model::forward(RunState& rs, const Tensor& images) const {
  // images: [B, 3, H, W] → features 4 × [B, P, C] → depth: [B, H, W]
  const std::vector<Tensor> feats = backbone_.forward(rs, images);
  const int64_t p = config().vit.patch_size;
  crash::set_stage("head");
  HeadOutputs h = head_.forward(rs, feats, images.dim(2) / p, images.dim(3) / p);
  ModelOutputs out;
  out.depth = h.depth.reshape({h.depth.dim(0), h.depth.dim(2), h.depth.dim(3)});
  rs.dump("depth", out.depth);
  return out;
}

}  // namespace dacpp::models
