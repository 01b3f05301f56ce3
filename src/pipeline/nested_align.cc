#include "pipeline/nested_align.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "pipeline/pose_math.h"

namespace dacpp::pipeline {

namespace {

constexpr const char* kOp = "nested_metric_align";

void validate(const Tensor& depth, const Tensor& conf, const Tensor& ext, const Tensor& intr, const Tensor& metric,
              const Tensor& sky) {
  require_finite_host_f32(depth, 3, "nested_metric_align: depth");
  const Tensor* maps[] = {&conf, &metric, &sky};
  const char* names[] = {"nested_metric_align: depth_conf", "nested_metric_align: metric_depth",
                         "nested_metric_align: metric_sky"};
  for (int i = 0; i < 3; ++i) {
    require_finite_host_f32(*maps[i], 3, names[i]);
    DACPP_CHECK(maps[i]->shape() == depth.shape(), ErrorCode::InvalidArgument, names[i], ": shape ",
                shape_str(maps[i]->shape()), " differs from depth ", shape_str(depth.shape()));
  }
  require_finite_host_f32(ext, 3, "nested_metric_align: extrinsics");
  require_finite_host_f32(intr, 3, "nested_metric_align: intrinsics");
  const int64_t s = depth.dim(0);
  DACPP_CHECK(ext.dim(0) == s && ext.dim(1) == 3 && ext.dim(2) == 4, ErrorCode::InvalidArgument, kOp,
              ": extrinsics shape ", shape_str(ext.shape()), ", expected [", s, ", 3, 4]");
  DACPP_CHECK(intr.dim(0) == s && intr.dim(1) == 3 && intr.dim(2) == 3, ErrorCode::InvalidArgument, kOp,
              ": intrinsics shape ", shape_str(intr.shape()), ", expected [", s, ", 3, 3]");
}

// Sum of a·b over the mask, and of b·b, in double.
std::pair<double, double> masked_dots(const float* a, const float* b, const std::vector<uint8_t>& mask) {
  double ab = 0, bb = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i]) continue;
    ab += static_cast<double>(a[i]) * b[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return {ab, bb};
}

}  // namespace

double quantile_linear(std::vector<float>& values, double q) {
  DACPP_CHECK(!values.empty() && q >= 0 && q <= 1, ErrorCode::InvalidArgument, "quantile: ", values.size(),
              " values, q = ", q);
  const double rank = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double a = values[lo];
  const double b = hi == lo ? a : *std::min_element(values.begin() + lo + 1, values.end());
  const double t = rank - static_cast<double>(lo);
  return t < 0.5 ? a + t * (b - a) : b - (b - a) * (1.0 - t);  // torch.lerp's two branches
}

NestedAlignResult nested_metric_align(Tensor& depth, Tensor& depth_conf, Tensor& extrinsics,
                                      const Tensor& intrinsics, const Tensor& metric_depth,
                                      const Tensor& metric_sky, const NestedAlignOptions& o) {
  validate(depth, depth_conf, extrinsics, intrinsics, metric_depth, metric_sky);
  const int64_t views = depth.dim(0), plane = depth.dim(1) * depth.dim(2), n = depth.numel();
  float* d = depth.data<float>();
  float* conf = depth_conf.data<float>();
  const float* sky = metric_sky.data<float>();
  const float* k = intrinsics.data<float>();
  std::vector<float> metric(static_cast<size_t>(n));
  for (int64_t s = 0; s < views; ++s) {
    const float factor = static_cast<float>((static_cast<double>(k[s * 9]) + k[s * 9 + 4]) / 2 / o.focal_divisor);
    for (int64_t i = 0; i < plane; ++i) metric[s * plane + i] = metric_depth.data<float>()[s * plane + i] * factor;
  }
  std::vector<uint8_t> non_sky(static_cast<size_t>(n));
  std::vector<float> conf_ns;
  for (int64_t i = 0; i < n; ++i) {
    non_sky[i] = sky[i] < o.sky_threshold;
    if (non_sky[i]) conf_ns.push_back(conf[i]);
  }
  NestedAlignResult r;
  r.sky_pixels = n - static_cast<int64_t>(conf_ns.size());
  DACPP_CHECK(static_cast<int64_t>(conf_ns.size()) > o.min_non_sky_pixels, ErrorCode::InvalidArgument, kOp,
              ": only ", conf_ns.size(), " of ", n, " pixels are non-sky (metric sky < ", o.sky_threshold,
              "), more than ", o.min_non_sky_pixels, " are needed to align the depth");
  const double median_conf = quantile_linear(conf_ns, 0.5);
  std::vector<uint8_t> align(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    align[i] = conf[i] >= median_conf && non_sky[i] && metric[i] > o.min_metric_depth && d[i] > o.min_depth;
    r.aligned_pixels += align[i];
  }
  DACPP_CHECK(r.aligned_pixels > 0, ErrorCode::InvalidArgument, kOp,
              ": no pixel qualifies for alignment (conf >= median ", median_conf, ", non-sky, metric depth > ",
              o.min_metric_depth, ", depth > ", o.min_depth, ")");
  const auto [ab, bb] = masked_dots(metric.data(), d, align);
  const float scale = static_cast<float>(ab / std::max(bb, 1e-12));
  r.scale_factor = scale;
  for (int64_t i = 0; i < n; ++i) d[i] *= scale;
  float* e = extrinsics.data<float>();
  for (int64_t s = 0; s < views; ++s)
    for (int row = 0; row < 3; ++row) e[s * 12 + row * 4 + 3] *= scale;
  std::vector<float> depth_ns;
  depth_ns.reserve(static_cast<size_t>(n - r.sky_pixels));
  for (int64_t i = 0; i < n; ++i)
    if (non_sky[i]) depth_ns.push_back(d[i]);
  const double q99 = static_cast<float>(quantile_linear(depth_ns, 0.99));
  r.sky_depth = o.sky_depth_cap < q99 ? o.sky_depth_cap : q99;
  for (int64_t i = 0; i < n; ++i) {
    if (non_sky[i]) continue;
    d[i] = static_cast<float>(r.sky_depth);
    conf[i] = 1.0f;
  }
  return r;
}

}  // namespace dacpp::pipeline
