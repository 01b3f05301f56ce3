#include "models/model_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <vector>

#include "formats/nested_model_file.h"
#include "formats/tensor_names.h"

namespace dacpp::models {
namespace {

using names::key;

template <typename V>
void require(bool ok, const ModelFile& mf, const std::string& k, const V& value, const char* rule) {
  if (!ok)
    DACPP_THROW(ErrorCode::InvalidModel, "model '", mf.path(), "': metadata key '", k, "' = ", value, ": ", rule);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void parse_ffn(const ModelFile& mf, VitConfig& v) {
  const std::string fc1 = names::vit_block("vit", 0, "mlp_fc1.weight");
  const std::string w12 = names::vit_block("vit", 0, "mlp_w12.weight");
  const std::string k = key("vit.ffn_type");
  std::string type = mf.get_string_or(k, mf.has_tensor(w12) ? "swiglu" : "mlp");
  require(type == "mlp" || type == "swiglu", mf, k, type, "must be 'mlp' or 'swiglu'");
  v.ffn = type == "swiglu" ? layers::FfnKind::SwiGlu : layers::FfnKind::Mlp;
  const TensorRecord& r = mf.record(v.ffn == layers::FfnKind::SwiGlu ? w12 : fc1);
  if (r.shape.size() != 2 || r.shape[0] <= 0 || (v.ffn == layers::FfnKind::SwiGlu && r.shape[0] % 2 != 0))
    DACPP_THROW(ErrorCode::InvalidModel, "model '", mf.path(), "': tensor '", r.name, "' has shape ",
                shape_str(r.shape), ", expected [hidden", v.ffn == layers::FfnKind::SwiGlu ? "·2" : "", ", ",
                v.embed_dim, "]");
  v.ffn_hidden = v.ffn == layers::FfnKind::SwiGlu ? r.shape[0] / 2 : r.shape[0];
  // The hidden size is read off one tensor; its partner must agree, else name both (either may be the bad one).
  const std::string out = names::vit_block("vit", 0, v.ffn == layers::FfnKind::SwiGlu ? "mlp_w3.weight"
                                                                                      : "mlp_fc2.weight");
  if (mf.has_tensor(out)) {
    const Shape& o = mf.record(out).shape;
    if (o.size() != 2 || o[1] != v.ffn_hidden)
      DACPP_THROW(ErrorCode::InvalidModel, "model '", mf.path(), "': tensors '", r.name, "' ", shape_str(r.shape),
                  " and '", out, "' ", shape_str(o), " disagree on the FFN hidden size");
  }
}

// The ViT blocks of one network are uniform: a tensor present in some block (an optional bias, LayerScale) must be
// present in all of them. The layers accept such tensors when present, so without this check a file missing one
// block's bias would load and silently compute something else. qk-norm exists only from vit.qknorm_start on (DA3
// any-view); those blocks are checked by the layers themselves.
void check_uniform_blocks(const ModelFile& mf, const VitConfig& v) {
  const std::string prefix = names::vit("vit", "blk.");
  const int depth = static_cast<int>(v.depth);
  std::map<std::string, std::vector<bool>> seen;  // suffix -> which blocks have it
  for (const TensorRecord& r : mf.records()) {
    if (r.name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t dot = r.name.find('.', prefix.size());
    if (dot == std::string::npos) continue;
    const std::string idx = r.name.substr(prefix.size(), dot - prefix.size());
    if (idx.empty() || idx.size() > 4 || idx.find_first_not_of("0123456789") != std::string::npos) continue;
    const int b = std::stoi(idx);
    if (b >= depth) continue;
    auto& have = seen[r.name.substr(dot + 1)];
    have.resize(static_cast<size_t>(depth), false);
    have[static_cast<size_t>(b)] = true;
  }
  for (const auto& [suffix, have] : seen)
    for (int b = 0; b < depth; ++b) {
      const bool qk = suffix.rfind("attn_qnorm", 0) == 0 || suffix.rfind("attn_knorm", 0) == 0;
      if (qk && v.qknorm_start != -1) continue;
      DACPP_CHECK(have[static_cast<size_t>(b)], ErrorCode::InvalidModel, "model '", mf.path(), "': tensor '", prefix, b,
                  ".", suffix, "' is missing (other ViT blocks have '", suffix, "')");
    }
}

void parse_out_layers(const ModelFile& mf, VitConfig& v) {
  const std::string k = key("vit.out_layers");
  const std::vector<int32_t> ol = mf.get_i32_array(k);
  std::string s = "[";
  for (size_t i = 0; i < ol.size(); ++i) s += (i ? "," : "") + std::to_string(ol[i]);
  s += "]";
  require(ol.size() == 4, mf, k, s, "must have exactly 4 entries");
  for (size_t i = 0; i < 4; ++i) {
    require(ol[i] >= 0 && ol[i] < v.depth, mf, k, s, "every entry must be in [0, vit.depth)");
    require(i == 0 || ol[i] > ol[i - 1], mf, k, s, "entries must be strictly increasing");
    v.out_layers[i] = ol[i];
  }
}

VitConfig parse_vit(const ModelFile& mf, bool da3) {
  VitConfig v;
  v.embed_dim = mf.get_u32(key("vit.embed_dim"));
  v.depth = mf.get_u32(key("vit.depth"));
  v.num_heads = mf.get_u32(key("vit.num_heads"));
  v.head_dim = mf.get_u32(key("vit.head_dim"));
  require(v.embed_dim > 0, mf, key("vit.embed_dim"), v.embed_dim, "must be > 0");
  require(v.depth > 0, mf, key("vit.depth"), v.depth, "must be > 0");
  require(v.num_heads > 0, mf, key("vit.num_heads"), v.num_heads, "must be > 0");
  require(v.head_dim > 0 && v.head_dim * v.num_heads == v.embed_dim, mf, key("vit.head_dim"), v.head_dim,
          "must be > 0 with vit.num_heads · vit.head_dim == vit.embed_dim");
  v.patch_size = static_cast<int>(mf.get_u32_or(key("patch_size"), 14));
  require(v.patch_size > 0, mf, key("patch_size"), v.patch_size, "must be > 0");
  v.pos_embed_grid = static_cast<int>(mf.get_u32(key("vit.pos_embed_grid")));
  require(v.pos_embed_grid > 0, mf, key("vit.pos_embed_grid"), v.pos_embed_grid, "must be > 0");
  const uint32_t regs = mf.get_u32_or(key("vit.num_register_tokens"), 0);
  require(regs == 0, mf, key("vit.num_register_tokens"), regs, "register tokens are not supported");
  int* starts[] = {&v.alt_start, &v.rope_start, &v.qknorm_start};
  const char* start_keys[] = {"vit.alt_start", "vit.rope_start", "vit.qknorm_start"};
  for (size_t i = 0; i < 3; ++i) {
    // Alternating attention (DA3 any-view) comes with RoPE and qk-norm upstream: their starts must be stated, as the
    // default -1 (off) would build another network.
    const bool required = i > 0 && v.alt_start != -1;
    *starts[i] = required ? mf.get_i32(key(start_keys[i])) : mf.get_i32_or(key(start_keys[i]), -1);
    require(*starts[i] >= -1 && *starts[i] < v.depth, mf, key(start_keys[i]), *starts[i],
            "must be -1 (off) or a block index < vit.depth");
  }
  v.rope_freq = mf.get_f32_or(key("vit.rope_freq"), 100.f);
  require(std::isfinite(v.rope_freq) && v.rope_freq > 0, mf, key("vit.rope_freq"), v.rope_freq, "must be > 0");
  require(v.rope_start == -1 || v.head_dim % 4 == 0, mf, key("vit.head_dim"), v.head_dim,
          "must be a multiple of 4 for 2-D RoPE");
  v.cat_token = mf.get_bool_or(key("vit.cat_token"), da3 && v.alt_start != -1);
  v.ln_eps = mf.get_f32_or(key("vit.ln_eps"), 1e-6f);
  require(std::isfinite(v.ln_eps) && v.ln_eps > 0, mf, key("vit.ln_eps"), v.ln_eps, "must be > 0");
  v.final_norm_eps = da3 ? 1e-5f : v.ln_eps;
  v.interpolate_offset = mf.get_f32_or(key("vit.interpolate_offset"), 0.1f);
  require(std::isfinite(v.interpolate_offset) && v.interpolate_offset >= 0 && v.interpolate_offset < 1, mf,
          key("vit.interpolate_offset"), v.interpolate_offset, "must be in [0, 1)");
  parse_out_layers(mf, v);
  parse_ffn(mf, v);
  return v;
}

HeadConfig parse_head(const ModelFile& mf, bool da3) {
  HeadConfig h;
  h.features = mf.get_u32(key("head.features"));
  require(h.features > 0 && h.features % 2 == 0, mf, key("head.features"), h.features, "must be even and > 0");
  const std::string ok = key("head.out_channels");
  const std::vector<int32_t> oc = mf.get_i32_array(ok);
  require(oc.size() == 4, mf, ok, oc.size(), "must have exactly 4 entries");
  for (size_t i = 0; i < 4; ++i) {
    require(oc[i] > 0, mf, ok, oc[i], "every entry must be > 0");
    h.out_channels[i] = oc[i];
  }
  const std::string out2b = names::head("head", "scratch.out2b.weight");
  // with_rank: a ggml-written file drops the leading 1 of a [1, 32, 1, 1] kernel (formats/model_file.h).
  const Shape s = with_rank(mf.record(out2b).shape, 4);
  if (s.size() != 4 || s[0] <= 0)
    DACPP_THROW(ErrorCode::InvalidModel, "model '", mf.path(), "': tensor '", out2b, "' has shape ",
                shape_str(mf.record(out2b).shape), ", expected [output_dim, 32, 1, 1]");
  h.output_dim = s[0];
  h.has_norm = mf.has_tensor(names::head("head", "norm.weight"));
  h.has_sky = mf.has_tensor(names::head("head", "scratch.sky_out2b.weight"));
  h.has_aux = mf.has_tensor(names::head_rn("head", 1, true, "out.weight"));
  h.pos_embed = mf.get_bool_or(key("head.pos_embed"), da3 && !h.has_sky);
  h.max_depth = mf.get_f32_or(key("head.max_depth"), 0.f);
  require(std::isfinite(h.max_depth) && h.max_depth >= 0, mf, key("head.max_depth"), h.max_depth,
          "must be >= 0");
  return h;
}

ImageConfig parse_img(const ModelFile& mf, bool da3) {
  ImageConfig c;
  for (const char* name : {"img.mean", "img.std"}) {
    const std::string k = key(name);
    if (!mf.has_key(k)) continue;
    const std::vector<float> v = mf.get_f32_array(k);
    require(v.size() == 3, mf, k, v.size(), "must have 3 entries (RGB)");
    const bool is_std = std::string(name) == "img.std";
    for (size_t i = 0; i < 3; ++i) {
      require(std::isfinite(v[i]) && (!is_std || v[i] > 0), mf, k, v[i], is_std ? "must be > 0" : "must be finite");
      (is_std ? c.std : c.mean)[i] = v[i];
    }
  }
  const std::string mode = mf.get_string_or(key("img.resize_mode"), da3 ? "upper_bound" : "lower_bound");
  require(mode.rfind("upper", 0) == 0 || mode.rfind("lower", 0) == 0, mf, key("img.resize_mode"), mode,
          "must be 'upper_bound' or 'lower_bound'");
  c.resize_mode = mode.rfind("lower", 0) == 0 ? ResizeMode::LowerBound : ResizeMode::UpperBound;
  c.resize_target = static_cast<int>(mf.get_u32_or(key("img.resize_target"), da3 ? 504 : 518));
  require(c.resize_target > 0 && c.resize_target <= 8192, mf, key("img.resize_target"), c.resize_target,
          "must be in (0, 8192]");
  return c;
}

ModelKind detect_kind(const ModelFile& mf, const ModelConfig& c) {
  if (c.arch == names::kArchDA2) return ModelKind::Da2;
  if (holds_metric_branch(mf)) return ModelKind::Da3Nested;
  // The plain DPT head (mono/metric) has no input norm; DualDPT (any-view) has one. Keying on the norm rather than
  // on the sky branch makes a mono file with a missing sky tensor or a misshapen output an InvalidModel naming it.
  if (!c.head.has_norm) {
    // Any-view metadata (alternating attention, UV embedding) without the DualDPT input norm: the tensor is missing.
    DACPP_CHECK(c.vit.alt_start == -1 && !c.head.pos_embed, ErrorCode::InvalidModel, "model '", mf.path(),
                "': tensor '", names::head("head", "norm.weight"), "' is missing (the DualDPT head of a DA3 any-view "
                "model, which metadata '", key("vit.alt_start"), "' / '", key("head.pos_embed"), "' declare)");
    return ModelKind::Da3Mono;
  }
  return ModelKind::Da3AnyView;
}

}  // namespace

const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::Da2: return "DA2";
    case ModelKind::Da3Mono: return "DA3 mono/metric";
    case ModelKind::Da3AnyView: return "DA3 any-view";
    case ModelKind::Da3Nested: return "DA3 nested";
  }
  return "?";
}

ModelConfig ModelConfig::from_file(const ModelFile& mf) {
  ModelConfig c;
  c.arch = mf.get_string(key("arch"));
  require(c.arch == names::kArchDA2 || c.arch == names::kArchDA3, mf, key("arch"), c.arch,
          "must be 'depthanything2' or 'depthanything3'");
  const bool da3 = c.arch == names::kArchDA3;
  c.checkpoint_name = mf.get_string_or(key("checkpoint_name"), "");
  if (holds_metric_branch(mf) && is_metric_branch_only(mf))
    DACPP_THROW(ErrorCode::Unsupported, "model '", mf.path(), "' ('", c.checkpoint_name, "') is the metric branch ",
                "of a DA3 nested model (m_vit.* / m_head.*), which does not run alone: load the any-view file with ",
                "this one as its metric model (CLI: -m ANYVIEW.gguf --metric-model ", mf.path(), ")");
  c.vit = parse_vit(mf, da3);
  c.head = parse_head(mf, da3);
  c.img = parse_img(mf, da3);
  c.kind = detect_kind(mf, c);
  c.metric = da3 ? upper(c.checkpoint_name).find("METRIC") != std::string::npos : c.head.max_depth > 0;
  if (c.kind == ModelKind::Da2 || c.kind == ModelKind::Da3Mono) {
    require(!c.head.pos_embed, mf, key("head.pos_embed"), "true", "the DPT head of this model has no UV embedding");
    require(c.head.output_dim == 1, mf, names::head("head", "scratch.out2b.weight") + " output channels",
            c.head.output_dim, "must be 1");
    require(!c.vit.cat_token && c.vit.alt_start == -1, mf, key("vit.alt_start"), c.vit.alt_start,
            "a single-view model has no alternating attention or cat_token");
  }
  if (c.kind == ModelKind::Da2) require(!c.head.has_sky, mf, key("arch"), c.arch, "DA2 has no sky head");
  if (c.kind == ModelKind::Da3AnyView) {
    require(c.head.output_dim == 2, mf, names::head("head", "scratch.out2b.weight") + " output channels",
            c.head.output_dim, "must be 2 (depth, confidence) for a DualDPT head");
    require(c.vit.alt_start >= 1 && c.vit.cat_token, mf, key("vit.alt_start"), c.vit.alt_start,
            "an any-view model needs alternating attention (alt_start >= 1) with cat_token");
    require(!c.head.has_sky, mf, key("arch"), c.arch, "a DualDPT head has no sky branch");
  }
  // Any camera-decoder tensor declares the decoder, so one missing tensor is named rather than turning pose off.
  const std::string cam_prefix = names::cam("");
  c.has_camera_decoder = std::any_of(mf.records().begin(), mf.records().end(), [&](const TensorRecord& r) {
    return r.name.compare(0, cam_prefix.size(), cam_prefix) == 0;
  });
  check_uniform_blocks(mf, c.vit);
  return c;
}

ModelCapabilities ModelConfig::capabilities() const {
  ModelCapabilities k;
  const bool any_view = kind == ModelKind::Da3AnyView || kind == ModelKind::Da3Nested;
  k.conf = any_view;
  k.pose = any_view && has_camera_decoder;
  k.sky = head.has_sky;
  k.rays = any_view && head.has_aux;
  k.metric = metric || kind == ModelKind::Da3Nested;
  k.multiview = any_view;
  return k;
}

}  // namespace dacpp::models
