// Da3AnyViewModel: DA3-SMALL / BASE / LARGE / GIANT (and -1.1): any-view depth, confidence and camera pose in one
// cross-view pass (model/da3.py::DepthAnything3Net with the DualDPT head and cam_dec; spec/models.md §3c, §4.3–4.5).
// forward() takes images [S, 3, H, W] = the S views of one scene. Not supported here: pose conditioning (cam_enc:
// never converted; a checkpoint's cam_enc is validated at import) and the GS head of giant (its tensors are ignored).
// The rays are returned when rs.want_rays; with rs.ray_pose the poses come from pipeline::ray_pose on them instead
// of cam_dec (upstream use_ray_pose=True).
#pragma once

#include <optional>

#include "models/camera_decoder.h"
#include "models/depth_model.h"
#include "models/dinov2.h"
#include "models/dual_dpt_head.h"

namespace dacpp::models {

class Da3AnyViewModel final : public DepthModel {
 public:
  Da3AnyViewModel(const ModelFile& mf, const ModelConfig& cfg);
  ModelOutputs forward(RunState& rs, const Tensor& images) const override;

 private:
  Dinov2 backbone_;
  DualDptHead head_;
  std::optional<CameraDecoder> cam_dec_;
};

}  // namespace dacpp::models
