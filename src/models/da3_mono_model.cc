#include "models/da3_mono_model.h"

#include "core/crash_context.h"

namespace dacpp::models {
namespace {

DptHeadSpec da3_head_spec(const ModelConfig& cfg) {
  DptHeadSpec s;
  s.in_dim = cfg.vit.embed_dim;
  s.patch_size = cfg.vit.patch_size;
  s.head = cfg.head;
  s.activation = DepthActivation::Exp;
  return s;
}

}  // namespace

Da3MonoModel::Da3MonoModel(const ModelFile& mf, const ModelConfig& cfg)
    : DepthModel(cfg), backbone_(mf, cfg.vit), head_(mf, da3_head_spec(cfg)) {
  DACPP_CHECK(cfg.head.has_sky, ErrorCode::InvalidModel, "model '", mf.path(),
              "': DA3 mono/metric head has no sky branch (head.scratch.sky_out2b.weight)");
}

ModelOutputs Da3MonoModel::forward(RunState& rs, const Tensor& images) const {
  // images: [B, 3, H, W] → features 4 × [B, P, C] → depth, sky: [B, H, W]
  const std::vector<Tensor> feats = backbone_.forward(rs, images);
  const int64_t p = config().vit.patch_size;
  crash::set_stage("head");
  HeadOutputs h = head_.forward(rs, feats, images.dim(2) / p, images.dim(3) / p);
  const Shape s = {h.depth.dim(0), h.depth.dim(2), h.depth.dim(3)};
  ModelOutputs out;
  out.depth = h.depth.reshape(s);
  out.sky = h.sky.reshape(s);
  rs.dump("depth", out.depth);
  rs.dump("sky", out.sky);
  return out;
}

}  // namespace dacpp::models
