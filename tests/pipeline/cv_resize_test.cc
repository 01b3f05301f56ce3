// cv_resize against cv2.resize: reference cases written by scripts/gen_resize_refs.py (OpenCV 4.6, x86-64).
// The committed set lives in tests/fixtures/resize; DACPP_RESIZE_REFS=<dir> adds a larger generated sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/cv_resize.h"

namespace dacpp::pipeline {
namespace {

struct ResizeCase {
  std::string name;
  int dtype = 0, interp = 0, sh = 0, sw = 0, cn = 0, dh = 0, dw = 0;
  std::vector<char> src, dst;
};

size_t elem_size(int dtype) { return dtype == 0 ? 1 : (dtype == 1 ? 4 : 8); }

bool read_case(const std::string& path, ResizeCase* c) {
  std::ifstream f(path, std::ios::binary);
  char magic[8];
  int32_t h[7];
  if (!f.read(magic, 8) || std::memcmp(magic, "DRSZ1", 5) != 0 || !f.read(reinterpret_cast<char*>(h), sizeof(h)))
    return false;
  c->name = path.substr(path.find_last_of('/') + 1);
  c->dtype = h[0], c->interp = h[1], c->sh = h[2], c->sw = h[3], c->cn = h[4], c->dh = h[5], c->dw = h[6];
  const size_t es = elem_size(c->dtype);
  c->src.resize(static_cast<size_t>(c->sh) * c->sw * c->cn * es);
  c->dst.resize(static_cast<size_t>(c->dh) * c->dw * c->cn * es);
  return static_cast<bool>(f.read(c->src.data(), c->src.size())) &&
         static_cast<bool>(f.read(c->dst.data(), c->dst.size()));
}

std::vector<ResizeCase> load_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".rsz") == 0) names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::vector<ResizeCase> cases;
  for (const std::string& n : names) {
    ResizeCase c;
    if (read_case(dir + "/" + n, &c)) cases.push_back(std::move(c));
    else ADD_FAILURE() << "unreadable reference case " << dir << "/" << n;
  }
  return cases;
}

struct Tally {
  int64_t u8_values = 0, u8_mismatch = 0, u8_cases = 0, u8_exact_cases = 0;
  int u8_max_diff = 0;
  int64_t f_cases = 0, f_exact_cases = 0;
  double f_max_rel = 0;
};

template <typename T>
std::vector<T> as(const std::vector<char>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

void check_case(const ResizeCase& c, Tally* t) {
  const CvInterpolation interp = c.interp == 0 ? CvInterpolation::Cubic : CvInterpolation::Area;
  const size_t n = static_cast<size_t>(c.dh) * c.dw * c.cn;
  if (c.dtype == 0) {
    const auto src = as<uint8_t>(c.src), ref = as<uint8_t>(c.dst);
    std::vector<uint8_t> out(n, 0);
    cv_resize(src.data(), c.sh, c.sw, c.cn, out.data(), c.dh, c.dw, interp);
    int64_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const int d = std::abs(int(out[i]) - int(ref[i]));
      bad += d != 0;
      t->u8_max_diff = std::max(t->u8_max_diff, d);
    }
    t->u8_values += static_cast<int64_t>(n), t->u8_mismatch += bad, t->u8_cases++, t->u8_exact_cases += bad == 0;
    EXPECT_EQ(bad, 0) << c.name << ": " << bad << " of " << n << " values differ from cv2";
    return;
  }
  double max_rel = 0;
  bool exact = true;
  auto compare = [&](const auto& out, const auto& ref) {
    for (size_t i = 0; i < n; ++i) {
      const double a = out[i], b = ref[i];
      exact = exact && a == b;
      max_rel = std::max(max_rel, std::abs(a - b) / std::max(1e-3, std::abs(b)));
    }
  };
  if (c.dtype == 1) {
    const auto src = as<float>(c.src), ref = as<float>(c.dst);
    std::vector<float> out(n, -7.f);
    cv_resize(src.data(), c.sh, c.sw, c.cn, out.data(), c.dh, c.dw, interp);
    compare(out, ref);
  } else {
    const auto src = as<double>(c.src), ref = as<double>(c.dst);
    std::vector<double> out(n, -7.0);
    cv_resize(src.data(), c.sh, c.sw, c.cn, out.data(), c.dh, c.dw, interp);
    compare(out, ref);
  }
  if (!exact && std::getenv("DACPP_RESIZE_VERBOSE")) std::printf("not bit-exact: %s (max rel %.3g)\n", c.name.c_str(), max_rel);
  t->f_cases++, t->f_exact_cases += exact, t->f_max_rel = std::max(t->f_max_rel, max_rel);
  EXPECT_LE(max_rel, 1e-6) << c.name;
}

void run_dir(const std::string& dir, size_t min_cases) {
  const std::vector<ResizeCase> cases = load_dir(dir);
  ASSERT_GE(cases.size(), min_cases) << "reference cases missing in " << dir;
  Tally t;
  for (const ResizeCase& c : cases) check_case(c, &t);
  std::printf("[cv_resize] %s: uint8 %lld/%lld cases bit-exact, %lld of %lld values differ (max %d); "
              "float %lld/%lld cases bit-exact, max rel err %.3g\n",
              dir.c_str(), (long long)t.u8_exact_cases, (long long)t.u8_cases, (long long)t.u8_mismatch,
              (long long)t.u8_values, t.u8_max_diff, (long long)t.f_exact_cases, (long long)t.f_cases, t.f_max_rel);
}

TEST(CvResize, MatchesCv2Fixtures) { run_dir(std::string(DACPP_FIXTURES_DIR) + "/resize", 20); }

TEST(CvResize, MatchesCv2Sweep) {
  const char* dir = std::getenv("DACPP_RESIZE_REFS");
  if (dir == nullptr || *dir == 0) GTEST_SKIP() << "set DACPP_RESIZE_REFS to a scripts/gen_resize_refs.py --many dir";
  run_dir(dir, 1);
}

TEST(CvResize, SameSizeCopies) {
  std::vector<uint8_t> src(5 * 4 * 3), dst(src.size(), 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  cv_resize(src.data(), 5, 4, 3, dst.data(), 5, 4, CvInterpolation::Cubic);
  EXPECT_EQ(src, dst);
}

TEST(CvResize, ConstantImageStaysConstant) {
  std::vector<uint8_t> src(9 * 11 * 3, 200), dst(23 * 5 * 3, 0);
  cv_resize(src.data(), 9, 11, 3, dst.data(), 23, 5, CvInterpolation::Cubic);
  for (uint8_t v : dst) ASSERT_EQ(v, 200);
  std::vector<uint8_t> small(4 * 3 * 3, 0);
  cv_resize(src.data(), 9, 11, 3, small.data(), 4, 3, CvInterpolation::Area);
  for (uint8_t v : small) ASSERT_EQ(v, 200);
}

TEST(CvResize, RejectsBadArguments) {
  std::vector<uint8_t> buf(64, 1), out(64, 0);
  try {
    cv_resize(buf.data(), 4, 4, 3, out.data(), 0, 4, CvInterpolation::Cubic);
    FAIL() << "no error for a zero height";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("INTER_CUBIC"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cv_resize(buf.data(), 4, 4, 5, out.data(), 2, 2, CvInterpolation::Cubic), Error);
  try {
    cv_resize(buf.data(), 2, 2, 3, out.data(), 4, 4, CvInterpolation::Area);
    FAIL() << "no error for INTER_AREA enlarging";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  }
}

}  // namespace
}  // namespace dacpp::pipeline
