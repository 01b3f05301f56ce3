// Da3NestedModel: DA3NESTED-GIANT-LARGE (and -1.1), model/da3.py::NestedDepthAnything3Net (spec/models.md §4.9):
// the any-view network (giant) and the metric network (DA3METRIC-LARGE) run on the same views, then
// pipeline::nested_metric_align turns the any-view depth and translations into metres and caps the sky at 200 m.
//
// Built from one merged weight index (formats/nested_model_file.h: the any-view names plus m_vit.* / m_head.*),
// split back into two ordinary files: each branch is an unchanged Da3AnyViewModel / Da3MonoModel. The metric
// branch's depth gets the mono sky fill over all views together (upstream _process_mono_sky_estimation runs on the
// whole batch) before the alignment. Outputs: depth in metres (ModelOutputs::metres), conf (sky = 1.0), w2c
// extrinsics with metric translations, intrinsics, rays when asked. The GS head is not supported.
#pragma once

#include <memory>

#include "models/da3_any_view_model.h"
#include "models/da3_mono_model.h"
#include "models/depth_model.h"

namespace dacpp::models {

class Da3NestedModel final : public DepthModel {
 public:
  // `mf` must outlive the model (the branches are views of it). Errors: InvalidModel / Unsupported from the
  // branches' configs, naming the branch (an any-view branch that is not DA3 any-view, a metric branch that is not
  // DA3 mono/metric).
  Da3NestedModel(const ModelFile& mf, const ModelConfig& cfg);
  // Both branches on the device (capturable); finish() then aligns on the host.
  ModelOutputs forward(RunState& rs, const Tensor& images) const override;
  void finish(ops::Context& ctx, ModelOutputs& out, ForwardDumps* dumps) const override;

  const ModelConfig& metric_config() const { return metric_->config(); }

 private:
  std::shared_ptr<const ModelFile> any_file_, metric_file_;
  std::unique_ptr<Da3AnyViewModel> any_;
  std::unique_ptr<Da3MonoModel> metric_;
};

}  // namespace dacpp::models
