#include "cli/depth_outputs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <future>
#include <limits>
#include <vector>

#include "core/error.h"
#include "io/writers.h"

namespace dacpp::cli {
namespace {

struct MinMax {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
};

MinMax finite_min_max(const float* v, size_t n) {
  MinMax m;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(v[i])) {
      m.lo = std::min(m.lo, v[i]);
      m.hi = std::max(m.hi, v[i]);
    }
  if (!(m.lo <= m.hi)) m = {0.f, 0.f};
  return m;
}

// Values drawn so that near is "high": disparity as is, depth inverted (the official visualisations do the same).
std::vector<float> display_values(const DepthResult& r) {
  const float* d = r.depth.data<float>();
  const size_t n = static_cast<size_t>(r.depth.numel());
  std::vector<float> v(d, d + n);
  if (r.units != "relative-disparity")
    for (float& x : v) x = x > 0 ? 1.f / x : std::numeric_limits<float>::quiet_NaN();
  return v;
}

}  // namespace

nlohmann::json write_depth_outputs(const DepthResult& r, const std::string& out_dir, const std::string& stem,
                                   const OutputSelection& sel) {
  const int h = static_cast<int>(r.depth.dim(0)), w = static_cast<int>(r.depth.dim(1));
  const float* d = r.depth.data<float>();
  const size_t n = static_cast<size_t>(r.depth.numel());
  const std::string base = (std::filesystem::path(out_dir) / stem).string();
  const MinMax mm = finite_min_max(d, n);
  nlohmann::json files = nlohmann::json::object();
  if (sel.pfm) {
    io::write_pfm(base + ".depth.pfm", d, h, w);
    files["depth_pfm"] = base + ".depth.pfm";
  }
  if (sel.npy) {
    io::write_npy(base + ".depth.npy", d, {h, w});
    files["depth_npy"] = base + ".depth.npy";
  }
  // The colour map (its range's two selections, colours, PNG) on its own thread beside the 16-bit PNG
  // (docs/PERFORMANCE.md, sessions 40-41). Its error, if any, is rethrown by get() once the other outputs are
  // written.
  std::future<std::string> color;
  if (sel.color)
    color = std::async(std::launch::async, [&r, &sel, &base, h, w] {
      std::vector<float> v = display_values(r);
      io::ValueRange range = io::robust_range(v.data(), v.size());
      // Spectral runs red → blue, so it is reversed to draw near (high) values red, as DA2's Spectral_r does.
      const bool invert = sel.color_map == io::ColorMap::Spectral;
      io::Image img = io::colorize(v.data(), h, w, sel.color_map, invert, range.lo, range.hi);
      io::write_png8(base + ".color.png", img);
      return base + ".color.png";
    });
  if (sel.png16) {
    const float hi = mm.hi > mm.lo ? mm.hi : mm.lo + 1.f;
    std::vector<uint16_t> q = io::quantize_u16(d, n, mm.lo, hi);
    io::write_png16(base + ".depth.png", q.data(), h, w);
    files["depth_png"] = base + ".depth.png";
  }
  if (color.valid()) files["color_png"] = color.get();
  if (sel.sky) {
    DACPP_CHECK(r.sky.defined() && r.sky.numel() > 0, ErrorCode::Unsupported,
                "--sky: this model has no sky head (only DA3 mono/metric models do)");
    io::write_pfm(base + ".sky.pfm", r.sky.data<float>(), static_cast<int>(r.sky.dim(0)),
                  static_cast<int>(r.sky.dim(1)));
    files["sky_pfm"] = base + ".sky.pfm";
  }
  nlohmann::json j;
  j["width"] = w;
  j["height"] = h;
  j["processed"] = {r.processed_width, r.processed_height};
  j["source"] = {r.source_width, r.source_height};
  j["units"] = r.units;
  j["min"] = mm.lo;
  j["max"] = mm.hi;
  j["files"] = files;
  nlohmann::json t = nlohmann::json::object();
  for (const StageTiming& s : r.timings) t[s.stage] = s.ms;
  j["timing_ms"] = t;
  return j;
}

}  // namespace dacpp::cli
