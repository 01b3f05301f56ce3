// Da2Model: Depth Anything V2, relative and metric.
// Upstream: https://github.com/DepthAnything/Depth-Anything-V2 depth_anything_v2/dpt.py (DepthAnythingV2) and
// metric_depth/depth_anything_v2/dpt.py (max_depth · Sigmoid head).
#pragma once

#include "models/depth_model.h"
#include "models/dinov2.h"
#include "models/dpt_head.h"

namespace dacpp::models {

class Da2Model final : public DepthModel {
 public:
  Da2Model(const ModelFile& mf, const ModelConfig& cfg);
  ModelOutputs forward(RunState& rs, const Tensor& images) const override;

 private:
  Dinov2 backbone_;
  DptHead head_;
};

}  // namespace dacpp::models
