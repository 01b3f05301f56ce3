// DepthModel: one network version (design.md §2: one class per model version, chosen by a factory).
// Immutable after construction (weights are const views); forward() uses only the RunState it is given, so one
// instance serves many Runners on different threads.
#pragma once

#include <memory>

#include "formats/model_file.h"
#include "models/model_config.h"
#include "models/run_state.h"

namespace dacpp::models {

// Raw network outputs at the model-input resolution, arena tensors valid until the Runner's next forward.
// For DA3 any-view models the leading dim S is the views of one scene (one cross-view pass), not a batch.
struct ModelOutputs {
  Tensor depth;  // [B, H, W]: DA2 relative disparity (≥ 0), DA2 metric metres, DA3 depth (exp)
  Tensor sky;    // [B, H, W] (ReLU, ≥ 0) for DA3 mono/metric; undefined otherwise
  // DA3 any-view only (undefined otherwise):
  Tensor conf;        // [S, H, W] depth confidence, exp + 1
  Tensor rays;        // [S, 8gh, 8gw, 6] when rs.want_rays
  Tensor ray_conf;    // [S, 8gh, 8gw] when rs.want_rays
  Tensor extrinsics;  // [S, 3, 4] world-to-camera (host, owning) when the model has a camera decoder
  Tensor intrinsics;  // [S, 3, 3] processed-image pixels (host, owning)
  // The camera decoder's encoding as rows [9, S] on the forward's device, before finish_cameras()
  // (camera_decoder.h) turns it into extrinsics / intrinsics on the host for a pose_h × pose_w input.
  Tensor pose_enc;
  int64_t pose_h = 0, pose_w = 0;
  int64_t ref_view = 0;  // the reference view (world frame), input order
  // DA3 nested: the metric branch's depth and sky [S, H, W] on the forward's device, before finish() aligns the
  // any-view outputs to them (then undefined).
  Tensor metric_depth, metric_sky;
  // DA3 nested: depth (and the translations) are in metres after the metric alignment; the scale it applied.
  bool metres = false;
  double metric_scale = 0;
};

class DepthModel {
 public:
  explicit DepthModel(ModelConfig cfg) : cfg_(std::move(cfg)) {}
  virtual ~DepthModel() = default;
  DepthModel(const DepthModel&) = delete;
  DepthModel& operator=(const DepthModel&) = delete;

  const ModelConfig& config() const { return cfg_; }

  // images: [B, 3, H, W] f32, normalised, H and W multiples of the patch size. Throws InvalidArgument on a bad
  // shape. Stage dumps go to rs.dumps when set.
  virtual ModelOutputs forward(RunState& rs, const Tensor& images) const = 0;

  // The host-side end of a forward, run by the Runner after forward() (after a CUDA graph replay, too): forward()
  // only enqueues device work, so it can be captured. Default: the camera decoder's encoding → extrinsics /
  // intrinsics (finish_cameras). The nested model also aligns the any-view outputs to its metric branch here.
  // Stage dumps go to `dumps` when set.
  virtual void finish(ops::Context& ctx, ModelOutputs& out, ForwardDumps* dumps) const;

 private:
  ModelConfig cfg_;
};

// Builds the class for cfg.kind, fetching and shape-checking every tensor it needs (InvalidModel naming the
// first missing/misshapen tensor). Unsupported for model versions not implemented.
std::unique_ptr<DepthModel> create_model(const ModelFile& mf, const ModelConfig& cfg);

}  // namespace dacpp::models
