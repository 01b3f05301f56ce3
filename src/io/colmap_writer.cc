#include "io/colmap_writer.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "core/error.h"
#include "core/log.h"
#include "io/le_bytes.h"
#include "io/point_cloud.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

constexpr int kPinholeModelId = 1;

struct Camera {
  uint64_t width = 0, height = 0;
  double params[4] = {0, 0, 0, 0};  // fx fy cx cy
};

struct Image {
  std::array<double, 4> q{};  // w x y z
  std::array<double, 3> t{};
  std::string name;
  std::vector<double> xy;       // 2 per 2D point
  std::vector<uint64_t> point;  // 3D point id of each 2D point
};

struct Model {
  std::vector<Camera> cameras;  // id = index + 1
  std::vector<Image> images;    // id = index + 1; camera id = image id
  PointCloud cloud;             // 3D point id = index + 1
  std::vector<uint32_t> point2d_index;  // of each 3D point in its image
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

Model build_model(const std::vector<SceneView>& views, const PointCloudOptions& opt) {
  Model m;
  m.cloud = unproject_scene(views, percentile_conf_threshold(views, opt));
  std::vector<double> sx(views.size()), sy(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const SceneView& v = views[i];
    const int sw = v.source_width > 0 ? v.source_width : v.width;
    const int sh = v.source_height > 0 ? v.source_height : v.height;
    sx[i] = static_cast<double>(sw) / v.width;
    sy[i] = static_cast<double>(sh) / v.height;
    Camera c;
    c.width = static_cast<uint64_t>(sw);
    c.height = static_cast<uint64_t>(sh);
    c.params[0] = v.K[0] * sx[i];
    c.params[1] = v.K[4] * sy[i];
    c.params[2] = v.K[2] * sx[i];
    c.params[3] = v.K[5] * sy[i];
    m.cameras.push_back(c);
    Image im;
    im.q = rotation_to_quaternion({v.w2c[0], v.w2c[1], v.w2c[2], v.w2c[4], v.w2c[5], v.w2c[6], v.w2c[8], v.w2c[9],
                                   v.w2c[10]});
    im.t = {v.w2c[3], v.w2c[7], v.w2c[11]};
    im.name = v.image_name.empty() ? v.stem : v.image_name;
    DACPP_CHECK(!im.name.empty() && im.name.find_first_of(std::string("\n\r\0", 3)) == std::string::npos,
                ErrorCode::InvalidArgument, "COLMAP export: view ", i, " has an empty image name or one with a line "
                "break or NUL");
    if (im.name.find_first_of(" \t") != std::string::npos)
      log::warn("COLMAP export: image name '", im.name, "' has a space, which COLMAP's text reader splits on; ",
                "the .bin model is unaffected");
    m.images.push_back(std::move(im));
  }
  m.point2d_index.resize(m.cloud.size());
  for (size_t p = 0; p < m.cloud.size(); ++p) {
    const size_t vi = static_cast<size_t>(m.cloud.view[p]);
    const int w = views[vi].width;
    Image& im = m.images[vi];
    m.point2d_index[p] = static_cast<uint32_t>(im.point.size());
    im.xy.push_back((m.cloud.pixel[p] % w) * sx[vi]);
    im.xy.push_back((m.cloud.pixel[p] / w) * sy[vi]);
    im.point.push_back(p + 1);
  }
  return m;
}

void write_binary(const std::string& dir, const Model& m) {
  LeBytes cams;
  cams.u64(m.cameras.size());
  for (size_t i = 0; i < m.cameras.size(); ++i) {
    const Camera& c = m.cameras[i];
    cams.u32(static_cast<uint32_t>(i + 1));
    cams.i32(kPinholeModelId);
    cams.u64(c.width);
    cams.u64(c.height);
    for (double p : c.params) cams.f64(p);
  }
  write_file_atomic(dir + "/cameras.bin", cams.data(), cams.size());
  LeBytes ims;
  ims.u64(m.images.size());
  for (size_t i = 0; i < m.images.size(); ++i) {
    const Image& im = m.images[i];
    ims.u32(static_cast<uint32_t>(i + 1));
    for (double q : im.q) ims.f64(q);
    for (double t : im.t) ims.f64(t);
    ims.u32(static_cast<uint32_t>(i + 1));
    ims.str(im.name);
    ims.u8(0);
    ims.u64(im.point.size());
    for (size_t k = 0; k < im.point.size(); ++k) {
      ims.f64(im.xy[2 * k]);
      ims.f64(im.xy[2 * k + 1]);
      ims.u64(im.point[k]);
    }
  }
  write_file_atomic(dir + "/images.bin", ims.data(), ims.size());
  LeBytes pts;
  pts.reserve(8 + m.cloud.size() * 59);
  pts.u64(m.cloud.size());
  for (size_t p = 0; p < m.cloud.size(); ++p) {
    pts.u64(p + 1);
    for (int c = 0; c < 3; ++c) pts.f64(m.cloud.xyz[3 * p + c]);
    for (int c = 0; c < 3; ++c) pts.u8(m.cloud.rgb[3 * p + c]);
    pts.f64(0.0);  // reprojection error
    pts.u64(1);    // track length
    pts.u32(static_cast<uint32_t>(m.cloud.view[p] + 1));
    pts.u32(m.point2d_index[p]);
  }
  write_file_atomic(dir + "/points3D.bin", pts.data(), pts.size());
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomic(path, text.data(), text.size());
}

void write_text(const std::string& dir, const Model& m) {
  std::string cams = "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, "
                     "PARAMS[]\n# Number of cameras: " + std::to_string(m.cameras.size()) + "\n";
  for (size_t i = 0; i < m.cameras.size(); ++i) {
    const Camera& c = m.cameras[i];
    cams += std::to_string(i + 1) + " PINHOLE " + std::to_string(c.width) + " " + std::to_string(c.height);
    for (double p : c.params) cams += " " + num(p);
    cams += "\n";
  }
  write_text_file(dir + "/cameras.txt", cams);
  std::string ims = "# Image list with two lines of data per image:\n#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, "
                    "CAMERA_ID, NAME\n#   POINTS2D[] as (X, Y, POINT3D_ID)\n# Number of images: " +
                    std::to_string(m.images.size()) + "\n";
  for (size_t i = 0; i < m.images.size(); ++i) {
    const Image& im = m.images[i];
    ims += std::to_string(i + 1);
    for (double q : im.q) ims += " " + num(q);
    for (double t : im.t) ims += " " + num(t);
    ims += " " + std::to_string(i + 1) + " " + im.name + "\n";
    for (size_t k = 0; k < im.point.size(); ++k)
      ims += (k ? " " : "") + num(im.xy[2 * k]) + " " + num(im.xy[2 * k + 1]) + " " + std::to_string(im.point[k]);
    ims += "\n";
  }
  write_text_file(dir + "/images.txt", ims);
  std::string pts = "# 3D point list with one line of data per point:\n#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, "
                    "TRACK[] as (IMAGE_ID, POINT2D_IDX)\n# Number of points: " + std::to_string(m.cloud.size()) +
                    "\n";
  for (size_t p = 0; p < m.cloud.size(); ++p) {
    pts += std::to_string(p + 1);
    for (int c = 0; c < 3; ++c) pts += " " + num(m.cloud.xyz[3 * p + c]);
    for (int c = 0; c < 3; ++c) pts += " " + std::to_string(m.cloud.rgb[3 * p + c]);
    pts += " 0 " + std::to_string(m.cloud.view[p] + 1) + " " + std::to_string(m.point2d_index[p]) + "\n";
  }
  write_text_file(dir + "/points3D.txt", pts);
}

}  // namespace

std::array<double, 4> rotation_to_quaternion(const std::array<double, 9>& r) {
  auto R = [&](int i, int j) { return r[3 * i + j]; };
  double err = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double d = (i == j) ? -1.0 : 0.0;
      for (int k = 0; k < 3; ++k) d += R(k, i) * R(k, j);
      err = std::max(err, std::fabs(d));
    }
  const double det = R(0, 0) * (R(1, 1) * R(2, 2) - R(1, 2) * R(2, 1)) -
                     R(0, 1) * (R(1, 0) * R(2, 2) - R(1, 2) * R(2, 0)) +
                     R(0, 2) * (R(1, 0) * R(2, 1) - R(1, 1) * R(2, 0));
  DACPP_CHECK(std::isfinite(err) && err <= 1e-3 && det > 0, ErrorCode::InvalidArgument,
              "camera rotation is not a rotation matrix (max |RᵀR − I| = ", err, ", det = ", det, ")");
  std::array<double, 4> q;  // w x y z, Shepperd's method: divide by the largest of the four candidates
  const double tr = R(0, 0) + R(1, 1) + R(2, 2);
  if (tr > 0) {
    const double s = 2 * std::sqrt(tr + 1);
    q = {s / 4, (R(2, 1) - R(1, 2)) / s, (R(0, 2) - R(2, 0)) / s, (R(1, 0) - R(0, 1)) / s};
  } else if (R(0, 0) > R(1, 1) && R(0, 0) > R(2, 2)) {
    const double s = 2 * std::sqrt(1 + R(0, 0) - R(1, 1) - R(2, 2));
    q = {(R(2, 1) - R(1, 2)) / s, s / 4, (R(0, 1) + R(1, 0)) / s, (R(0, 2) + R(2, 0)) / s};
  } else if (R(1, 1) > R(2, 2)) {
    const double s = 2 * std::sqrt(1 + R(1, 1) - R(0, 0) - R(2, 2));
    q = {(R(0, 2) - R(2, 0)) / s, (R(0, 1) + R(1, 0)) / s, s / 4, (R(1, 2) + R(2, 1)) / s};
  } else {
    const double s = 2 * std::sqrt(1 + R(2, 2) - R(0, 0) - R(1, 1));
    q = {(R(1, 0) - R(0, 1)) / s, (R(0, 2) + R(2, 0)) / s, (R(1, 2) + R(2, 1)) / s, s / 4};
  }
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const double sign = q[0] < 0 ? -1.0 : 1.0;
  for (double& x : q) x *= sign / n;
  return q;
}

ColmapSummary write_scene_colmap(const std::string& dir, const std::vector<SceneView>& views,
                                 const PointCloudOptions& opt) {
  validate_scene(views, "COLMAP export", /*need_pose=*/true);
  const Model m = build_model(views, opt);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  DACPP_CHECK(std::filesystem::is_directory(dir, ec), ErrorCode::Io, "cannot create COLMAP folder '", dir, "'",
              ec ? ": " + ec.message() : "");
  write_binary(dir, m);
  write_text(dir, m);
  return {m.cloud.size(), m.images.size()};
}

}  // namespace dacpp::io
