// Back-projection of SceneViews to a coloured world-space point cloud, and the confidence rules of the official
// DA3 exporters. Shared by the PLY, GLB and COLMAP writers.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "io/scene.h"

namespace dacpp::io {

// A 3×4 row-major affine transform [M | t]: y = M · x + t.
using Affine34 = std::array<double, 12>;

Affine34 affine_inverse(const Affine34& a);  // InvalidArgument when M is singular or not finite
Affine34 affine_compose(const Affine34& a, const Affine34& b);  // a ∘ b: x ↦ a(b(x))
std::array<double, 3> affine_apply(const Affine34& a, double x, double y, double z);

struct PointCloud {
  std::vector<float> xyz;      // 3 per point, world frame
  std::vector<uint8_t> rgb;    // 3 per point
  std::vector<int32_t> view;   // index of the view the point came from
  std::vector<int32_t> pixel;  // its pixel: row * width + column in that view
  size_t size() const { return view.size(); }
};

// Checks what every exporter needs: at least one view; sizes positive and depth/conf/rgb sized to match; K finite
// with fx, fy ≠ 0 and last row 0 0 1; w2c finite and invertible; when `need_pose`, every view has a pose; confidence
// present in all views or in none. `what` names the exporter in messages. Throws InvalidArgument.
void validate_scene(const std::vector<SceneView>& views, const char* what, bool need_pose);

// numpy.percentile(values, p) (linear interpolation) over the finite values; NaN when there are none.
double percentile(std::vector<float> values, double p);

// The GLB exporter's rule: min(max(conf_base, P[conf_percentile]), P[ensure_percentile]) over the confidence of
// all views. The COLMAP exporter's rule: P[conf_percentile]. Both -inf when the views carry no confidence.
double clamped_conf_threshold(const std::vector<SceneView>& views, const PointCloudOptions& opt);
double percentile_conf_threshold(const std::vector<SceneView>& views, const PointCloudOptions& opt);

// Every pixel with finite depth > 0 and confidence ≥ threshold (when the view has confidence), lifted to
// x_cam = depth · K⁻¹ (u, v, 1) and to the world by w2c⁻¹ (identity without a pose). Views in order, pixels in row
// order. Colours from rgb (grey 128 when empty).
PointCloud unproject_scene(const std::vector<SceneView>& views, double conf_threshold);

// Keeps a uniform random subset of max_points points (a fixed-seed selection sample, so runs repeat), in their
// original order; nothing when size() ≤ max_points or max_points ≤ 0.
void subsample(PointCloud& cloud, int64_t max_points);

}  // namespace dacpp::io
