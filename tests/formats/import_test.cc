// Tests of the checkpoint importer on tiny synthetic checkpoints (scripts/gen_import_fixtures.py): a DA2 official
// .pth, the same weights in the transformers (-hf) layout, and DA3 any-view / mono checkpoints derived here from
// the DA2 weights. Checks names, shapes, metadata, value identity, and the unmapped / missing parameter errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <cstring>
#include <random>
#include <sys/stat.h>

#include "core/error.h"
#include "formats/checkpoint_test_util.h"
#include "formats/gguf_reader.h"
#include "formats/import.h"
#include "formats/pth_reader.h"
#include "formats/safetensors_reader.h"

namespace dacpp {
namespace {

using testing::scratch_path;
using testing::write_bytes;
using testing::write_safetensors;

const std::string kDir = std::string(DACPP_FIXTURES_DIR) + "/import/";
const std::string kPth = kDir + "da2_tiny.pth";
const std::string kHf = kDir + "da2_tiny_hf";

std::string key(const std::string& k) { return "depthanything3." + k; }

void expect_shape(const ModelFile& m, const std::string& name, const Shape& s) {
  ASSERT_TRUE(m.has_tensor(name)) << name;
  EXPECT_EQ(m.record(name).shape, s) << name;
  EXPECT_EQ(m.record(name).dtype, DType::F32) << name;
}

void expect_import_error(const std::string& path, const std::string& needle, const ImportOptions& opt = {}) {
  try {
    import_checkpoint(path, opt);
    ADD_FAILURE() << "no error (expected '" << needle << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel) << e.what();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.what();
  }
}

// Owns synthetic tensors for derived checkpoints.
struct Synth {
  std::mt19937 rng{42};
  std::vector<std::shared_ptr<std::vector<float>>> store;
  TensorRecord make(const std::string& name, const Shape& shape) {
    auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(shape_numel(shape)));
    std::uniform_real_distribution<float> u(0.05f, 0.25f);
    for (float& x : *v) x = u(rng);
    store.push_back(v);
    return TensorRecord{name, DType::F32, shape, v->data(), v->size() * 4};
  }
};

TEST(Import, Da2PthNamesShapesMetadata) {
  const auto m = import_checkpoint(kPth);
  EXPECT_EQ(m->get_string("general.architecture"), "depthanything3");
  EXPECT_EQ(m->get_string(key("arch")), "depthanything2");
  EXPECT_EQ(m->get_string(key("checkpoint_name")), "da2_tiny");
  EXPECT_EQ(m->get_u32(key("vit.embed_dim")), 64u);
  EXPECT_EQ(m->get_u32(key("vit.depth")), 12u);
  EXPECT_EQ(m->get_u32(key("vit.num_heads")), 1u);
  EXPECT_EQ(m->get_u32(key("vit.head_dim")), 64u);
  EXPECT_EQ(m->get_u32(key("vit.mlp_hidden")), 64u);
  EXPECT_EQ(m->get_u32(key("vit.pos_embed_grid")), 4u);
  EXPECT_EQ(m->get_i32_array(key("vit.out_layers")), (std::vector<int32_t>{2, 5, 8, 11}));
  EXPECT_EQ(m->get_i32(key("vit.alt_start")), -1);
  EXPECT_FALSE(m->get_bool(key("vit.cat_token")));
  EXPECT_FLOAT_EQ(m->get_f32(key("vit.ln_eps")), 1e-6f);
  EXPECT_EQ(m->get_string(key("vit.ffn_type")), "mlp");
  EXPECT_EQ(m->get_u32(key("head.features")), 16u);
  EXPECT_EQ(m->get_i32_array(key("head.out_channels")), (std::vector<int32_t>{8, 16, 32, 32}));
  EXPECT_EQ(m->get_u32(key("head.output_dim")), 1u);
  EXPECT_EQ(m->get_string(key("head.activation")), "relu");
  EXPECT_FALSE(m->has_key(key("head.max_depth")));
  EXPECT_EQ(m->get_string(key("img.resize_mode")), "lower_bound");
  EXPECT_EQ(m->get_u32(key("img.resize_target")), 518u);
  EXPECT_EQ(m->value(key("img.mean")).elem_type, MetaType::F32);
  EXPECT_EQ(m->value(key("vit.out_layers")).elem_type, MetaType::I32);
  EXPECT_EQ(m->value(key("vit.depth")).type, MetaType::U32);

  expect_shape(*m, "vit.patch_embed.weight", {64, 3, 14, 14});
  expect_shape(*m, "vit.cls_token", {1, 1, 64});
  expect_shape(*m, "vit.pos_embed", {1, 17, 64});
  expect_shape(*m, "vit.blk.11.attn_qkv.weight", {192, 64});
  expect_shape(*m, "vit.blk.11.attn_qkv.bias", {192});
  expect_shape(*m, "vit.blk.0.ls1", {64});
  expect_shape(*m, "vit.blk.0.mlp_fc1.weight", {64, 64});
  expect_shape(*m, "vit.norm.weight", {64});
  expect_shape(*m, "head.proj.3.weight", {32, 64, 1, 1});
  expect_shape(*m, "head.resize.0.weight", {8, 8, 4, 4});
  expect_shape(*m, "head.resize.3.weight", {32, 32, 3, 3});
  expect_shape(*m, "head.scratch.layer2_rn.weight", {16, 16, 3, 3});
  expect_shape(*m, "head.scratch.rn4.rc1.c1.weight", {16, 16, 3, 3});
  expect_shape(*m, "head.scratch.rn1.out.weight", {16, 16, 1, 1});
  expect_shape(*m, "head.scratch.out1.weight", {8, 16, 3, 3});
  expect_shape(*m, "head.scratch.out2a.weight", {32, 8, 3, 3});
  expect_shape(*m, "head.scratch.out2b.weight", {1, 32, 1, 1});
  EXPECT_FALSE(m->has_tensor("head.scratch.layer1_rn.bias"));
  EXPECT_FALSE(m->has_tensor("head.resize.2.weight"));
  // 4 embedding + 12 blocks x 14 + 2 norm; head 8 proj + 6 resize + 4 rn + 4 x 10 fusion + 6 out.
  EXPECT_EQ(m->records().size(), 4u + 12u * 14u + 2u + 8u + 6u + 4u + 40u + 6u);

  // Values: the f16 source converted exactly.
  const CheckpointTensors src = read_pth(kPth);
  for (const TensorRecord& r : src.tensors) {
    if (r.name != "pretrained.blocks.7.attn.qkv.weight") continue;
    const Tensor t = m->tensor_f32("vit.blk.7.attn_qkv.weight");
    const auto* h = static_cast<const uint16_t*>(r.data);
    for (int64_t i = 0; i < t.numel(); i += 97) {
      uint32_t sign = (h[i] & 0x8000u) << 16, exp = (h[i] >> 10) & 0x1f, man = h[i] & 0x3ff;
      ASSERT_TRUE(exp > 0 && exp < 31);  // the fixture holds normal values only
      uint32_t bits = sign | ((exp + 112) << 23) | (man << 13);
      float want;
      std::memcpy(&want, &bits, 4);
      EXPECT_EQ(t.data<float>()[i], want) << i;
    }
  }
}

TEST(Import, Da2HfMatchesPth) {
  const auto a = import_checkpoint(kPth);
  const auto b = import_checkpoint(kHf);
  EXPECT_EQ(b->get_string(key("checkpoint_name")), "da2_tiny_hf");
  ASSERT_EQ(a->records().size(), b->records().size());
  for (const TensorRecord& r : a->records()) {
    ASSERT_TRUE(b->has_tensor(r.name)) << r.name;
    const TensorRecord& o = b->record(r.name);
    ASSERT_EQ(o.shape, r.shape) << r.name;
    ASSERT_EQ(o.nbytes, r.nbytes) << r.name;
    EXPECT_EQ(std::memcmp(o.data, r.data, r.nbytes), 0) << r.name;
  }
  for (const auto& [k, v] : a->metadata()) {
    if (k == key("checkpoint_name")) continue;
    ASSERT_TRUE(b->has_key(k)) << k;
    EXPECT_EQ(b->value(k).type, v.type) << k;
    EXPECT_EQ(b->value(k).i, v.i) << k;
    EXPECT_EQ(b->value(k).s, v.s) << k;
    EXPECT_EQ(b->value(k).ai, v.ai) << k;
  }
  EXPECT_EQ(a->metadata().size(), b->metadata().size());
}

// The DA2 source records as official-key safetensors, edited by `edit`.
std::string write_da2_variant(const std::string& name, const std::function<void(std::vector<TensorRecord>&)>& edit,
                              const CheckpointTensors& src) {
  std::vector<TensorRecord> recs = src.tensors;
  edit(recs);
  const std::string path = scratch_path(name);
  write_safetensors(path, recs);
  return path;
}

TEST(Import, UnmappedAndMissingParametersAreNamed) {
  const CheckpointTensors src = read_pth(kPth);
  Synth synth;
  const std::string extra = write_da2_variant("extra.safetensors", [&](std::vector<TensorRecord>& r) {
    r.push_back(synth.make("depth_head.scratch.refinenet2.surprise.weight", {4}));
  }, src);
  expect_import_error(extra, "parameter 'depth_head.scratch.refinenet2.surprise.weight' [4] is not mapped");
  const std::string removed = write_da2_variant("removed.safetensors", [](std::vector<TensorRecord>& r) {
    r.erase(std::remove_if(r.begin(), r.end(), [](const TensorRecord& t) { return t.name == "pretrained.blocks.5.ls1.gamma"; }),
            r.end());
  }, src);
  expect_import_error(removed, "required parameter 'pretrained.blocks.5.ls1.gamma' is missing");
  const std::string misshapen = write_da2_variant("misshapen.safetensors", [&](std::vector<TensorRecord>& r) {
    for (auto& t : r)
      if (t.name == "depth_head.scratch.output_conv1.bias") t = synth.make(t.name, {9});
  }, src);
  expect_import_error(misshapen, "parameter 'depth_head.scratch.output_conv1.bias' has shape [9], expected [8]");
  const std::string official = write_da2_variant("official.safetensors", [](std::vector<TensorRecord>&) {}, src);
  EXPECT_EQ(import_checkpoint(official)->records().size(), import_checkpoint(kPth)->records().size());
  for (const auto& p : {extra, removed, misshapen, official}) std::remove(p.c_str());
}

TEST(Import, HfMissingQueryIsNamed) {
  const std::string dir = scratch_path("hfdir");
  ::mkdir(dir.c_str(), 0755);
  const CheckpointTensors st = read_safetensors(kHf + "/model.safetensors");
  std::vector<TensorRecord> recs;
  for (const auto& r : st.tensors)
    if (r.name != "backbone.encoder.layer.3.attention.attention.key.weight") recs.push_back(r);
  ASSERT_EQ(recs.size() + 1, st.tensors.size());
  write_safetensors(dir + "/model.safetensors", recs);
  write_bytes(dir + "/config.json", "{}");
  expect_import_error(dir, "'backbone.encoder.layer.3.attention.attention.key.weight' is missing");
  std::remove((dir + "/model.safetensors").c_str());
  std::remove((dir + "/config.json").c_str());
  ::rmdir(dir.c_str());
}

TEST(Import, Da2MetricScale) {
  const std::string path = scratch_path("depth_anything_v2_metric_hypersim_vits.pth");
  write_bytes(path, testing::read_bytes(kPth));
  const auto m = import_checkpoint(path);
  EXPECT_FLOAT_EQ(m->get_f32(key("head.max_depth")), 20.0f);
  EXPECT_EQ(m->get_string(key("head.activation")), "sigmoid");
  ImportOptions opt;
  opt.max_depth = 35;
  opt.name = "custom";
  const auto m2 = import_checkpoint(path, opt);
  EXPECT_FLOAT_EQ(m2->get_f32(key("head.max_depth")), 35.0f);
  EXPECT_EQ(m2->get_string(key("checkpoint_name")), "custom");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dacpp
