#include "engine/postprocess.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/resize.h"
#include "pipeline/sky_fill.h"

namespace dacpp {
namespace {

// [1, h, w] → a new owning [oh, ow] tensor (bilinear, align_corners=True), or a plain copy at the same size.
Tensor resized_copy(ops::Context& ctx, const Tensor& x, int64_t oh, int64_t ow) {
  const int64_t h = x.dim(-2), w = x.dim(-1);
  if (h == oh && w == ow) return x.reshape({h, w}).clone();
  Tensor y = Tensor::empty({1, 1, oh, ow}, DType::F32, x.name());
  ops::resize_bilinear(ctx, x.reshape({1, 1, h, w}), y, /*align_corners=*/true);
  return y.reshape({oh, ow});
}

}  // namespace

void postprocess(ops::Context& ctx, const models::ModelConfig& cfg, const models::ModelOutputs& out,
                 const RunOptions& options, DepthResult& res) {
  DACPP_CHECK(out.depth.rank() == 3 && out.depth.dim(0) == 1, ErrorCode::Internal, "postprocess: depth ",
              shape_str(out.depth.shape()), ", expected [1, h, w]");
  const int64_t ph = out.depth.dim(1), pw = out.depth.dim(2);
  const int64_t sh = res.source_height, sw = res.source_width;
  if (cfg.kind == models::ModelKind::Da2) {
    res.depth = resized_copy(ctx, out.depth, sh, sw);
    res.units = cfg.metric ? "metres" : "relative-disparity";
    return;
  }
  Tensor depth = out.depth.reshape({ph, pw}).clone();
  if (out.sky.defined()) pipeline::fill_sky_depth(depth, out.sky.reshape({ph, pw}));
  res.units = "relative-depth";
  if (cfg.metric) {
    res.units = "focal-normalised";
    if (options.focal_px > 0) {
      const double f = options.focal_px * 0.5 * (static_cast<double>(ph) / sh + static_cast<double>(pw) / sw);
      const float k = static_cast<float>(f / 300.0);
      float* d = depth.data<float>();
      for (int64_t i = 0; i < depth.numel(); ++i) d[i] *= k;
      res.units = "metres";
    }
  }
  const bool back = options.resize_to_input;
  res.depth = back ? resized_copy(ctx, depth.reshape({1, ph, pw}), sh, sw) : depth;
  if (out.sky.defined()) res.sky = resized_copy(ctx, out.sky, back ? sh : ph, back ? sw : pw);
}

void postprocess_view(ops::Context& ctx, const models::ModelOutputs& out, int64_t view, const RunOptions& options,
                      DepthResult& res) {
  DACPP_CHECK(out.depth.rank() == 3 && out.conf.defined() && view >= 0 && view < out.depth.dim(0),
              ErrorCode::Internal, "postprocess: view ", view, " of depth ", shape_str(out.depth.shape()));
  const int64_t ph = out.depth.dim(1), pw = out.depth.dim(2);
  const bool back = options.resize_to_input;
  const int64_t oh = back ? res.source_height : ph, ow = back ? res.source_width : pw;
  res.depth = resized_copy(ctx, out.depth.slice0(view, view + 1), oh, ow);
  res.conf = resized_copy(ctx, out.conf.slice0(view, view + 1), oh, ow);
  res.units = out.metres ? "metres" : "relative-depth";
  if (out.extrinsics.defined()) {
    res.has_pose = true;
    const float* e = out.extrinsics.data<float>() + view * 12;
    const float* k = out.intrinsics.data<float>() + view * 9;
    for (size_t i = 0; i < 12; ++i) res.extrinsics[i] = e[i];
    for (size_t i = 0; i < 9; ++i) res.intrinsics[i] = k[i];
  }
  if (out.rays.defined()) {
    res.rays = out.rays.slice0(view, view + 1).clone();
    res.rays = res.rays.reshape({out.rays.dim(1), out.rays.dim(2), out.rays.dim(3)});
    res.ray_conf = out.ray_conf.slice0(view, view + 1).clone().reshape({out.ray_conf.dim(1), out.ray_conf.dim(2)});
  }
}

}  // namespace dacpp
