#include "models/depth_model.h"

#include "models/camera_decoder.h"

namespace dacpp::models {

void DepthModel::finish(ops::Context& ctx, ModelOutputs& out, ForwardDumps* /*dumps*/) const {
  finish_cameras(ctx, out);
}

}  // namespace dacpp::models
