#include "models/dpt_head.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "formats/tensor_names.h"
#include "models/dpt_common.h"
#include "ops/elementwise.h"
#include "ops/resize_rows.h"
#include "ops/upsample_conv_head.h"

namespace dacpp::models {
namespace {

constexpr float kHeadNormEps = 1e-5f;
constexpr int64_t kHeadHidden = 32;  // head_features_2 upstream
constexpr int64_t kBandBytes = int64_t{4} << 20;  // upsampled rows per band of the output stage

// Whether stages 0 and 1 run their transposed conv and layer_rn folded (layers::ResizeConvFold): DACPP_RESIZE_FOLD=1
// or 0 says so; by default on the CPU (DA2-L: 22 GFLOP fewer) and not on a GPU, where it is not measured yet.
bool resize_fold_on(const ModelFile& mf) {
  const char* e = std::getenv("DACPP_RESIZE_FOLD");
  if (e != nullptr && (std::string(e) == "0" || std::string(e) == "1")) return std::string(e) == "1";
  return mf.placement() == nullptr || mf.placement()->on_host();
}

}  // namespace

DptHead::DptHead(const ModelFile& mf, const DptHeadSpec& spec, const std::string& p) : spec_(spec) {
  const HeadConfig& h = spec.head;
  const int64_t f = h.features, c = spec.in_dim;
  const auto& oc = h.out_channels;
  if (h.has_norm) norm_.emplace(mf, names::head(p, "norm"), c, kHeadNormEps);
  // Folded stages read their two convs' weights into the fold alone: the plain layers are not made (nor placed).
  const bool fold = resize_fold_on(mf);
  for (int s = 0; s < 4; ++s) {
    projects_.emplace_back(mf, names::head(p, "proj." + std::to_string(s)), detail::dpt_conv(c, oc[s], 1, 1));
    if (!fold || s >= 2)
      layer_rn_[s].emplace(mf, names::head(p, "scratch.layer" + std::to_string(s + 1) + "_rn"),
                           detail::dpt_conv(oc[s], f, 3, 1, layers::Bias::None));
  }
  if (fold) {
    ops::Context cpu;
    fold_[0].emplace(mf, cpu, names::head(p, "resize.0"), names::head(p, "scratch.layer1_rn"), oc[0], oc[0], f, 4);
    fold_[1].emplace(mf, cpu, names::head(p, "resize.1"), names::head(p, "scratch.layer2_rn"), oc[1], oc[1], f, 2);
  } else {
    resize0_.emplace(mf, names::head(p, "resize.0"), oc[0], oc[0], /*kernel=*/4);
    resize1_.emplace(mf, names::head(p, "resize.1"), oc[1], oc[1], /*kernel=*/2);
  }
  resize3_.emplace(mf, names::head(p, "resize.3"), detail::dpt_conv(oc[3], oc[3], 3, 2));
  for (int level = 1; level <= 4; ++level)
    refine_.emplace_back(mf, names::head_rn(p, level, false, "rc1"), names::head_rn(p, level, false, "rc2"),
                         names::head_rn(p, level, false, "out"), f, /*lateral_unit=*/level != 4);
  out1_.emplace(mf, names::head(p, "scratch.out1"), detail::dpt_conv(f, f / 2, 3, 1));
  out2a_.emplace(mf, names::head(p, "scratch.out2a"), detail::dpt_conv(f / 2, kHeadHidden, 3, 1));
  out2b_.emplace(mf, names::head(p, "scratch.out2b"), detail::dpt_conv(kHeadHidden, 1, 1, 1));
  if (h.has_sky) {
    sky2a_.emplace(mf, names::head(p, "scratch.sky_out2a"), detail::dpt_conv(f / 2, kHeadHidden, 3, 1));
    sky2b_.emplace(mf, names::head(p, "scratch.sky_out2b"), detail::dpt_conv(kHeadHidden, 1, 1, 1));
  }
  if (spec.activation == DepthActivation::SigmoidMax) {
    max_depth_ = Tensor::from_vector({1}, {h.max_depth});
    if (mf.placement() != nullptr) max_depth_ = mf.placement()->place(max_depth_, /*keep_f32=*/true);
  }
}

Tensor DptHead::stage(RunState& rs, int s, const Tensor& tokens, int64_t gh, int64_t gw) const {
  // tokens: [B, P, C] → project (1×1 on the tokens): [B, P, oc_s] → map: [B, oc_s, gh, gw] → resize → rn:
  // [B, F, h_s, w_s]. Stages 0 and 1 may hand the projected tokens to their transposed conv as they are (the map
  // in planes would only be its GEMM's input, and a slow one on a GPU: ops::conv_transpose2d_tokens).
  layers::Exec& ex = rs.ex;
  const int64_t b = tokens.dim(0);
  Tensor rn = ex.alloc({b, spec_.head.features, detail::dpt_stage_size(s, gh), detail::dpt_stage_size(s, gw)}, "dpt.rn");
  layers::ArenaScope scope(ex.arena);
  Tensor t = tokens;
  if (norm_) t = norm_->forward(ex, tokens);
  const layers::Conv2d& project = projects_[static_cast<size_t>(s)];
  if (s < 2 && fold_[s]) {
    fold_[s]->forward_into(ex, project.forward_token_rows(ex, t), gh, gw, rn);
    return rn;
  }
  const layers::ConvTranspose2d* resize = s == 0 ? &*resize0_ : s == 1 ? &*resize1_ : nullptr;
  Tensor x;
  if (resize != nullptr && resize->prefers_tokens(ex.ctx)) {
    x = resize->forward_tokens(ex, project.forward_token_rows(ex, t), gh, gw);
  } else {
    x = project.forward_tokens(ex, t, gh, gw);  // layers::Conv2d says why
    if (resize != nullptr) x = resize->forward(ex, x);
    if (s == 3) x = resize3_->forward(ex, x);
  }
  layer_rn_[s]->forward_into(ex, x, rn);
  return rn;
}

void DptHead::activate(RunState& rs, const Tensor& logits, Tensor& y, bool sky) const {
  layers::Exec& ex = rs.ex;
  if (sky) return ops::unary(ex.ctx, ops::Unary::Relu, logits, y);
  switch (spec_.activation) {
    case DepthActivation::Relu: ops::unary(ex.ctx, ops::Unary::Relu, logits, y); break;
    case DepthActivation::Exp: ops::unary(ex.ctx, ops::Unary::Exp, logits, y); break;
    case DepthActivation::SigmoidMax:
      ops::unary(ex.ctx, ops::Unary::Sigmoid, logits, y);
      ops::mul(ex.ctx, y, max_depth_, y);
      break;
  }
}

void DptHead::band(RunState& rs, const Tensor& o1, int64_t r0, int64_t r1, HeadOutputs& out) const {
  // Output rows [r0, r1): upsample rows [a, e) = [r0 − 1, r1 + 1) ∩ [0, H) of o1 → out2a (3×3, ReLU) → out2b
  // (1×1) → activation. The halo rows make the 3×3 conv exact on [r0, r1); its padded edge rows are dropped.
  layers::Exec& ex = rs.ex;
  layers::ArenaScope scope(ex.arena);
  const int64_t b = o1.dim(0), oh = out.depth.dim(2), ow = out.depth.dim(3);
  const int64_t a = std::max<int64_t>(r0 - 1, 0), e = std::min<int64_t>(r1 + 1, oh);
  Tensor up = ex.alloc({b, o1.dim(1), e - a, ow}, "dpt.up_band");
  ops::resize_bilinear_rows(ex.ctx, o1, up, a, oh, /*align_corners=*/true);
  for (int branch = 0; branch < (sky2a_ ? 2 : 1); ++branch) {
    const bool sky = branch == 1;
    layers::ArenaScope inner(ex.arena);
    Tensor h = (sky ? *sky2a_ : *out2a_).forward(ex, up, ops::Activation::Relu);
    Tensor logits = (sky ? *sky2b_ : *out2b_).forward(ex, h);
    Tensor& dst = sky ? out.sky : out.depth;
    for (int64_t i = 0; i < b; ++i) {
      Tensor from = logits.offset_view((i * (e - a) + (r0 - a)) * ow, {r1 - r0, ow});
      Tensor to = dst.offset_view((i * oh + r0) * ow, {r1 - r0, ow});
      activate(rs, from, to, sky);
    }
  }
}

bool DptHead::fused_output(RunState& rs, const Tensor& o1, HeadOutputs& out) const {
  layers::Exec& ex = rs.ex;
  if (!ops::upsample_conv_head_fused(ex.ctx, o1, out2a_->weight(), out.depth) ||
      (sky2a_ && !ops::upsample_conv_head_fused(ex.ctx, o1, sky2a_->weight(), out.sky)))
    return false;
  for (int branch = 0; branch < (sky2a_ ? 2 : 1); ++branch) {
    const bool sky = branch == 1;
    layers::ArenaScope scope(ex.arena);
    const layers::Conv2d& conv3 = sky ? *sky2a_ : *out2a_;
    const layers::Conv2d& conv1 = sky ? *sky2b_ : *out2b_;
    Tensor& dst = sky ? out.sky : out.depth;
    // ReLU and exp ride in the output stage's store; the metric head's sigmoid · max depth is a pass of its own.
    const ops::HeadFinal final = sky || spec_.activation == DepthActivation::Relu ? ops::HeadFinal::Relu
                                 : spec_.activation == DepthActivation::Exp       ? ops::HeadFinal::Exp
                                                                                  : ops::HeadFinal::None;
    if (final != ops::HeadFinal::None) {
      ops::upsample_conv_head(ex.ctx, o1, conv3.weight(), conv3.bias(), conv1.weight(), conv1.bias(), dst, final);
      continue;
    }
    Tensor logits = ex.alloc(dst.shape(), "dpt.logits");
    ops::upsample_conv_head(ex.ctx, o1, conv3.weight(), conv3.bias(), conv1.weight(), conv1.bias(), logits);
    activate(rs, logits, dst, sky);
  }
  return true;
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
  // path1 is at 2× rn1; o1 outlives the refinement temporaries (allocated before them).
  Tensor o1 = ex.alloc({b, out1_->out_channels(), 2 * detail::dpt_stage_size(0, gh), 2 * detail::dpt_stage_size(0, gw)}, "dpt.out1");
  {
    layers::ArenaScope refine_scope(ex.arena);
    // Stages 0-2 with their refinenets' lateral units depend neither on each other nor on the chain from stage 3:
    // on a GPU they run on lanes of their own beside it; each lane is joined where its maps are first needed. The
    // chain is the critical path: its kernels go first where the lanes' run beside them (lane0_first; ~1 % off
    // DA2-S / B, docs/PERFORMANCE.md version 1.16).
    detail::Reassembled r = detail::reassemble(
        rs, b, spec_.head.features, gh, gw,
        [&](RunState& stage_rs, int s) { return stage(stage_rs, s, feats[static_cast<size_t>(s)], gh, gw); }, refine_,
        /*lane0_first=*/true);
    // refinenet4 .. 2, each upsample adding the next refinenet's lateral branch: refinenet1 takes no lateral input.
    const Tensor path = detail::fuse_chain(rs, refine_, r.rn, r.branches.get());
    r.branches.reset();  // every lane joined: lane 0 from here on
    detail::refine1_into_out1(rs, refine_[0], path, *out1_, o1, "path1");
  }
  if (fused_output(rs, o1, out)) return out;
  // On the CPU the full-resolution maps (F/2 and 32 channels at P·gh × P·gw) are never materialised: bands of
  // ~kBandBytes. A GPU has the memory and prefers fewer, larger launches: one band.
  const int64_t row_bytes = b * o1.dim(1) * ow * static_cast<int64_t>(sizeof(float));
  const int64_t rows = ex.ctx.device().is_cpu() ? std::max<int64_t>(kBandBytes / std::max<int64_t>(row_bytes, 1), 16)
                                                 : oh;
  for (int64_t r0 = 0; r0 < oh; r0 += rows) band(rs, o1, r0, std::min(oh, r0 + rows), out);
  return out;
}

}  // namespace dacpp::models
