// Da3MonoModel: DA3MONO-LARGE and DA3METRIC-LARGE (same network; metric differs only in postprocessing:
// metres = depth · focal_px / 300).
// Upstream: https://github.com/ByteDance-Seed/Depth-Anything-3 src/depth_anything_3/model/da3.py
// (DepthAnything3Net with a DPT head), configs/da3mono-large.yaml, configs/da3metric-large.yaml.
#pragma once

#include "models/depth_model.h"
#include "models/dinov2.h"
#include "models/dpt_head.h"

namespace dacpp::models {

class Da3MonoModel final : public DepthModel {
 public:
  Da3MonoModel(const ModelFile& mf, const ModelConfig& cfg);
  ModelOutputs forward(RunState& rs, const Tensor& images) const override;

 private:
  Dinov2 backbone_;
  DptHead head_;
};

}  // namespace dacpp::models
