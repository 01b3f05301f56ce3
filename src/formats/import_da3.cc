// DA3 checkpoints (ByteDance-Seed/Depth-Anything-3, `model.safetensors` keys `model.*`): any-view S/B/L/G
// (DualDPT head, camera token, qk-norm, cam_dec, GS head for giant), mono/metric large (DPT with a sky branch), and
// nested giant + metric (`model.da3.*` + `model.da3_metric.*`, the metric branch under m_vit / m_head).
// spec/models.md §1a, §1b, §1d; spec/gguf-compat.md §1.2-1.3.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "formats/dequant.h"
#include "formats/import_internal.h"
#include "formats/tensor_names.h"

namespace dacpp::import_detail {
namespace {

struct AnyViewRule {
  int64_t depth;
  std::vector<int32_t> out_layers;
  int start;  // alt / rope / qk-norm start
};

AnyViewRule any_view_rule(const SourceIndex& src, int64_t depth) {
  switch (depth) {
    case 12: return {12, {5, 7, 9, 11}, 4};
    case 24: return {24, {11, 15, 19, 23}, 8};
    case 40: return {40, {19, 27, 33, 39}, 13};
    default:
      src.fail("no any-view out_layers rule for a backbone of depth " + std::to_string(depth) +
               " (expected 12, 24 or 40)");
  }
}

void write_head_meta(ModelBuilder& b, const KeyFn& key, const HeadDims& d) {
  b.set_u32(key("head.features"), static_cast<uint32_t>(d.features));
  b.set_i32_array(key("head.out_channels"), d.out_channels);
  b.set_u32(key("head.output_dim"), static_cast<uint32_t>(d.out_dim));
  b.set_u32(key("head.down_ratio"), 1);
  b.set_string(key("head.activation"), "exp");
  b.set_string(key("head.conf_activation"), "expp1");
}

// DA3 mono/metric: DPT head with sky branch, no camera token. `key`/prefixes select main or nested-metric names.
void map_mono(SourceIndex& src, const std::string& prefix, const std::string& vit_out, const std::string& head_out,
              const KeyFn& key, ModelBuilder& b) {
  const VitDims vd = infer_vit(src, prefix + "backbone.pretrained.");
  VitSpec vs;
  vs.src = prefix + "backbone.pretrained.";
  vs.out = vit_out;
  vs.init_values = 0.0f;
  vs.out_layers = da2_out_layers(src, vd.depth);
  map_vit(src, vs, vd, b);
  HeadSpec hs;
  hs.src = prefix + "head.";
  hs.out = head_out;
  hs.dim_in = vd.embed;
  hs.sky = true;
  const HeadDims hd = infer_head(src, hs);
  map_head(src, hs, hd, b);
  write_vit_meta(b, key, vs, vd);
  write_head_meta(b, key, hd);
  b.set_bool(key("head.pos_embed"), false);
  b.set_string(key("head.sky_activation"), "relu");
  b.set_string(key("head.norm_type"), "idt");
}

void map_cam_dec(SourceIndex& src, const std::string& p, int64_t dim, ModelBuilder& b) {
  const std::pair<const char*, const char*> parts[] = {
      {"backbone.0", "bb0"}, {"backbone.2", "bb2"}, {"fc_t", "fc_t"}, {"fc_qvec", "fc_q"}, {"fc_fov.0", "fc_fov"}};
  const int64_t outs[] = {dim, dim, 3, 4, 2};
  for (int i = 0; i < 5; ++i) {
    const std::string from = p + parts[i].first;
    b.tensor(names::cam(std::string(parts[i].second) + ".weight"), src.take(from + ".weight", {outs[i], dim}));
    b.tensor(names::cam(std::string(parts[i].second) + ".bias"), src.take(from + ".bias", {outs[i]}));
  }
  b.set_u32(names::key("cam.dim_in"), static_cast<uint32_t>(dim));
}

// A parameter that is checked but not converted: a float dtype and finite values, else InvalidModel naming it.
void check_float_finite(const SourceIndex& src, const TensorRecord& r) {
  if (r.dtype != DType::F32 && r.dtype != DType::F16 && r.dtype != DType::BF16)
    src.fail("parameter '" + r.name + "' has dtype " + dtype_name(r.dtype) + ", expected f32, f16 or bf16");
  constexpr int64_t kChunk = 4096;
  float buf[kChunk];
  const int64_t n = shape_numel(r.shape);
  const auto* bytes = static_cast<const uint8_t*>(r.data);
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    dequantize_row(r.dtype, bytes + dtype_nbytes(r.dtype, i0), buf, m);
    for (int64_t i = 0; i < m; ++i)
      if (!std::isfinite(buf[i]))
        src.fail(str_cat("parameter '", r.name, "' holds a non-finite value (", buf[i], ") at flat index ", i0 + i,
                         " of ", n, "; the weights are corrupt"));
  }
}

// Pose conditioning (model/cam_enc.py CameraEnc: pose_branch Mlp(9 → E/2 → E), token_norm, a trunk of 4 ViT blocks
// of width E with MLP ×4 and LayerScale, trunk_norm; E = the backbone width, since its output replaces the camera
// token). Upstream runs it only when the caller gives poses, which dacpp does not implement, so it is never
// converted (spec/gguf-compat.md §1.3). The official network builds it whenever it has cam_dec and its checkpoints
// carry it, so a missing, misshapen, integer or non-finite parameter marks a corrupt checkpoint: each is checked
// here, then dropped.
constexpr int kCamEncBlocks = 4;

void check_cam_enc(SourceIndex& src, const std::string& p, int64_t e) {
  using Params = std::vector<std::pair<std::string, Shape>>;
  const Params head = {
      {"pose_branch.fc1.weight", {e / 2, 9}},
      {"pose_branch.fc1.bias", {e / 2}},
      {"pose_branch.fc2.weight", {e, e / 2}},
      {"pose_branch.fc2.bias", {e}},
      {"token_norm.weight", {e}},
      {"token_norm.bias", {e}},
      {"trunk_norm.weight", {e}},
      {"trunk_norm.bias", {e}},
  };
  const Params block = {
      {"norm1.weight", {e}},
      {"norm1.bias", {e}},
      {"attn.qkv.weight", {3 * e, e}},
      {"attn.qkv.bias", {3 * e}},
      {"attn.proj.weight", {e, e}},
      {"attn.proj.bias", {e}},
      {"ls1.gamma", {e}},
      {"norm2.weight", {e}},
      {"norm2.bias", {e}},
      {"mlp.fc1.weight", {4 * e, e}},
      {"mlp.fc1.bias", {4 * e}},
      {"mlp.fc2.weight", {e, 4 * e}},
      {"mlp.fc2.bias", {e}},
      {"ls2.gamma", {e}},
  };
  for (const auto& [leaf, shape] : head) check_float_finite(src, src.take(p + leaf, shape));
  for (int i = 0; i < kCamEncBlocks; ++i)
    for (const auto& [leaf, shape] : block)
      check_float_finite(src, src.take(p + "trunk." + std::to_string(i) + "." + leaf, shape));
}

void map_gs(SourceIndex& src, const std::string& p, int64_t dim_in, ModelBuilder& b) {
  HeadSpec gs;
  gs.src = p;
  gs.out = "gs";
  gs.dim_in = dim_in;
  gs.merger = true;
  const HeadDims d = infer_head(src, gs);
  map_head(src, gs, d, b);
  b.set_u32(names::key("gs.output_dim"), static_cast<uint32_t>(d.out_dim));
  b.set_u32(names::key("gs.features"), static_cast<uint32_t>(d.features));
  b.set_i32_array(names::key("gs.out_channels"), d.out_channels);
  b.set_u32(names::key("gs.sh_degree"), 2);
  b.set_f32(names::key("gs.scale_min"), 1e-5f);
  b.set_f32(names::key("gs.scale_max"), 30.0f);
  b.set_bool(names::key("gs.pred_offset_depth"), true);
  b.set_bool(names::key("gs.pred_offset_xy"), true);
  b.set_bool(names::key("gs.pred_color"), false);
}

// DA3 any-view: camera token, alternating attention with RoPE and qk-norm from `start`, DualDPT on 2E tokens.
void map_any_view(SourceIndex& src, const std::string& prefix, const ImportOptions& opt, ModelBuilder& b) {
  const VitDims vd = infer_vit(src, prefix + "backbone.pretrained.");
  const AnyViewRule rule = any_view_rule(src, vd.depth);
  VitSpec vs;
  vs.src = prefix + "backbone.pretrained.";
  vs.out = "vit";
  vs.camera_token = true;
  vs.alt_start = vs.rope_start = vs.qknorm_start = rule.start;
  vs.cat_token = true;
  vs.init_values = 0.0f;
  vs.out_layers = rule.out_layers;
  map_vit(src, vs, vd, b);
  HeadSpec hs;
  hs.src = prefix + "head.";
  hs.out = "head";
  hs.dim_in = 2 * vd.embed;
  hs.norm = true;
  hs.aux = src.has_prefix(hs.src + "scratch.refinenet1_aux.");
  hs.keep_aux = opt.with_aux;
  const HeadDims hd = infer_head(src, hs);
  map_head(src, hs, hd, b);
  write_vit_meta(b, names::key, vs, vd);
  write_head_meta(b, names::key, hd);
  b.set_bool(names::key("head.pos_embed"), true);
  b.set_string(names::key("head.norm_type"), "layer");
  if (hs.aux && hs.keep_aux) {
    b.set_bool(names::key("head.has_aux"), true);
    b.set_u32(names::key("head.aux_ray_dim"), 6);
    b.set_u32(names::key("head.aux_levels"), 4);
  }
  if (src.has_prefix(prefix + "cam_dec.")) {
    map_cam_dec(src, prefix + "cam_dec.", 2 * vd.embed, b);
    check_cam_enc(src, prefix + "cam_enc.", vd.embed);
  }
  if (src.has_prefix(prefix + "gs_head.")) map_gs(src, prefix + "gs_head.", 2 * vd.embed, b);
}

}  // namespace

void import_da3(SourceIndex& src, const ImportOptions& opt, const std::string& model_name, ModelBuilder& b) {
  write_common_meta(b, names::kArchDA3, opt.name);
  write_img_meta(b, /*da3=*/true);
  const bool nested = model_name.rfind("da3nested", 0) == 0;
  const bool mono = model_name.rfind("da3mono", 0) == 0 || model_name.rfind("da3metric", 0) == 0;
  if (nested && !opt.nested_metric) {
    map_any_view(src, "model.da3.", opt, b);
    src.ignore_prefix("model.da3_metric.");
  } else if (nested) {
    map_mono(src, "model.da3_metric.", "m_vit", "m_head", names::metric_key, b);
    src.ignore_prefix("model.da3.");
  } else if (mono) {
    map_mono(src, "model.", "vit", "head", names::key, b);
  } else if (model_name.rfind("da3-", 0) == 0) {
    map_any_view(src, "model.", opt, b);
  } else {
    src.fail("unknown DA3 model_name '" + model_name +
             "' (expected da3-small/base/large/giant, da3mono-large, da3metric-large or da3nested-giant-large)");
  }
  src.check_all_used();
}

}  // namespace dacpp::import_detail
