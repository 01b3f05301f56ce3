// DINOv2 backbone mapping (spec/gguf-compat.md §1.3 "Backbone"), shared by DA2 and DA3.
#include <cmath>

#include "formats/import_internal.h"
#include "formats/tensor_names.h"

namespace dacpp::import_detail {
namespace {

constexpr int64_t kPatch = 14;
constexpr int64_t kHeadDim = 64;

std::string blk(const VitSpec& s, int64_t i, const std::string& leaf) {
  return s.src + "blocks." + std::to_string(i) + "." + leaf;
}

void linear(SourceIndex& src, ModelBuilder& b, const std::string& from, const std::string& to, int64_t out,
            int64_t in, bool bias = true) {
  b.tensor(to + ".weight", src.take(from + ".weight", {out, in}));
  if (bias) b.tensor(to + ".bias", src.take(from + ".bias", {out}));
}

void norm(SourceIndex& src, ModelBuilder& b, const std::string& from, const std::string& to, int64_t n) {
  b.tensor(to + ".weight", src.take(from + ".weight", {n}));
  b.tensor(to + ".bias", src.take(from + ".bias", {n}));
}

void map_block(SourceIndex& src, const VitSpec& s, const VitDims& d, int64_t i, ModelBuilder& b) {
  const int ii = static_cast<int>(i);
  const int64_t e = d.embed;
  auto out = [&](const std::string& leaf) { return names::vit_block(s.out, ii, leaf); };
  norm(src, b, blk(s, i, "norm1"), out("norm1"), e);
  linear(src, b, blk(s, i, "attn.qkv"), out("attn_qkv"), 3 * e, e, d.qkv_bias);
  linear(src, b, blk(s, i, "attn.proj"), out("attn_proj"), e, e);
  if (s.qknorm_start >= 0 && i >= s.qknorm_start) {
    norm(src, b, blk(s, i, "attn.q_norm"), out("attn_qnorm"), d.head_dim);
    norm(src, b, blk(s, i, "attn.k_norm"), out("attn_knorm"), d.head_dim);
  }
  b.tensor(out("ls1"), src.take(blk(s, i, "ls1.gamma"), {e}));
  norm(src, b, blk(s, i, "norm2"), out("norm2"), e);
  if (d.swiglu) {
    linear(src, b, blk(s, i, "mlp.w12"), out("mlp_w12"), 2 * d.mlp_hidden, e);
    linear(src, b, blk(s, i, "mlp.w3"), out("mlp_w3"), e, d.mlp_hidden);
  } else {
    linear(src, b, blk(s, i, "mlp.fc1"), out("mlp_fc1"), d.mlp_hidden, e);
    linear(src, b, blk(s, i, "mlp.fc2"), out("mlp_fc2"), e, d.mlp_hidden);
  }
  b.tensor(out("ls2"), src.take(blk(s, i, "ls2.gamma"), {e}));
}

}  // namespace

VitDims infer_vit(const SourceIndex& src, const std::string& p) {
  VitDims d;
  const Shape& pos = src.shape(p + "pos_embed");
  if (pos.size() != 3 || pos[0] != 1 || pos[1] < 2)
    src.fail("parameter '" + p + "pos_embed' has shape " + shape_str(pos) + ", expected [1, M*M+1, E]");
  d.embed = pos[2];
  d.grid = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(pos[1] - 1))));
  if (d.grid * d.grid != pos[1] - 1)
    src.fail("parameter '" + p + "pos_embed' has " + std::to_string(pos[1]) + " rows, not a square grid plus one");
  if (d.embed % kHeadDim != 0)
    src.fail("embed width " + std::to_string(d.embed) + " (from '" + p + "pos_embed') is not a multiple of 64");
  d.head_dim = kHeadDim;
  d.heads = d.embed / kHeadDim;
  d.depth = src.count_indexed(p + "blocks.", ".norm1.weight");
  if (d.depth == 0) src.fail("no transformer blocks ('" + p + "blocks.0.norm1.weight' is missing)");
  d.swiglu = src.has(p + "blocks.0.mlp.w12.weight");
  if (d.swiglu) {
    const Shape& w3 = src.shape(p + "blocks.0.mlp.w3.weight");
    if (w3.size() != 2) src.fail("parameter '" + p + "blocks.0.mlp.w3.weight' is not 2-D");
    d.mlp_hidden = w3[1];
  } else {
    const Shape& fc1 = src.shape(p + "blocks.0.mlp.fc1.weight");
    if (fc1.size() != 2) src.fail("parameter '" + p + "blocks.0.mlp.fc1.weight' is not 2-D");
    d.mlp_hidden = fc1[0];
  }
  d.qkv_bias = src.has(p + "blocks.0.attn.qkv.bias");
  return d;
}

void map_vit(SourceIndex& src, const VitSpec& s, const VitDims& d, ModelBuilder& b) {
  const int64_t e = d.embed;
  b.tensor(names::vit(s.out, "patch_embed.weight"), src.take(s.src + "patch_embed.proj.weight", {e, 3, kPatch, kPatch}));
  b.tensor(names::vit(s.out, "patch_embed.bias"), src.take(s.src + "patch_embed.proj.bias", {e}));
  b.tensor(names::vit(s.out, "cls_token"), src.take(s.src + "cls_token", {1, 1, e}));
  if (s.camera_token) b.tensor(names::vit(s.out, "camera_token"), src.take(s.src + "camera_token", {1, 2, e}));
  b.tensor(names::vit(s.out, "pos_embed"), src.take(s.src + "pos_embed", {1, d.grid * d.grid + 1, e}));
  for (int64_t i = 0; i < d.depth; ++i) map_block(src, s, d, i, b);
  norm(src, b, s.src + "norm", names::vit(s.out, "norm"), e);
}

void write_vit_meta(ModelBuilder& b, const KeyFn& key, const VitSpec& s, const VitDims& d) {
  b.set_u32(key("vit.embed_dim"), static_cast<uint32_t>(d.embed));
  b.set_u32(key("vit.depth"), static_cast<uint32_t>(d.depth));
  b.set_u32(key("vit.num_heads"), static_cast<uint32_t>(d.heads));
  b.set_u32(key("vit.head_dim"), static_cast<uint32_t>(d.head_dim));
  b.set_u32(key("vit.mlp_hidden"), static_cast<uint32_t>(d.mlp_hidden));
  b.set_string(key("vit.ffn_type"), d.swiglu ? "swiglu" : "mlp");
  b.set_u32(key("vit.num_register_tokens"), 0);
  b.set_f32(key("vit.init_values"), s.init_values);
  b.set_i32(key("vit.alt_start"), s.alt_start);
  b.set_i32(key("vit.rope_start"), s.rope_start);
  b.set_i32(key("vit.qknorm_start"), s.qknorm_start);
  b.set_f32(key("vit.rope_freq"), 100.0f);
  b.set_bool(key("vit.cat_token"), s.cat_token);
  b.set_bool(key("vit.qkv_bias"), d.qkv_bias);
  b.set_f32(key("vit.ln_eps"), 1e-6f);
  b.set_f32(key("vit.interpolate_offset"), 0.1f);
  b.set_bool(key("vit.interpolate_antialias"), false);
  b.set_u32(key("vit.pos_embed_grid"), static_cast<uint32_t>(d.grid));
  b.set_i32_array(key("vit.out_layers"), s.out_layers);
}

}  // namespace dacpp::import_detail
