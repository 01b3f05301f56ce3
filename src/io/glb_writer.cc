#include "io/glb_writer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/le_bytes.h"
#include "io/point_cloud.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

constexpr int kArrayBuffer = 34962;  // bufferView target for vertex attributes
constexpr int kFloat = 5126, kUnsignedByte = 5121;
constexpr int kModePoints = 0, kModeLines = 1;

// numpy.median of one coordinate (the mean of the two middle values for an even count).
double median_of_axis(const std::vector<float>& xyz, int axis) {
  std::vector<float> v(xyz.size() / 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = xyz[3 * i + axis];
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + mid);
  return 0.5 * (lo + hi);
}

// A = T_center · diag(1,-1,-1) · w2c0, with the centre the median of the points in the flipped frame.
Affine34 gltf_alignment(const Affine34& w2c0, PointCloud& cloud) {
  Affine34 a = w2c0;
  for (int c = 0; c < 4; ++c) {
    a[4 + c] = -a[4 + c];
    a[8 + c] = -a[8 + c];
  }
  for (size_t i = 0; i < cloud.size(); ++i) {
    const auto p = affine_apply(a, cloud.xyz[3 * i], cloud.xyz[3 * i + 1], cloud.xyz[3 * i + 2]);
    for (int c = 0; c < 3; ++c) cloud.xyz[3 * i + c] = static_cast<float>(p[c]);
  }
  for (int c = 0; c < 3; ++c) {
    const double centre = cloud.size() > 0 ? median_of_axis(cloud.xyz, c) : 0.0;
    a[4 * c + 3] -= centre;
    for (size_t i = 0; i < cloud.size(); ++i)
      cloud.xyz[3 * i + c] = static_cast<float>(cloud.xyz[3 * i + c] - centre);
  }
  return a;
}

// Norm of the (95th − 5th percentile) corner of the points; `fallback` when it is not a positive finite number.
double scene_scale(const std::vector<float>& xyz, double fallback) {
  if (xyz.size() < 6) return fallback;
  double sq = 0;
  for (int c = 0; c < 3; ++c) {
    std::vector<float> v(xyz.size() / 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = xyz[3 * i + c];
    const double d = percentile(v, 95.0) - percentile(std::move(v), 5.0);
    sq += d * d;
  }
  const double diag = std::sqrt(sq);
  return std::isfinite(diag) && diag > 0 ? diag : fallback;
}

// The official wheel colour of camera i of n: HSV (h = (i + ½)/n, s = 0.85, v = 0.95), truncated to bytes.
std::array<uint8_t, 3> camera_colour(size_t i, size_t n) {
  const double h = (static_cast<double>(i) + 0.5) / static_cast<double>(std::max<size_t>(n, 1));
  const double s = 0.85, v = 0.95;
  const int sector = static_cast<int>(h * 6.0);
  const double f = h * 6.0 - sector;
  const double p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
  double r = v, g = t, b = p;
  switch (sector % 6) {
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    case 5: r = v, g = p, b = q; break;
    default: break;
  }
  return {static_cast<uint8_t>(r * 255), static_cast<uint8_t>(g * 255), static_cast<uint8_t>(b * 255)};
}

// 8 segments (16 vertices, A frame): apex → each image corner, then the base rectangle.
std::vector<float> frustum_lines(const SceneView& v, const Affine34& align, double scale) {
  const Affine34 kinv = affine_inverse({v.K[0], v.K[1], v.K[2], 0, v.K[3], v.K[4], v.K[5], 0, 0, 0, 1, 0});
  const Affine34 to_scene = affine_compose(align, affine_inverse(v.w2c));  // camera → glTF scene
  const double W = v.width - 1, H = v.height - 1;
  const double corners[4][2] = {{0, 0}, {W, 0}, {W, H}, {0, H}};
  std::array<std::array<double, 3>, 5> p;  // apex, then the 4 base corners
  p[0] = affine_apply(to_scene, 0, 0, 0);
  for (int k = 0; k < 4; ++k) {
    auto ray = affine_apply(kinv, corners[k][0], corners[k][1], 1.0);
    const double z = ray[2] == 0 ? 1.0 : ray[2];
    p[k + 1] = affine_apply(to_scene, ray[0] / z * scale, ray[1] / z * scale, ray[2] / z * scale);
  }
  const int seg[8][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {2, 3}, {3, 4}, {4, 1}};
  std::vector<float> out;
  for (const auto& s : seg)
    for (int e = 0; e < 2; ++e)
      for (int c = 0; c < 3; ++c) out.push_back(static_cast<float>(p[s[e]][c]));
  return out;
}

// Builds buffers, views, accessors and meshes into one glTF document and its binary chunk.
class GltfBuilder {
 public:
  GltfBuilder() {
    doc_["asset"] = {{"version", "2.0"}, {"generator", "dacpp"}};
    for (const char* k : {"bufferViews", "accessors", "meshes", "nodes"}) doc_[k] = nlohmann::json::array();
  }

  // A mesh with one primitive of `mode` over xyz (3 floats per vertex) and rgb (3 bytes per vertex, alpha 255).
  void add_mesh(const std::string& name, int mode, const std::vector<float>& xyz, const std::vector<uint8_t>& rgb) {
    const size_t n = xyz.size() / 3;
    if (n == 0) return;
    std::array<float, 3> lo, hi;
    lo.fill(std::numeric_limits<float>::infinity());
    hi.fill(-std::numeric_limits<float>::infinity());
    size_t start = bin_.size();
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        const float x = xyz[3 * i + c];
        bin_.f32(x);
        lo[c] = std::min(lo[c], x);
        hi[c] = std::max(hi[c], x);
      }
    const size_t pos_view = end_view(start);
    start = bin_.size();
    for (size_t i = 0; i < n; ++i) {
      for (int c = 0; c < 3; ++c) bin_.u8(rgb[3 * i + c]);
      bin_.u8(255);
    }
    const size_t col_view = end_view(start);
    const size_t pos = add_accessor(pos_view, kFloat, n, "VEC3", false);
    doc_["accessors"][pos]["min"] = {lo[0], lo[1], lo[2]};
    doc_["accessors"][pos]["max"] = {hi[0], hi[1], hi[2]};
    const size_t col = add_accessor(col_view, kUnsignedByte, n, "VEC4", true);
    nlohmann::json prim = {{"attributes", {{"POSITION", pos}, {"COLOR_0", col}}}, {"mode", mode}};
    doc_["meshes"].push_back({{"name", name}, {"primitives", nlohmann::json::array({prim})}});
    doc_["nodes"].push_back({{"name", name}, {"mesh", doc_["meshes"].size() - 1}});
  }

  std::vector<uint8_t> finish(const nlohmann::json& scene_extras) {
    nlohmann::json scene = {{"extras", scene_extras}};
    std::vector<size_t> nodes(doc_["nodes"].size());
    for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
    if (!nodes.empty()) scene["nodes"] = nodes;
    doc_["scenes"] = nlohmann::json::array({scene});
    doc_["scene"] = 0;
    if (bin_.size() > 0) doc_["buffers"] = nlohmann::json::array({{{"byteLength", bin_.size()}}});
    for (const char* k : {"bufferViews", "accessors", "meshes", "nodes"})
      if (doc_[k].empty()) doc_.erase(k);
    return container(doc_.dump());
  }

 private:
  // Closes the buffer view of the bytes appended since `start`; returns its index.
  size_t end_view(size_t start) {
    doc_["bufferViews"].push_back(
        {{"buffer", 0}, {"byteOffset", start}, {"byteLength", bin_.size() - start}, {"target", kArrayBuffer}});
    bin_.pad_to(4, 0);
    return doc_["bufferViews"].size() - 1;
  }
  size_t add_accessor(size_t view, int type, size_t count, const char* shape, bool normalized) {
    nlohmann::json a = {{"bufferView", view}, {"componentType", type},
                        {"count", count}, {"type", shape}};
    if (normalized) a["normalized"] = true;
    doc_["accessors"].push_back(a);
    return doc_["accessors"].size() - 1;
  }
  // The GLB container: 12-byte header, JSON chunk padded with spaces, BIN chunk padded with zeros.
  std::vector<uint8_t> container(std::string json) {
    while (json.size() % 4 != 0) json.push_back(' ');
    bin_.pad_to(4, 0);
    const size_t total = 12 + 8 + json.size() + (bin_.size() > 0 ? 8 + bin_.size() : 0);
    DACPP_CHECK(total <= 0xFFFFFFFFull, ErrorCode::InvalidArgument, "GLB export: ", total,
                " bytes exceed the 4 GiB a GLB file can hold; lower --max-points");
    LeBytes out;
    out.reserve(total);
    out.u32(0x46546C67u);  // "glTF"
    out.u32(2);
    out.u32(static_cast<uint32_t>(total));
    out.u32(static_cast<uint32_t>(json.size()));
    out.u32(0x4E4F534Au);  // "JSON"
    out.str(json);
    if (bin_.size() > 0) {
      out.u32(static_cast<uint32_t>(bin_.size()));
      out.u32(0x004E4942u);  // "BIN\0"
      out.bytes().insert(out.bytes().end(), bin_.data(), bin_.data() + bin_.size());
    }
    return std::move(out.bytes());
  }

  nlohmann::json doc_;
  LeBytes bin_;
};

}  // namespace

GlbSummary write_scene_glb(const std::string& path, const std::vector<SceneView>& views,
                           const PointCloudOptions& opt, bool show_cameras) {
  validate_scene(views, "GLB export", /*need_pose=*/true);
  PointCloud cloud = unproject_scene(views, clamped_conf_threshold(views, opt));
  const Affine34 align = gltf_alignment(views[0].w2c, cloud);
  subsample(cloud, opt.max_points);
  GltfBuilder gltf;
  gltf.add_mesh("points", kModePoints, cloud.xyz, cloud.rgb);
  GlbSummary summary;
  summary.points = cloud.size();
  if (show_cameras) {
    const double scale = scene_scale(cloud.xyz, 1.0) * opt.camera_size;
    for (size_t i = 0; i < views.size(); ++i) {
      const auto c = camera_colour(i, views.size());
      std::vector<uint8_t> rgb;
      for (int k = 0; k < 16; ++k) rgb.insert(rgb.end(), c.begin(), c.end());
      gltf.add_mesh("camera_" + views[i].stem, kModeLines, frustum_lines(views[i], align, scale), rgb);
    }
    summary.cameras = views.size();
  }
  for (int i = 0; i < 12; ++i) summary.alignment[i] = align[i];
  summary.alignment[15] = 1.0;
  nlohmann::json extras = {{"dacpp_alignment", summary.alignment},
                           {"dacpp_convention", "alignment maps pose-frame (OpenCV) world points into this scene"}};
  const std::vector<uint8_t> bytes = gltf.finish(extras);
  write_file_atomic(path, bytes.data(), bytes.size());
  return summary;
}

}  // namespace dacpp::io
