#include "io/point_cloud.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/error.h"

namespace dacpp::io {
namespace {

bool all_finite(const double* v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

void validate_view(const SceneView& v, size_t i, const char* what, bool need_pose) {
  const std::string at = std::string(what) + ": view " + std::to_string(i) + " ('" + v.stem + "')";
  DACPP_CHECK(v.width > 0 && v.height > 0, ErrorCode::InvalidArgument, at, ": size ", v.width, "x", v.height,
              " is not positive");
  const size_t n = static_cast<size_t>(v.width) * static_cast<size_t>(v.height);
  DACPP_CHECK(v.depth.size() == n, ErrorCode::InvalidArgument, at, ": depth has ", v.depth.size(),
              " values, expected ", v.width, "x", v.height, " = ", n);
  DACPP_CHECK(v.conf.empty() || v.conf.size() == n, ErrorCode::InvalidArgument, at, ": confidence has ",
              v.conf.size(), " values, expected ", n);
  DACPP_CHECK(v.rgb.empty() || v.rgb.size() == 3 * n, ErrorCode::InvalidArgument, at, ": rgb has ", v.rgb.size(),
              " bytes, expected ", 3 * n);
  const auto& K = v.K;
  DACPP_CHECK(all_finite(K.data(), 9) && K[0] != 0 && K[4] != 0 && K[3] == 0 && K[6] == 0 && K[7] == 0 &&
                  K[8] == 1,
              ErrorCode::InvalidArgument, at, ": intrinsics [", K[0], " ", K[1], " ", K[2], "; ", K[3], " ", K[4],
              " ", K[5], "; ", K[6], " ", K[7], " ", K[8], "] are not a pinhole matrix with fx, fy != 0");
  DACPP_CHECK(!need_pose || v.has_pose, ErrorCode::InvalidArgument, at,
              ": has no camera pose, which this export needs (use a DA3 any-view model with --views)");
  if (v.has_pose) affine_inverse(v.w2c);  // throws on a non-finite or singular pose
}

double det3(const double* m, size_t stride) {
  auto at = [&](int r, int c) { return m[r * stride + c]; };
  return at(0, 0) * (at(1, 1) * at(2, 2) - at(1, 2) * at(2, 1)) -
         at(0, 1) * (at(1, 0) * at(2, 2) - at(1, 2) * at(2, 0)) +
         at(0, 2) * (at(1, 0) * at(2, 1) - at(1, 1) * at(2, 0));
}

std::vector<float> all_confidence(const std::vector<SceneView>& views) {
  std::vector<float> c;
  for (const SceneView& v : views) c.insert(c.end(), v.conf.begin(), v.conf.end());
  return c;
}

}  // namespace

Affine34 affine_inverse(const Affine34& a) {
  DACPP_CHECK(all_finite(a.data(), 12), ErrorCode::InvalidArgument, "camera pose has non-finite values");
  const double d = det3(a.data(), 4);
  DACPP_CHECK(std::fabs(d) > 1e-12, ErrorCode::InvalidArgument, "camera pose rotation is singular (det ", d, ")");
  auto m = [&](int r, int c) { return a[r * 4 + c]; };
  Affine34 inv{};
  // Inverse of the 3×3 part by cofactors: inv[r][c] = cof[c][r] / det.
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
      inv[r * 4 + c] = (m(r1, c1) * m(r2, c2) - m(r1, c2) * m(r2, c1)) / d;
    }
  for (int r = 0; r < 3; ++r)
    inv[r * 4 + 3] = -(inv[r * 4 + 0] * a[3] + inv[r * 4 + 1] * a[7] + inv[r * 4 + 2] * a[11]);
  return inv;
}

Affine34 affine_compose(const Affine34& a, const Affine34& b) {
  Affine34 out{};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      double s = c == 3 ? a[r * 4 + 3] : 0.0;
      for (int k = 0; k < 3; ++k) s += a[r * 4 + k] * b[k * 4 + c];
      out[r * 4 + c] = s;
    }
  }
  return out;
}

std::array<double, 3> affine_apply(const Affine34& a, double x, double y, double z) {
  return {a[0] * x + a[1] * y + a[2] * z + a[3], a[4] * x + a[5] * y + a[6] * z + a[7],
          a[8] * x + a[9] * y + a[10] * z + a[11]};
}

void validate_scene(const std::vector<SceneView>& views, const char* what, bool need_pose) {
  DACPP_CHECK(!views.empty(), ErrorCode::InvalidArgument, what, ": no views to export");
  for (size_t i = 0; i < views.size(); ++i) validate_view(views[i], i, what, need_pose);
  const bool conf0 = !views[0].conf.empty();
  for (size_t i = 1; i < views.size(); ++i)
    DACPP_CHECK(views[i].conf.empty() != conf0, ErrorCode::InvalidArgument, what, ": view ", i, " ('",
                views[i].stem, "') ", conf0 ? "lacks" : "has", " confidence while view 0 ",
                conf0 ? "has it" : "does not");
}

double percentile(std::vector<float> values, double p) {
  values.erase(std::remove_if(values.begin(), values.end(), [](float x) { return !std::isfinite(x); }),
               values.end());
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  p = std::min(100.0, std::max(0.0, p));
  const double pos = p / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double a = values[lo];
  if (frac == 0.0 || lo + 1 >= values.size()) return a;
  const double b = *std::min_element(values.begin() + lo + 1, values.end());
  return a + (b - a) * frac;
}

double clamped_conf_threshold(const std::vector<SceneView>& views, const PointCloudOptions& opt) {
  const std::vector<float> c = all_confidence(views);
  if (c.empty()) return -std::numeric_limits<double>::infinity();
  const double lower = percentile(c, opt.conf_percentile);
  const double upper = percentile(c, opt.ensure_percentile);
  if (std::isnan(lower)) return -std::numeric_limits<double>::infinity();
  return std::min(std::max(opt.conf_base, lower), upper);
}

double percentile_conf_threshold(const std::vector<SceneView>& views, const PointCloudOptions& opt) {
  const std::vector<float> c = all_confidence(views);
  const double t = c.empty() ? std::numeric_limits<double>::quiet_NaN() : percentile(c, opt.conf_percentile);
  return std::isnan(t) ? -std::numeric_limits<double>::infinity() : t;
}

PointCloud unproject_scene(const std::vector<SceneView>& views, double conf_threshold) {
  PointCloud pc;
  for (size_t vi = 0; vi < views.size(); ++vi) {
    const SceneView& v = views[vi];
    const Affine34 kinv = affine_inverse({v.K[0], v.K[1], v.K[2], 0, v.K[3], v.K[4], v.K[5], 0, v.K[6], v.K[7],
                                          v.K[8], 0});
    const Affine34 c2w = v.has_pose ? affine_inverse(v.w2c) : Affine34{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    const Affine34 pix_to_world = affine_compose(c2w, kinv);  // applied to depth·(u, v, 1): translation separate
    for (int y = 0; y < v.height; ++y) {
      for (int x = 0; x < v.width; ++x) {
        const size_t i = static_cast<size_t>(y) * v.width + x;
        const float d = v.depth[i];
        if (!std::isfinite(d) || d <= 0) continue;
        if (!v.conf.empty() && !(v.conf[i] >= conf_threshold)) continue;
        const auto& m = pix_to_world;
        const double u = d * static_cast<double>(x), w = d * static_cast<double>(y), z = d;
        for (int r = 0; r < 3; ++r)
          pc.xyz.push_back(static_cast<float>(m[r * 4] * u + m[r * 4 + 1] * w + m[r * 4 + 2] * z + c2w[r * 4 + 3]));
        for (int ch = 0; ch < 3; ++ch) pc.rgb.push_back(v.rgb.empty() ? 128 : v.rgb[3 * i + ch]);
        pc.view.push_back(static_cast<int32_t>(vi));
        pc.pixel.push_back(static_cast<int32_t>(i));
      }
    }
  }
  return pc;
}

void subsample(PointCloud& cloud, int64_t max_points) {
  const size_t n = cloud.size();
  if (max_points <= 0 || n <= static_cast<size_t>(max_points)) return;
  std::mt19937_64 rng(0x64616370ULL);  // "dacp": fixed so that an export repeats byte for byte
  size_t need = static_cast<size_t>(max_points), kept = 0;
  for (size_t i = 0; i < n && need > 0; ++i) {
    // Selection sampling (Knuth, Algorithm S): take point i with probability need / (points left).
    const double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
    if (u * static_cast<double>(n - i) >= static_cast<double>(need)) continue;
    for (int c = 0; c < 3; ++c) {
      cloud.xyz[3 * kept + c] = cloud.xyz[3 * i + c];
      cloud.rgb[3 * kept + c] = cloud.rgb[3 * i + c];
    }
    cloud.view[kept] = cloud.view[i];
    cloud.pixel[kept] = cloud.pixel[i];
    ++kept;
    --need;
  }
  cloud.xyz.resize(3 * kept);
  cloud.rgb.resize(3 * kept);
  cloud.view.resize(kept);
  cloud.pixel.resize(kept);
}

}  // namespace dacpp::io
