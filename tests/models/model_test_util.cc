#include "models/model_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

#include "formats/tensor_names.h"
#include "util/npy_read.h"

namespace dacpp::testing {

void expect_close_to_npy(const std::string& what, const Tensor& got, const std::string& ref_path, double tol) {
  Tensor ref = load_npy(ref_path);
  ASSERT_TRUE(ref.defined()) << ref_path;
  ASSERT_TRUE(got.defined()) << what << " was not produced";
  ASSERT_EQ(got.numel(), ref.numel()) << what << ": got " << shape_str(got.shape()) << ", reference "
                                      << shape_str(ref.shape());
  const double e = rel_l2(got, ref);
  EXPECT_LE(e, tol) << what << " relative L2 " << e;
  if (std::getenv("DACPP_PARITY_VERBOSE") != nullptr) std::printf("  %-12s rel L2 %.3g\n", what.c_str(), e);
}

Tensor load_npy(const std::string& path) {
  NpyArray a;
  std::string err;
  if (!parse_npy(read_file_bytes(path), &a, &err)) {
    ADD_FAILURE() << "cannot read " << path << ": " << err;
    return Tensor();
  }
  return Tensor::from_vector(a.shape, a.values, path);
}

double rel_l2(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() != b.numel()) return std::numeric_limits<double>::infinity();
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = static_cast<double>(x[i]) - y[i];
    num += d * d;
    den += static_cast<double>(y[i]) * y[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

namespace {

MetaValue meta_u32(uint32_t v) {
  MetaValue m;
  m.type = MetaType::U32;
  m.i = v;
  m.u = v;
  return m;
}
MetaValue meta_f32(float v) {
  MetaValue m;
  m.type = MetaType::F32;
  m.f = v;
  return m;
}
MetaValue meta_string(const std::string& s) {
  MetaValue m;
  m.type = MetaType::String;
  m.s = s;
  return m;
}
MetaValue meta_i32_array(const std::vector<int32_t>& v) {
  MetaValue m;
  m.type = MetaType::Array;
  m.elem_type = MetaType::I32;
  m.ai.assign(v.begin(), v.end());
  return m;
}
MetaValue meta_f32_array(const std::vector<float>& v) {
  MetaValue m;
  m.type = MetaType::Array;
  m.elem_type = MetaType::F32;
  m.af.assign(v.begin(), v.end());
  return m;
}

}  // namespace

SyntheticDims SyntheticDims::full_size(char variant) {
  SyntheticDims d;
  d.grid = 37;
  d.official_init = true;
  switch (variant) {
    case 's':
      d.embed = 384, d.depth = 12, d.heads = 6, d.features = 64;
      d.out_channels = {48, 96, 192, 384}, d.out_layers = {2, 5, 8, 11};
      return d;
    case 'b':
      d.embed = 768, d.depth = 12, d.heads = 12, d.features = 128;
      d.out_channels = {96, 192, 384, 768}, d.out_layers = {2, 5, 8, 11};
      return d;
    case 'l':
      d.embed = 1024, d.depth = 24, d.heads = 16, d.features = 256;
      d.out_channels = {256, 512, 1024, 1024}, d.out_layers = {4, 11, 17, 23};
      return d;
    default:
      DACPP_THROW(ErrorCode::InvalidArgument, "SyntheticDims::full_size: variant '", variant, "' is not s, b or l");
  }
}

SyntheticModel::SyntheticModel(bool da3_mono, unsigned seed) : SyntheticModel(SyntheticDims{}, da3_mono, seed) {}

SyntheticModel::SyntheticModel(const SyntheticDims& dims, bool da3_mono, unsigned seed) : dims_(dims), seed_(seed) {
  using names::key;
  meta_[key("arch")] = meta_string(da3_mono ? names::kArchDA3 : names::kArchDA2);
  meta_[key("checkpoint_name")] = meta_string(da3_mono ? "synthetic-mono" : "synthetic-da2");
  meta_[key("vit.embed_dim")] = meta_u32(static_cast<uint32_t>(dims.embed));
  meta_[key("vit.depth")] = meta_u32(static_cast<uint32_t>(dims.depth));
  meta_[key("vit.num_heads")] = meta_u32(static_cast<uint32_t>(dims.heads));
  meta_[key("vit.head_dim")] = meta_u32(static_cast<uint32_t>(dims.embed / dims.heads));
  meta_[key("vit.pos_embed_grid")] = meta_u32(static_cast<uint32_t>(dims.grid));
  meta_[key("vit.ffn_type")] = meta_string("mlp");
  meta_[key("vit.ln_eps")] = meta_f32(1e-6f);
  meta_[key("vit.out_layers")] = meta_i32_array(dims.out_layers);
  meta_[key("head.features")] = meta_u32(static_cast<uint32_t>(dims.features));
  meta_[key("head.out_channels")] = meta_i32_array(dims.out_channels);
  meta_[key("img.mean")] = meta_f32_array({0.485f, 0.456f, 0.406f});
  meta_[key("img.std")] = meta_f32_array({0.229f, 0.224f, 0.225f});
  add_backbone();
  add_head(da3_mono);
}

void SyntheticModel::add(const std::string& name, const Shape& shape, float scale, float offset) {
  std::mt19937 rng(seed_ + static_cast<unsigned>(tensors_.size()) * 7919u);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& x : v) x = offset + scale * u(rng);
  tensors_[name] = {shape, std::move(v)};
}

void SyntheticModel::add_backbone() {
  const int64_t e = dims_.embed, h = 4 * dims_.embed, g = dims_.grid;
  // official_init: the ViT's linears trunc_normal(std 0.02) (here uniform of that std), the patch conv PyTorch's
  // default, LayerScale 1 (init_values = 1.0), small biases where the official ones start at 0 (never all zero).
  const bool o = dims_.official_init;
  const float lin = o ? 0.0346f : 0.2f;
  add("vit.patch_embed.weight", {e, 3, 14, 14}, o ? 1.f / std::sqrt(3.f * 14 * 14) : 0.05f);
  add("vit.patch_embed.bias", {e}, o ? 1.f / std::sqrt(3.f * 14 * 14) : 0.1f);
  add("vit.cls_token", {1, 1, e}, o ? 1e-6f : 0.5f);
  add("vit.pos_embed", {1, 1 + g * g, e}, o ? 0.0346f : 0.5f);
  add("vit.norm.weight", {e}, 0.1f, 1.f);
  add("vit.norm.bias", {e}, 0.1f);
  for (int i = 0; i < dims_.depth; ++i) {
    auto b = [&](const std::string& leaf) { return names::vit_block("vit", i, leaf); };
    for (const char* n : {"norm1", "norm2"}) {
      add(b(std::string(n) + ".weight"), {e}, 0.1f, 1.f);
      add(b(std::string(n) + ".bias"), {e}, 0.1f);
    }
    add(b("attn_qkv.weight"), {3 * e, e}, lin);
    add(b("attn_qkv.bias"), {3 * e}, o ? 0.02f : 0.1f);
    add(b("attn_proj.weight"), {e, e}, lin);
    add(b("attn_proj.bias"), {e}, o ? 0.02f : 0.1f);
    add(b("ls1"), {e}, o ? 0.f : 0.5f, 1.f);
    add(b("ls2"), {e}, o ? 0.f : 0.5f, 1.f);
    add(b("mlp_fc1.weight"), {h, e}, lin);
    add(b("mlp_fc1.bias"), {h}, o ? 0.02f : 0.1f);
    add(b("mlp_fc2.weight"), {e, h}, o ? lin : 0.1f);
    add(b("mlp_fc2.bias"), {e}, o ? 0.02f : 0.1f);
  }
}

void SyntheticModel::add_head(bool sky) {
  const int64_t e = dims_.embed, f = dims_.features;
  const int64_t oc[4] = {dims_.out_channels[0], dims_.out_channels[1], dims_.out_channels[2], dims_.out_channels[3]};
  const bool official = dims_.official_init;
  auto conv = [&](const std::string& p, int64_t o, int64_t i, int64_t k, bool bias = true) {
    const float bound = 1.f / std::sqrt(static_cast<float>(i * k * k));
    add(p + ".weight", {o, i, k, k}, bound);
    if (bias) add(p + ".bias", {o}, official ? bound : 0.1f);
  };
  // A transposed conv's PyTorch default: fan_in from its weight's dim 1 (out channels) · k².
  const float t0 = official ? 1.f / std::sqrt(oc[0] * 16.f) : 0.3f, t1 = official ? 1.f / std::sqrt(oc[1] * 4.f) : 0.3f;
  for (int s = 0; s < 4; ++s) {
    conv(names::head("head", "proj." + std::to_string(s)), oc[s], e, 1);
    conv(names::head("head", "scratch.layer" + std::to_string(s + 1) + "_rn"), f, oc[s], 3, false);
  }
  add("head.resize.0.weight", {oc[0], oc[0], 4, 4}, t0);
  add("head.resize.0.bias", {oc[0]}, official ? t0 : 0.1f);
  add("head.resize.1.weight", {oc[1], oc[1], 2, 2}, t1);
  add("head.resize.1.bias", {oc[1]}, official ? t1 : 0.1f);
  conv("head.resize.3", oc[3], oc[3], 3);
  for (int level = 1; level <= 4; ++level) {
    for (const char* u : {"rc1", "rc2"}) {
      if (sky && level == 4 && std::string(u) == "rc1") continue;  // DA3 refinenet4 has no rc1
      for (const char* c : {".c1", ".c2"}) conv(names::head_rn("head", level, false, u) + c, f, f, 3);
    }
    conv(names::head_rn("head", level, false, "out"), f, f, 1);
  }
  conv("head.scratch.out1", f / 2, f, 3);
  conv("head.scratch.out2a", 32, f / 2, 3);
  conv("head.scratch.out2b", 1, 32, 1);
  if (sky) {
    conv("head.scratch.sky_out2a", 32, f / 2, 3);
    conv("head.scratch.sky_out2b", 1, 32, 1);
  }
}

void SyntheticModel::set_u32(const std::string& suffix, uint32_t v) { meta_[names::key(suffix)] = meta_u32(v); }
void SyntheticModel::set_f32(const std::string& suffix, float v) {
  meta_[names::key(suffix)] = meta_f32(v);
}
void SyntheticModel::set_string(const std::string& suffix, const std::string& v) {
  meta_[names::key(suffix)] = meta_string(v);
}
void SyntheticModel::set_i32_array(const std::string& suffix, const std::vector<int32_t>& v) {
  meta_[names::key(suffix)] = meta_i32_array(v);
}
void SyntheticModel::remove_key(const std::string& suffix) { meta_.erase(names::key(suffix)); }
void SyntheticModel::remove_tensor(const std::string& name) { tensors_.erase(name); }
void SyntheticModel::reshape_tensor(const std::string& name, const Shape& shape) { add(name, shape, 0.1f); }

void SyntheticModel::fill_tensor(const std::string& name, float value) {
  auto& values = tensors_.at(name).second;
  std::fill(values.begin(), values.end(), value);
}

std::shared_ptr<const ModelFile> SyntheticModel::build(const std::string& path) const {
  auto storage = std::make_shared<std::vector<std::vector<float>>>();
  storage->reserve(tensors_.size());
  std::vector<TensorRecord> records;
  size_t bytes = 0;
  for (const auto& [name, t] : tensors_) {
    storage->push_back(t.second);
    TensorRecord r;
    r.name = name;
    r.dtype = DType::F32;
    r.shape = t.first;
    r.data = storage->back().data();
    r.nbytes = t.second.size() * sizeof(float);
    bytes += r.nbytes;
    records.push_back(std::move(r));
  }
  return std::make_shared<const ModelFile>(path, meta_, std::move(records), storage, bytes);
}

}  // namespace dacpp::testing
