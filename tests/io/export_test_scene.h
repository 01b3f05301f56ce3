// Shared by the export tests: a small synthetic posed scene with known geometry, a little-endian byte reader and
// a scratch folder per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/scene.h"
#include "util/scratch.h"

namespace dacpp::io::testing {

// Rotation about y by `a` radians then about x by `b`, row-major.
inline std::array<double, 9> rotation_yx(double a, double b) {
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
  const double ry[9] = {ca, 0, sa, 0, 1, 0, -sa, 0, ca};
  const double rx[9] = {1, 0, 0, 0, cb, -sb, 0, sb, cb};
  std::array<double, 9> r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) r[3 * i + j] += rx[3 * i + k] * ry[3 * k + j];
  return r;
}

// View `index` of a w×h scene: K = [fx 0 cx; 0 fy cy; 0 0 1] with fx = 1.2 w, fy = 1.1 w, cx = w/2 - 0.3,
// cy = h/2 + 0.2; view 0 has the identity pose, view i > 0 a rotation and translation; depth 2 + 0.1 x + 0.05 y +
// 0.3 i; confidence 1 + ((7 x + 3 y + i) mod 11) / 5; colours (20 x, 30 y, 100 i) mod 256.
inline SceneView make_view(int index, int w, int h) {
  SceneView v;
  v.stem = "view" + std::to_string(index);
  v.image_name = v.stem + ".jpg";
  v.width = w;
  v.height = h;
  v.source_width = 2 * w + 1;
  v.source_height = 2 * h;
  v.K = {1.2 * w, 0, w / 2.0 - 0.3, 0, 1.1 * w, h / 2.0 + 0.2, 0, 0, 1};
  v.has_pose = true;
  const std::array<double, 9> r = index == 0 ? rotation_yx(0, 0) : rotation_yx(0.4 * index, -0.15 * index);
  const double t[3] = {0.5 * index, -0.2 * index, 0.1 * index};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) v.w2c[4 * i + j] = r[3 * i + j];
    v.w2c[4 * i + 3] = t[i];
  }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      v.depth.push_back(static_cast<float>(2 + 0.1 * x + 0.05 * y + 0.3 * index));
      v.conf.push_back(static_cast<float>(1 + ((7 * x + 3 * y + index) % 11) / 5.0));
      v.rgb.push_back(static_cast<uint8_t>((20 * x) % 256));
      v.rgb.push_back(static_cast<uint8_t>((30 * y) % 256));
      v.rgb.push_back(static_cast<uint8_t>((100 * index) % 256));
    }
  return v;
}

inline std::vector<SceneView> make_scene(int views, int w, int h) {
  std::vector<SceneView> s;
  for (int i = 0; i < views; ++i) s.push_back(make_view(i, w, h));
  return s;
}

// The world point of pixel (x, y) of v, computed directly: x_cam = d · ((x − cx)/fx, (y − cy)/fy, 1),
// x_world = Rᵀ (x_cam − t).
inline std::array<double, 3> expected_world_point(const SceneView& v, int x, int y) {
  const double d = v.depth[static_cast<size_t>(y) * v.width + x];
  const double c[3] = {d * (x - v.K[2]) / v.K[0], d * (y - v.K[5]) / v.K[4], d};
  std::array<double, 3> p{};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) p[i] += v.w2c[4 * k + i] * (c[k] - v.w2c[4 * k + 3]);
  return p;
}

// Little-endian cursor over a byte buffer; reading past the end fails the test and returns zeros.
class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& b, size_t pos = 0) : b_(b), pos_(pos) {}
  template <typename T>
  T get() {
    T v{};
    if (pos_ + sizeof(T) > b_.size()) {
      ADD_FAILURE() << "read past the end at " << pos_;
      pos_ = b_.size();
      return v;
    }
    std::memcpy(&v, b_.data() + pos_, sizeof(T));  // the test hosts are little-endian
    pos_ += sizeof(T);
    return v;
  }
  std::string cstr() {
    std::string s;
    while (pos_ < b_.size() && b_[pos_] != 0) s.push_back(static_cast<char>(b_[pos_++]));
    ++pos_;
    return s;
  }
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == b_.size(); }

 private:
  const std::vector<uint8_t>& b_;
  size_t pos_;
};

// A fresh scratch folder per test, removed afterwards.
class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::dacpp::testing::scratch_path_for_test("export");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

}  // namespace dacpp::io::testing
