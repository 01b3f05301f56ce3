#include "pipeline/sky_fill.h"

#include <vector>

#include "pipeline/nested_align.h"

namespace dacpp::pipeline {
namespace {

constexpr float kSkyThreshold = 0.3f;  // sky score >= this is sky (upstream compute_sky_mask, in f32)
constexpr int64_t kMinPixels = 10;     // the fill needs more than this many sky and non-sky pixels

}  // namespace

bool fill_sky_depth(Tensor& depth, const Tensor& sky) {
  DACPP_CHECK(depth.shape() == sky.shape() && depth.dtype() == DType::F32 && sky.dtype() == DType::F32,
              ErrorCode::InvalidArgument, "sky fill: depth '", depth.name(), "' ", shape_str(depth.shape()),
              " and sky '", sky.name(), "' ", shape_str(sky.shape()), " must be f32 of one shape");
  float* d = depth.data<float>();
  const float* s = sky.data<float>();
  const int64_t n = depth.numel();
  std::vector<float> ground;
  for (int64_t i = 0; i < n; ++i)
    if (s[i] < kSkyThreshold) ground.push_back(d[i]);
  const int64_t n_ground = static_cast<int64_t>(ground.size());
  if (n_ground <= kMinPixels || n - n_ground <= kMinPixels) return false;
  const float far = static_cast<float>(quantile_linear(ground, 0.99));
  for (int64_t i = 0; i < n; ++i)
    if (!(s[i] < kSkyThreshold)) d[i] = far;
  return true;
}

}  // namespace dacpp::pipeline
