#include "io/pose_json.h"

#include <cmath>

#include "core/error.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

nlohmann::json rows(const double* m, int r, int c) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < r; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < c; ++j) row.push_back(m[i * c + j]);
    out.push_back(row);
  }
  return out;
}

bool finite(const double* v, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

}  // namespace

nlohmann::json pose_json(const SceneView& v) {
  DACPP_CHECK(v.has_pose, ErrorCode::InvalidArgument, "pose JSON for '", v.stem,
              "': the view has no camera pose (only DA3 any-view models predict one)");
  DACPP_CHECK(v.width > 0 && v.height > 0, ErrorCode::InvalidArgument, "pose JSON for '", v.stem, "': size ",
              v.width, "x", v.height, " is not positive");
  DACPP_CHECK(finite(v.w2c.data(), 12) && finite(v.K.data(), 9), ErrorCode::InvalidArgument, "pose JSON for '",
              v.stem, "': the pose or intrinsics have non-finite values");
  const int sw = v.source_width > 0 ? v.source_width : v.width;
  const int sh = v.source_height > 0 ? v.source_height : v.height;
  std::array<double, 9> ks = v.K;
  const double sx = static_cast<double>(sw) / v.width, sy = static_cast<double>(sh) / v.height;
  for (int c = 0; c < 3; ++c) {
    ks[c] *= sx;
    ks[3 + c] *= sy;
  }
  const auto& e = v.w2c;
  std::array<double, 3> centre;
  for (int i = 0; i < 3; ++i) centre[i] = -(e[i] * e[3] + e[4 + i] * e[7] + e[8 + i] * e[11]);  // −Rᵀ t
  nlohmann::json j;
  j["stem"] = v.stem;
  j["image_size"] = {{"width", v.width}, {"height", v.height}};
  j["source_size"] = {{"width", sw}, {"height", sh}};
  j["extrinsics"] = rows(v.w2c.data(), 3, 4);
  j["intrinsics"] = rows(v.K.data(), 3, 3);
  j["intrinsics_source"] = rows(ks.data(), 3, 3);
  j["camera_center"] = centre;
  j["convention"] = {
      {"extrinsics", "world_to_camera: x_cam = R x_world + t, rows of [R | t]"},
      {"camera_axes", "opencv: x right, y down, z forward"},
      {"intrinsics", "pixels of image_size; pixel (u, v) = column u, row v, centred at integer coordinates"},
      {"depth", "z-depth along the optical axis, in the units of t"},
      {"world", "the frame the model predicts poses in (DA3: its reference view's camera)"}};
  return j;
}

void write_pose_json(const SceneView& view, const std::string& path) {
  const std::string text = pose_json(view).dump(2) + "\n";
  write_file_atomic(path, text.data(), text.size());
}

}  // namespace dacpp::io
