#include "models/da2_model.h"
#include "models/da3_any_view_model.h"
#include "models/da3_mono_model.h"
#include "models/da3_nested_model.h"
#include "models/depth_model.h"

namespace dacpp::models {

std::unique_ptr<DepthModel> create_model(const ModelFile& mf, const ModelConfig& cfg) {
  switch (cfg.kind) {
    case ModelKind::Da2:
      return std::make_unique<Da2Model>(mf, cfg);
    case ModelKind::Da3Mono:
      return std::make_unique<Da3MonoModel>(mf, cfg);
    case ModelKind::Da3AnyView:
      return std::make_unique<Da3AnyViewModel>(mf, cfg);
    case ModelKind::Da3Nested:
      return std::make_unique<Da3NestedModel>(mf, cfg);
  }
  DACPP_THROW(ErrorCode::Unsupported, "model '", mf.path(), "': ", model_kind_name(cfg.kind),
              " is not a model kind this build knows");
}

}  // namespace dacpp::models
