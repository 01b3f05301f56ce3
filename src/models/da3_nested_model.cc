#include "models/da3_nested_model.h"

#include <vector>

#include "core/crash_context.h"
#include "formats/nested_model_file.h"
#include "pipeline/nested_align.h"
#include "pipeline/sky_fill.h"
#include "ops/transfer.h"

namespace dacpp::models {
namespace {

ModelConfig branch_config(const ModelFile& branch, ModelKind want, const char* what) {
  ModelConfig c = ModelConfig::from_file(branch);
  DACPP_CHECK(c.kind == want, ErrorCode::InvalidModel, "model '", branch.path(), "': the nested ", what,
              " branch is a ", model_kind_name(c.kind), " network, expected ", model_kind_name(want));
  return c;
}

}  // namespace

Da3NestedModel::Da3NestedModel(const ModelFile& mf, const ModelConfig& cfg)
    : DepthModel(cfg),
      any_file_(nested_branch(mf, NestedBranch::AnyView)),
      metric_file_(nested_branch(mf, NestedBranch::Metric)) {
  any_ = std::make_unique<Da3AnyViewModel>(*any_file_, branch_config(*any_file_, ModelKind::Da3AnyView, "any-view"));
  try {
    metric_ = std::make_unique<Da3MonoModel>(*metric_file_, branch_config(*metric_file_, ModelKind::Da3Mono, "metric"));
  } catch (const Error& e) {
    throw metric_branch_error(e, metric_file_->path());  // names as stored: m_vit.* / m_head.*, not vit.* / head.*
  }
  DACPP_CHECK(any_->config().has_camera_decoder || any_->config().head.has_aux, ErrorCode::InvalidModel, "model '",
              mf.path(), "': the nested any-view branch has no camera decoder (cam.*) and no ray head; the metric ",
              "alignment needs its intrinsics");
  DACPP_CHECK(any_->config().vit.patch_size == metric_->config().vit.patch_size, ErrorCode::InvalidModel,
              "model '", mf.path(), "': the nested branches have patch sizes ", any_->config().vit.patch_size,
              " and ", metric_->config().vit.patch_size);
}

ModelOutputs Da3NestedModel::forward(RunState& rs, const Tensor& images) const {
  // images: [S, 3, H, W] → any-view depth, conf, pose encoding [S, …] and metric depth, sky [S, H, W], all left on
  // the device for finish()
  ModelOutputs out = any_->forward(rs, images);
  crash::set_stage("metric_branch");
  ForwardDumps* dumps = rs.dumps;
  rs.dumps = nullptr;  // the branch's stage names would overwrite the any-view ones
  ModelOutputs m = metric_->forward(rs, images);
  rs.dumps = dumps;
  out.metric_depth = m.depth;
  out.metric_sky = m.sky;
  rs.dump("metric_depth", out.metric_depth);
  rs.dump("metric_sky", out.metric_sky);
  return out;
}

void Da3NestedModel::finish(ops::Context& ctx, ModelOutputs& out, ForwardDumps* dumps) const {
  DepthModel::finish(ctx, out, dumps);  // the cameras: the alignment needs them on the host
  DACPP_CHECK(out.intrinsics.defined(), ErrorCode::Unsupported, "nested model '", config().checkpoint_name,
              "': no poses (camera decoder absent; use ray pose)");
  // Owning host copies: the alignment updates them in place (the device outputs may be a graph's, replayed later).
  for (Tensor* t : {&out.depth, &out.conf, &out.rays, &out.ray_conf, &out.metric_depth, &out.metric_sky})
    if (t->defined()) *t = ops::to_host_f32(ctx, *t).clone();
  crash::set_stage("metric_align");
  pipeline::fill_sky_depth(out.metric_depth, out.metric_sky);  // over the whole batch, as upstream
  const pipeline::NestedAlignResult a = pipeline::nested_metric_align(out.depth, out.conf, out.extrinsics,
                                                                      out.intrinsics, out.metric_depth, out.metric_sky);
  out.metric_depth = Tensor();
  out.metric_sky = Tensor();
  out.metres = true;
  out.metric_scale = a.scale_factor;
  if (dumps != nullptr) {
    dumps->put("depth_metric", out.depth);
    dumps->put("depth_conf_metric", out.conf);
    dumps->put("extrinsics_metric", out.extrinsics);
  }
}

}  // namespace dacpp::models
