#include "models/da3_any_view_model.h"

#include "core/crash_context.h"
#include "ops/transfer.h"
#include "pipeline/ray_pose.h"

namespace dacpp::models {

Da3AnyViewModel::Da3AnyViewModel(const ModelFile& mf, const ModelConfig& cfg)
    : DepthModel(cfg),
      backbone_(mf, cfg.vit),
      head_(mf, cfg.head, 2 * cfg.vit.embed_dim, cfg.vit.patch_size) {
  if (cfg.has_camera_decoder) cam_dec_.emplace(mf, 2 * cfg.vit.embed_dim);
}

ModelOutputs Da3AnyViewModel::forward(RunState& rs, const Tensor& images) const {
  // images: [S, 3, H, W] → features 4 × [S, P, 2E], camera tokens [S, 2E] → depth, conf [S, H, W], poses
  DACPP_CHECK(!rs.want_rays || head_.has_aux(), ErrorCode::Unsupported, "rays: this model has no ray head ",
              "(head.scratch.rn1_aux.*; convert the checkpoint with the aux head kept)");
  DACPP_CHECK(!rs.ray_pose || head_.has_aux(), ErrorCode::Unsupported, "ray pose: model '",
              config().checkpoint_name, "' has no ray head (head.scratch.rn1_aux.*; convert the checkpoint with ",
              "the aux head kept, e.g. `dacpp convert --with-aux`)");
  const bool rays = rs.want_rays || rs.ray_pose;
  Dinov2::ViewFeatures vf = backbone_.forward_views(rs, images);
  const int64_t p = config().vit.patch_size, h = images.dim(2), w = images.dim(3);
  crash::set_stage("head");
  DualHeadOutputs head = head_.forward(rs, vf.feats, h / p, w / p, rays);
  ModelOutputs out;
  out.depth = head.depth;
  out.conf = head.conf;
  out.rays = head.rays;
  out.ray_conf = head.ray_conf;
  out.ref_view = vf.ref_view;
  rs.dump("depth", out.depth);
  rs.dump("depth_conf", out.conf);
  if (out.rays.defined()) {
    rs.dump("ray", out.rays);
    rs.dump("ray_conf", out.ray_conf);
  }
  if (cam_dec_ && !rs.ray_pose) {  // upstream runs one or the other
    crash::set_stage("camera");
    out.pose_enc = cam_dec_->forward(rs, vf.cam_tokens);  // on the device; cameras are made after the forward
    out.pose_h = h;
    out.pose_w = w;
    if (rs.dumps != nullptr) {
      Tensor enc;
      finish_cameras(rs.ex.ctx, out, &enc);
      rs.dump("pose_enc", enc);
      rs.dump("extrinsics", out.extrinsics);
      rs.dump("intrinsics", out.intrinsics);
    }
  }
  if (rs.ray_pose) {
    crash::set_stage("ray_pose");
    pipeline::RayPoseOptions po;
    po.seed = rs.ray_pose_seed;
    // The solver is host math: rays and confidences come back as f32 first (no-ops on the CPU).
    pipeline::RayPoseResult rp =
        pipeline::ray_pose(ops::to_host_f32(rs.ex.ctx, out.rays), ops::to_host_f32(rs.ex.ctx, out.ray_conf),
                           static_cast<int>(h), static_cast<int>(w), po);
    out.extrinsics = rp.extrinsics;
    out.intrinsics = rp.intrinsics;
    rs.dump("extrinsics", out.extrinsics);
    rs.dump("intrinsics", out.intrinsics);
    if (!rs.want_rays) out.rays = out.ray_conf = Tensor();
  }
  return out;
}

}  // namespace dacpp::models
