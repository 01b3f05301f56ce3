#include "models/dual_dpt_head.h"

#include <algorithm>

#include "formats/tensor_names.h"
#include "models/dpt_common.h"
#include "models/uv_embed.h"
#include "ops/elementwise.h"
#include "ops/permute.h"
#include "ops/resize_rows.h"
#include "ops/upsample_conv_head.h"

namespace dacpp::models {
namespace {

constexpr float kHeadNormEps = 1e-5f;
constexpr int64_t kHidden = 32;                      // head_features_2 upstream
constexpr int64_t kRayChannels = 7;                  // 6 ray + 1 confidence
constexpr int64_t kBandBytes = int64_t{4} << 20;     // upsampled rows per band of the main output stage
constexpr int kAuxConvs = 5;

std::vector<layers::FeatureFusionBlock> fusion_chain(const ModelFile& mf, const std::string& p, int64_t f, bool aux) {
  std::vector<layers::FeatureFusionBlock> chain;
  for (int level = 1; level <= 4; ++level)
    chain.emplace_back(mf, names::head_rn(p, level, aux, "rc1"), names::head_rn(p, level, aux, "rc2"),
                       names::head_rn(p, level, aux, "out"), f, /*lateral_unit=*/level != 4);
  return chain;
}

// A view of `shape` starting `offset` elements into t's buffer (no copy).
Tensor flat_view(const Tensor& t, int64_t offset, const Shape& shape) { return t.offset_view(offset, shape); }

// Rows [row, row + rows) of plane `plane` of a [planes, h, w]-shaped buffer, as a [rows, w] view.
Tensor plane_rows(const Tensor& t, int64_t plane, int64_t h, int64_t row, int64_t rows, int64_t w) {
  return flat_view(t, (plane * h + row) * w, {rows, w});
}

}  // namespace

DualDptHead::DualDptHead(const ModelFile& mf, const HeadConfig& h, int64_t in_dim, int patch_size,
                         const std::string& p)
    : cfg_(h), in_dim_(in_dim), patch_(patch_size), norm_(mf, names::head(p, "norm"), in_dim, kHeadNormEps) {
  const int64_t f = h.features;
  const auto& oc = h.out_channels;
  for (int s = 0; s < 4; ++s) {
    projects_.emplace_back(mf, names::head(p, "proj." + std::to_string(s)), detail::dpt_conv(in_dim, oc[s], 1, 1));
    layer_rn_.emplace_back(mf, names::head(p, "scratch.layer" + std::to_string(s + 1) + "_rn"),
                           detail::dpt_conv(oc[s], f, 3, 1, layers::Bias::None));
  }
  resize0_.emplace(mf, names::head(p, "resize.0"), oc[0], oc[0], /*kernel=*/4);
  resize1_.emplace(mf, names::head(p, "resize.1"), oc[1], oc[1], /*kernel=*/2);
  resize3_.emplace(mf, names::head(p, "resize.3"), detail::dpt_conv(oc[3], oc[3], 3, 2));
  refine_ = fusion_chain(mf, p, f, /*aux=*/false);
  out1_.emplace(mf, names::head(p, "scratch.out1"), detail::dpt_conv(f, f / 2, 3, 1));
  out2a_.emplace(mf, names::head(p, "scratch.out2a"), detail::dpt_conv(f / 2, kHidden, 3, 1));
  out2b_.emplace(mf, names::head(p, "scratch.out2b"), detail::dpt_conv(kHidden, 2, 1, 1));
  one_ = Tensor::from_vector({1}, {1.0f});
  if (mf.placement() != nullptr) one_ = mf.placement()->place(one_, /*keep_f32=*/true);
  if (!h.has_aux) return;
  refine_aux_ = fusion_chain(mf, p, f, /*aux=*/true);
  const int64_t chans[kAuxConvs + 1] = {f, f / 2, f, f / 2, f, f / 2};
  for (int k = 0; k < kAuxConvs; ++k)
    out1_aux_.emplace_back(mf, names::head(p, "scratch.out1_aux." + std::to_string(k)),
                           detail::dpt_conv(chans[k], chans[k + 1], 3, 1));
  out2a_aux_.emplace(mf, names::head(p, "scratch.out2a_aux"), detail::dpt_conv(f / 2, kHidden, 3, 1));
  aux_ln_.emplace(mf, names::head(p, "scratch.out2_aux_ln"), kHidden, kHeadNormEps);
  out2b_aux_.emplace(mf, names::head(p, "scratch.out2b_aux"), detail::dpt_conv(kHidden, kRayChannels, 1, 1));
}

Tensor DualDptHead::stage(RunState& rs, int s, const Tensor& tokens, int64_t gh, int64_t gw) const {
  // tokens: [S, P, 2E] → LN → project (1×1 on the tokens) → map [S, oc_s, gh, gw] → + UV → resize →
  // rn: [S, F, h_s, w_s]
  layers::Exec& ex = rs.ex;
  const int64_t b = tokens.dim(0);
  Tensor rn = ex.alloc({b, cfg_.features, detail::dpt_stage_size(s, gh), detail::dpt_stage_size(s, gw)}, "dualdpt.rn");
  layers::ArenaScope scope(ex.arena);
  Tensor t = norm_.forward(ex, tokens);
  Tensor x = projects_[static_cast<size_t>(s)].forward_tokens(ex, t, gh, gw);  // layers::Conv2d says why
  add_uv_embedding(rs, x, gh, static_cast<double>(gw) / static_cast<double>(gh));
  if (s == 0) x = resize0_->forward(ex, x);
  if (s == 1) x = resize1_->forward(ex, x);
  if (s == 3) x = resize3_->forward(ex, x);
  layer_rn_[static_cast<size_t>(s)].forward_into(ex, x, rn);
  return rn;
}

void DualDptHead::band(RunState& rs, const Tensor& o1, int64_t r0, int64_t r1, DualHeadOutputs& out) const {
  // Output rows [r0, r1): upsample rows [a, e) = [r0 − 1, r1 + 1) ∩ [0, H) of o1, + UV, out2a (3×3, ReLU), out2b
  // (1×1) → exp / exp + 1. The halo rows make the 3×3 conv exact on [r0, r1).
  layers::Exec& ex = rs.ex;
  layers::ArenaScope scope(ex.arena);
  const int64_t b = o1.dim(0), oh = out.depth.dim(1), ow = out.depth.dim(2);
  const int64_t a = std::max<int64_t>(r0 - 1, 0), e = std::min<int64_t>(r1 + 1, oh);
  Tensor up = ex.alloc({b, o1.dim(1), e - a, ow}, "dualdpt.up_band");
  ops::resize_bilinear_rows(ex.ctx, o1, up, a, oh, /*align_corners=*/true);
  add_uv_embedding(rs, up, oh, static_cast<double>(ow) / static_cast<double>(oh), a);
  Tensor hid = out2a_->forward(ex, up, ops::Activation::Relu);
  Tensor logits = out2b_->forward(ex, hid);  // [S, 2, e − a, W]
  for (int64_t i = 0; i < b; ++i) {
    Tensor d_from = plane_rows(logits, 2 * i, e - a, r0 - a, r1 - r0, ow);
    Tensor c_from = plane_rows(logits, 2 * i + 1, e - a, r0 - a, r1 - r0, ow);
    Tensor d_to = plane_rows(out.depth, i, oh, r0, r1 - r0, ow);
    Tensor c_to = plane_rows(out.conf, i, oh, r0, r1 - r0, ow);
    ops::unary(ex.ctx, ops::Unary::Exp, d_from, d_to);
    ops::unary(ex.ctx, ops::Unary::Exp, c_from, c_to);
    ops::add(ex.ctx, c_to, one_, c_to);
  }
}

bool DualDptHead::fused_output(RunState& rs, const Tensor& o1, DualHeadOutputs& out) const {
  // o1 [S, F/2, h, w] → upsample to H × W, + UV, out2a (3×3, ReLU), out2b (1×1) → exp / exp + 1, the H × W maps
  // never stored. The UV embedding is separable: its first half of channels (sin / cos of u) varies along a row only,
  // its second (of v) down a column only, so the op takes it as a [C, W] and a [C, H] table.
  layers::Exec& ex = rs.ex;
  const int64_t b = o1.dim(0), c = o1.dim(1), oh = out.depth.dim(1), ow = out.depth.dim(2);
  layers::ArenaScope scope(ex.arena);
  Tensor logits = ex.alloc({b, 2, oh, ow}, "dualdpt.logits");
  if (!ops::upsample_conv_head_fused(ex.ctx, o1, out2a_->weight(), logits)) return false;
  const double aspect = static_cast<double>(ow) / static_cast<double>(oh);
  const Tensor along = uv_embedding_host(c, oh, ow, aspect, 0, 1);  // [C, 1, W]: the u half is every row's
  const Tensor down = uv_embedding_host(c, oh, 1, aspect, 0, oh);   // [C, H, 1]: the v half is every column's
  ops::UpsampledAdd add{Tensor::zeros({c, ow}, DType::F32, "dualdpt.uv_cols"),
                        Tensor::zeros({c, oh}, DType::F32, "dualdpt.uv_rows")};
  for (int64_t k = 0; k < c / 2; ++k)
    std::copy(along.data<float>() + k * ow, along.data<float>() + (k + 1) * ow, add.cols.data<float>() + k * ow);
  for (int64_t k = c / 2; k < c; ++k)
    std::copy(down.data<float>() + k * oh, down.data<float>() + (k + 1) * oh, add.rows.data<float>() + k * oh);
  ops::upsample_conv_head(ex.ctx, o1, out2a_->weight(), out2a_->bias(), out2b_->weight(), out2b_->bias(), logits,
                          ops::HeadFinal::None, &add);
  for (int64_t i = 0; i < b; ++i) {
    Tensor d_to = plane_rows(out.depth, i, oh, 0, oh, ow);
    Tensor c_to = plane_rows(out.conf, i, oh, 0, oh, ow);
    ops::unary(ex.ctx, ops::Unary::Exp, plane_rows(logits, 2 * i, oh, 0, oh, ow), d_to);
    ops::unary(ex.ctx, ops::Unary::Exp, plane_rows(logits, 2 * i + 1, oh, 0, oh, ow), c_to);
    ops::add(ex.ctx, c_to, one_, c_to);
  }
  return true;
}

void DualDptHead::rays(RunState& rs, Tensor& aux1, DualHeadOutputs& out) const {
  // aux1: [S, F/2, h, w] → + UV → out2a_aux → LN(32) over channels → ReLU → out2b_aux → rays, ray_conf
  layers::Exec& ex = rs.ex;
  const int64_t b = aux1.dim(0), h = aux1.dim(2), w = aux1.dim(3);
  out.rays = ex.alloc({b, h, w, kRayChannels - 1}, "ray");
  out.ray_conf = ex.alloc({b, h, w}, "ray_conf");
  layers::ArenaScope scope(ex.arena);
  add_uv_embedding(rs, aux1, h, static_cast<double>(w) / static_cast<double>(h));
  Tensor hid = out2a_aux_->forward(ex, aux1);
  Tensor last = ex.alloc({b, h, w, kHidden}, "dualdpt.aux_hwc");
  ops::permute(ex.ctx, hid, {0, 2, 3, 1}, last);
  aux_ln_->forward_into(ex, last, last);
  ops::unary(ex.ctx, ops::Unary::Relu, last, last);
  ops::permute(ex.ctx, last, {0, 3, 1, 2}, hid);
  Tensor logits = out2b_aux_->forward(ex, hid);  // [S, 7, h, w]
  for (int64_t i = 0; i < b; ++i) {
    Tensor ray_from = flat_view(logits, i * kRayChannels * h * w, {kRayChannels - 1, h * w});
    Tensor ray_to = flat_view(out.rays, i * h * w * (kRayChannels - 1), {h * w, kRayChannels - 1});
    ops::permute(ex.ctx, ray_from, {1, 0}, ray_to);
    Tensor conf_from = plane_rows(logits, i * kRayChannels + kRayChannels - 1, h, 0, h, w);
    Tensor conf_to = plane_rows(out.ray_conf, i, h, 0, h, w);
    ops::unary(ex.ctx, ops::Unary::Exp, conf_from, conf_to);
    ops::add(ex.ctx, conf_to, one_, conf_to);
  }
}

DualHeadOutputs DualDptHead::forward(RunState& rs, const std::vector<Tensor>& feats, int64_t gh, int64_t gw,
                                     bool want_rays) const {
  layers::Exec& ex = rs.ex;
  DACPP_CHECK(feats.size() == 4, ErrorCode::Internal, "dualdpt head: ", feats.size(), " feature maps, expected 4");
  DACPP_CHECK(!want_rays || has_aux(), ErrorCode::Internal, "dualdpt head: rays asked of a head without aux");
  for (const Tensor& t : feats)
    DACPP_CHECK(t.rank() == 3 && t.dim(1) == gh * gw && t.dim(2) == in_dim_, ErrorCode::InvalidArgument,
                "dualdpt head: feature '", t.name(), "' has shape ", shape_str(t.shape()), ", expected [S, ",
                gh * gw, ", ", in_dim_, "]");
  const int64_t b = feats[0].dim(0), oh = patch_ * gh, ow = patch_ * gw;
  const int64_t fh = 2 * detail::dpt_stage_size(0, gh), fw = 2 * detail::dpt_stage_size(0, gw), half = cfg_.features / 2;
  DualHeadOutputs out;
  out.depth = ex.alloc({b, oh, ow}, "depth");
  out.conf = ex.alloc({b, oh, ow}, "depth_conf");
  Tensor o1 = ex.alloc({b, half, fh, fw}, "dualdpt.out1");
  Tensor aux1 = want_rays ? ex.alloc({b, half, fh, fw}, "dualdpt.out1_aux") : Tensor();
  {
    layers::ArenaScope scope(ex.arena);
    // Stages 0-2 and the main chain's lateral units on lanes of their own where they pay (detail::reassemble). No
    // node priorities for lane 0 here: the same-command A/B had DA3-BASE / LARGE ~1 % slower with them (version 1.16).
    detail::Reassembled r = detail::reassemble(
        rs, b, cfg_.features, gh, gw,
        [&](RunState& stage_rs, int s) { return stage(stage_rs, s, feats[static_cast<size_t>(s)], gh, gw); }, refine_,
        /*lane0_first=*/false);
    const std::vector<Tensor>& rn = r.rn;
    {
      layers::ArenaScope main_scope(ex.arena);
      // refinenet4 .. 2, each upsample adding the next refinenet's lateral branch: refinenet1 takes no lateral input.
      const Tensor path = detail::fuse_chain(rs, refine_, rn, r.branches.get());
      detail::refine1_into_out1(rs, refine_[0], path, *out1_, o1, nullptr);
    }
    r.branches.reset();  // every lane joined: lane 0 from here on
    if (want_rays) {
      layers::ArenaScope aux_scope(ex.arena);
      Tensor x = refine_aux_[0].forward(ex, detail::fuse_chain(rs, refine_aux_, rn, nullptr), Tensor(), 0, 0);
      for (int k = 0; k + 1 < kAuxConvs; ++k) x = out1_aux_[static_cast<size_t>(k)].forward(ex, x);
      out1_aux_.back().forward_into(ex, x, aux1);
    }
  }
  if (want_rays) rays(rs, aux1, out);
  if (fused_output(rs, o1, out)) return out;
  // The CPU runs the output stage in row bands of ~kBandBytes; a GPU has the memory and prefers fewer, larger
  // launches (and one UV table per geometry in the runner's cache): one band.
  const int64_t row_bytes = b * half * ow * static_cast<int64_t>(sizeof(float));
  const int64_t rows = ex.ctx.device().is_cpu() ? std::max<int64_t>(kBandBytes / std::max<int64_t>(row_bytes, 1), 16)
                                                : oh;
  for (int64_t r0 = 0; r0 < oh; r0 += rows) band(rs, o1, r0, std::min(oh, r0 + rows), out);
  return out;
}

}  // namespace dacpp::models
