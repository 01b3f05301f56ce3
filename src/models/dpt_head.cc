#include "models/dpt_head.h"

#include "formats/tensor_names.h"
#include "ops/elementwise.h"
#include "ops/permute.h"
#include "ops/resize.h"

namespace dacpp::models {
namespace {

constexpr float kHeadNormEps = 1e-5f;
constexpr int64_t kHeadHidden = 32;  // head_features_2 upstream

layers::ConvSpec conv(int64_t in, int64_t out, int k, int stride, layers::Bias bias = layers::Bias::Required) {
  layers::ConvSpec s;
  s.in = in;
  s.out = out;
  s.kernel = k;
  s.stride = stride;
  s.pad = k / 2;
  s.bias = bias;
  return s;
}

// Spatial size after resize stage s for a gh×gw grid: ×4, ×2, ×1, conv 3×3 s2 p1.
int64_t stage_size(int s, int64_t g) {
  switch (s) {
    case 0: return 4 * g;
    case 1: return 2 * g;
    case 2: return g;
    default: return (g - 1) / 2 + 1;
  }
}

}  // namespace

DptHead::DptHead(const ModelFile& mf, const DptHeadSpec& spec, const std::string& p) : spec_(spec) {
  const HeadConfig& h = spec.head;
  const int64_t f = h.features, c = spec.in_dim;
  const auto& oc = h.out_channels;
  if (h.has_norm) norm_.emplace(mf, names::head(p, "norm"), c, kHeadNormEps);
  for (int s = 0; s < 4; ++s) {
    projects_.emplace_back(mf, names::head(p, "proj." + std::to_string(s)), conv(c, oc[s], 1, 1));
    layer_rn_.emplace_back(mf, names::head(p, "scratch.layer" + std::to_string(s + 1) + "_rn"),
                           conv(oc[s], f, 3, 1, layers::Bias::None));
  }
  resize0_.emplace(mf, names::head(p, "resize.0"), oc[0], oc[0], /*kernel=*/4);
  resize1_.emplace(mf, names::head(p, "resize.1"), oc[1], oc[1], /*kernel=*/2);
  resize3_.emplace(mf, names::head(p, "resize.3"), conv(oc[3], oc[3], 3, 2));
  for (int level = 1; level <= 4; ++level)
    refine_.emplace_back(mf, names::head_rn(p, level, false, "rc1"), names::head_rn(p, level, false, "rc2"),
                         names::head_rn(p, level, false, "out"), f, /*lateral_unit=*/level != 4);
  out1_.emplace(mf, names::head(p, "scratch.out1"), conv(f, f / 2, 3, 1));
  out2a_.emplace(mf, names::head(p, "scratch.out2a"), conv(f / 2, kHeadHidden, 3, 1));
  out2b_.emplace(mf, names::head(p, "scratch.out2b"), conv(kHeadHidden, 1, 1, 1));
  if (h.has_sky) {
    sky2a_.emplace(mf, names::head(p, "scratch.sky_out2a"), conv(f / 2, kHeadHidden, 3, 1));
    sky2b_.emplace(mf, names::head(p, "scratch.sky_out2b"), conv(kHeadHidden, 1, 1, 1));
  }
  if (spec.activation == DepthActivation::SigmoidMax) max_depth_ = Tensor::from_vector({1}, {h.max_depth});
}

Tensor DptHead::stage(RunState& rs, int s, const Tensor& tokens, int64_t gh, int64_t gw) const {
  // tokens: [B, P, C] → map: [B, C, gh, gw] → project: [B, oc_s, gh, gw] → resize → rn: [B, F, h_s, w_s]
  layers::Exec& ex = rs.ex;
  const int64_t b = tokens.dim(0), c = spec_.in_dim;
  Tensor rn = ex.alloc({b, spec_.head.features, stage_size(s, gh), stage_size(s, gw)}, "dpt.rn");
  layers::ArenaScope scope(ex.arena);
  Tensor t = tokens;
  if (norm_) t = norm_->forward(ex, tokens);
  Tensor map = ex.alloc({b, c, gh * gw}, "dpt.map");
  ops::permute(ex.ctx, t, {0, 2, 1}, map);
  Tensor x = projects_[static_cast<size_t>(s)].forward(ex, map.reshape({b, c, gh, gw}));
  if (s == 0) x = resize0_->forward(ex, x);
  if (s == 1) x = resize1_->forward(ex, x);
  if (s == 3) x = resize3_->forward(ex, x);
  layer_rn_[static_cast<size_t>(s)].forward_into(ex, x, rn);
  return rn;
}

Tensor DptHead::branch(RunState& rs, const layers::Conv2d& a, const layers::Conv2d& b, const Tensor& x) const {
  // x: [B, F/2, H, W] → [B, 32, H, W] (ReLU) → [B, 1, H, W]
  layers::Exec& ex = rs.ex;
  Tensor y = ex.alloc({x.dim(0), 1, x.dim(2), x.dim(3)}, "dpt.logits");
  layers::ArenaScope scope(ex.arena);
  Tensor h = a.forward(ex, x, ops::Activation::Relu);
  b.forward_into(ex, h, y);
  return y;
}

HeadOutputs DptHead::forward(RunState& rs, const std::vector<Tensor>& feats, int64_t gh, int64_t gw) const {
  // feats: 4 × [B, gh·gw, C] → depth, sky: [B, 1, P·gh, P·gw]
  layers::Exec& ex = rs.ex;
  DACPP_CHECK(feats.size() == 4, ErrorCode::Internal, "dpt head: ", feats.size(), " feature maps, expected 4");
  for (const Tensor& t : feats)
    DACPP_CHECK(t.rank() == 3 && t.dim(1) == gh * gw && t.dim(2) == spec_.in_dim, ErrorCode::InvalidArgument,
                "dpt head: feature '", t.name(), "' has shape ", shape_str(t.shape()), ", expected [B, ", gh * gw,
                ", ", spec_.in_dim, "]");
  const int64_t b = feats[0].dim(0), oh = spec_.patch_size * gh, ow = spec_.patch_size * gw;
  HeadOutputs out;
  out.depth = ex.alloc({b, 1, oh, ow}, "depth");
  if (sky2a_) out.sky = ex.alloc({b, 1, oh, ow}, "sky");
  layers::ArenaScope scope(ex.arena);
  std::vector<Tensor> rn;
  for (int s = 0; s < 4; ++s) {
    rn.push_back(stage(rs, s, feats[static_cast<size_t>(s)], gh, gw));
    rs.dump("rn" + std::to_string(s + 1), rn.back());
  }
  Tensor path = refine_[3].forward(ex, rn[3], Tensor(), rn[2].dim(2), rn[2].dim(3));
  path = refine_[2].forward(ex, path, rn[2], rn[1].dim(2), rn[1].dim(3));
  path = refine_[1].forward(ex, path, rn[1], rn[0].dim(2), rn[0].dim(3));
  path = refine_[0].forward(ex, path, rn[0]);
  rs.dump("path1", path);
  Tensor o1 = out1_->forward(ex, path);
  Tensor up = ex.alloc({b, o1.dim(1), oh, ow}, "dpt.up");
  ops::resize_bilinear(ex.ctx, o1, up, /*align_corners=*/true);
  Tensor logits = branch(rs, *out2a_, *out2b_, up);
  switch (spec_.activation) {
    case DepthActivation::Relu: ops::unary(ex.ctx, ops::Unary::Relu, logits, out.depth); break;
    case DepthActivation::Exp: ops::unary(ex.ctx, ops::Unary::Exp, logits, out.depth); break;
    case DepthActivation::SigmoidMax:
      ops::unary(ex.ctx, ops::Unary::Sigmoid, logits, out.depth);
      ops::mul(ex.ctx, out.depth, max_depth_, out.depth);
      break;
  }
  if (sky2a_) ops::unary(ex.ctx, ops::Unary::Relu, branch(rs, *sky2a_, *sky2b_, up), out.sky);
  return out;
}

}  // namespace dacpp::models
