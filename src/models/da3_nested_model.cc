#include "models/da3_nested_model.h"

#include <vector>

#include "core/crash_context.h"
#include "formats/nested_model_file.h"
#include "pipeline/nested_align.h"
#include "pipeline/sky_fill.h"

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
  // images: [S, 3, H, W] → any-view depth, conf, poses [S, …] and metric depth, sky [S, H, W] → metres
  ModelOutputs out = any_->forward(rs, images);
  finish_cameras(rs.ex.ctx, out);  // the alignment below needs the cameras on the host
  DACPP_CHECK(out.intrinsics.defined(), ErrorCode::Unsupported, "nested model '", config().checkpoint_name,
              "': no poses (camera decoder absent; use ray pose)");
  out.depth = out.depth.clone();  // owning host copies: the alignment updates them in place
  out.conf = out.conf.clone();
  if (out.rays.defined()) {
    out.rays = out.rays.clone();
    out.ray_conf = out.ray_conf.clone();
  }
  crash::set_stage("metric_branch");
  ForwardDumps* dumps = rs.dumps;
  rs.dumps = nullptr;  // the branch's stage names would overwrite the any-view ones
  ModelOutputs m = metric_->forward(rs, images);
  rs.dumps = dumps;
  Tensor metric_depth = m.depth.clone();
  const Tensor metric_sky = m.sky.clone();
  rs.dump("metric_depth", metric_depth);
  rs.dump("metric_sky", metric_sky);
  pipeline::fill_sky_depth(metric_depth, metric_sky);  // over the whole batch, as upstream
  crash::set_stage("metric_align");
  const pipeline::NestedAlignResult a =
      pipeline::nested_metric_align(out.depth, out.conf, out.extrinsics, out.intrinsics, metric_depth, metric_sky);
  out.metres = true;
  out.metric_scale = a.scale_factor;
  rs.dump("depth_metric", out.depth);
  rs.dump("depth_conf_metric", out.conf);
  rs.dump("extrinsics_metric", out.extrinsics);
  return out;
}

}  // namespace dacpp::models
