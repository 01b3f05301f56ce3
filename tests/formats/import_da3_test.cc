// Importer tests for DA3 checkpoints. The tiny DA3 any-view and mono checkpoints are derived here from the DA2
// fixture's weights (backbone and main head reused; DA3-only parameters synthesized), written as safetensors
// folders with config.json, and imported.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include "core/error.h"
#include "formats/checkpoint_test_util.h"
#include "formats/gguf_reader.h"
#include "formats/import.h"
#include "formats/pth_reader.h"

namespace dacpp {
namespace {

using testing::scratch_path;
using testing::write_bytes;
using testing::write_safetensors;

const std::string kPth = std::string(DACPP_FIXTURES_DIR) + "/import/da2_tiny.pth";
constexpr int64_t E = 64, F = 16;
const int64_t kOc[4] = {8, 16, 32, 32};

std::string key(const std::string& k) { return "depthanything3." + k; }

bool starts(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

class Da3Fixture {
 public:
  Da3Fixture() : src_(read_pth(kPth)) {}

  // Writes a DA3 folder and returns its path.
  std::string write(const std::string& name, const std::string& model_name, bool any_view,
                    const std::function<void(std::vector<TensorRecord>&)>& edit = nullptr) {
    std::vector<TensorRecord> r = records(any_view);
    if (edit) edit(r);
    const std::string dir = scratch_path(name);
    ::mkdir(dir.c_str(), 0755);
    write_safetensors(dir + "/model.safetensors", r);
    write_bytes(dir + "/config.json", "{\"model_name\": \"" + model_name + "\"}");
    dirs_.push_back(dir);
    return dir;
  }

  // A nested checkpoint: the any-view network under model.da3.*, the mono one under model.da3_metric.*.
  std::string write_nested(const std::string& name) {
    std::vector<TensorRecord> r;
    for (TensorRecord t : records(true)) r.push_back({"model.da3." + t.name.substr(6), t.dtype, t.shape, t.data, t.nbytes});
    for (TensorRecord t : records(false))
      r.push_back({"model.da3_metric." + t.name.substr(6), t.dtype, t.shape, t.data, t.nbytes});
    const std::string dir = scratch_path(name);
    ::mkdir(dir.c_str(), 0755);
    write_safetensors(dir + "/model.safetensors", r);
    write_bytes(dir + "/config.json", "{\"model_name\": \"da3nested-giant-large\"}");
    dirs_.push_back(dir);
    return dir;
  }

  ~Da3Fixture() {
    for (const auto& d : dirs_) {
      std::remove((d + "/model.safetensors").c_str());
      std::remove((d + "/config.json").c_str());
      ::rmdir(d.c_str());
    }
  }

  TensorRecord make(const std::string& name, const Shape& shape) {
    auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(shape_numel(shape)));
    std::uniform_real_distribution<float> u(0.05f, 0.25f);
    for (float& x : *v) x = u(rng_);
    store_.push_back(v);
    return TensorRecord{name, DType::F32, shape, v->data(), v->size() * 4};
  }

 private:
  void conv(std::vector<TensorRecord>& r, const std::string& n, int64_t oc, int64_t ic, int64_t k) {
    r.push_back(make(n + ".weight", {oc, ic, k, k}));
    r.push_back(make(n + ".bias", {oc}));
  }

  std::vector<TensorRecord> records(bool any_view) {
    std::vector<TensorRecord> r;
    for (TensorRecord t : src_.tensors) {
      if (t.name == "pretrained.mask_token" || starts(t.name, "depth_head.scratch.refinenet4.resConfUnit1.")) continue;
      if (any_view && (starts(t.name, "depth_head.projects.") || starts(t.name, "depth_head.scratch.output_conv2.2.")))
        continue;
      if (starts(t.name, "pretrained.")) t.name = "model.backbone." + t.name;
      else t.name = "model.head." + t.name.substr(std::string("depth_head.").size());
      r.push_back(t);
    }
    if (!any_view) {
      conv(r, "model.head.scratch.sky_output_conv2.0", 32, F / 2, 3);
      conv(r, "model.head.scratch.sky_output_conv2.2", 1, 32, 1);
      return r;
    }
    const std::string bb = "model.backbone.pretrained.";
    r.push_back(make(bb + "camera_token", {1, 2, E}));
    for (int i = 4; i < 12; ++i)
      for (const char* n : {"q_norm", "k_norm"}) {
        r.push_back(make(bb + "blocks." + std::to_string(i) + ".attn." + n + ".weight", {64}));
        r.push_back(make(bb + "blocks." + std::to_string(i) + ".attn." + n + ".bias", {64}));
      }
    const std::string h = "model.head.";
    r.push_back(make(h + "norm.weight", {2 * E}));
    r.push_back(make(h + "norm.bias", {2 * E}));
    for (int i = 0; i < 4; ++i) conv(r, h + "projects." + std::to_string(i), kOc[i], 2 * E, 1);
    conv(r, h + "scratch.output_conv2.2", 2, 32, 1);
    for (int lvl = 1; lvl <= 4; ++lvl) {
      const std::string p = h + "scratch.refinenet" + std::to_string(lvl) + "_aux.";
      for (int u = lvl < 4 ? 1 : 2; u <= 2; ++u)
        for (int c = 1; c <= 2; ++c) conv(r, p + "resConfUnit" + std::to_string(u) + ".conv" + std::to_string(c), F, F, 3);
      conv(r, p + "out_conv", F, F, 1);
    }
    const int64_t ch[6] = {F, F / 2, F, F / 2, F, F / 2};
    for (int lvl = 0; lvl < 4; ++lvl) {
      const std::string l = std::to_string(lvl);
      for (int k = 0; k < 5; ++k) conv(r, h + "scratch.output_conv1_aux." + l + "." + std::to_string(k), ch[k + 1], ch[k], 3);
      conv(r, h + "scratch.output_conv2_aux." + l + ".0", 32, F / 2, 3);
      r.push_back(make(h + "scratch.output_conv2_aux." + l + ".2.weight", {32}));
      r.push_back(make(h + "scratch.output_conv2_aux." + l + ".2.bias", {32}));
      conv(r, h + "scratch.output_conv2_aux." + l + ".5", 7, 32, 1);
    }
    const std::pair<const char*, int64_t> cam[] = {{"backbone.0", 2 * E}, {"backbone.2", 2 * E}, {"fc_t", 3},
                                                   {"fc_qvec", 4}, {"fc_fov.0", 2}};
    for (const auto& [n, oc] : cam) {
      r.push_back(make(std::string("model.cam_dec.") + n + ".weight", {oc, 2 * E}));
      r.push_back(make(std::string("model.cam_dec.") + n + ".bias", {oc}));
    }
    // cam_enc (pose conditioning): not converted, but validated, so the whole module is there.
    const std::string ce = "model.cam_enc.";
    r.push_back(make(ce + "pose_branch.fc1.weight", {E / 2, 9}));
    r.push_back(make(ce + "pose_branch.fc1.bias", {E / 2}));
    r.push_back(make(ce + "pose_branch.fc2.weight", {E, E / 2}));
    r.push_back(make(ce + "pose_branch.fc2.bias", {E}));
    for (const char* n : {"token_norm", "trunk_norm"}) {
      r.push_back(make(ce + n + ".weight", {E}));
      r.push_back(make(ce + n + ".bias", {E}));
    }
    for (int i = 0; i < 4; ++i) {
      const std::string b = ce + "trunk." + std::to_string(i) + ".";
      for (const char* n : {"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "ls1.gamma", "ls2.gamma",
                            "attn.proj.bias", "mlp.fc2.bias"})
        r.push_back(make(b + n, {E}));
      r.push_back(make(b + "attn.qkv.weight", {3 * E, E}));
      r.push_back(make(b + "attn.qkv.bias", {3 * E}));
      r.push_back(make(b + "attn.proj.weight", {E, E}));
      r.push_back(make(b + "mlp.fc1.weight", {4 * E, E}));
      r.push_back(make(b + "mlp.fc1.bias", {4 * E}));
      r.push_back(make(b + "mlp.fc2.weight", {E, 4 * E}));
    }
    return r;
  }

  CheckpointTensors src_;
  std::mt19937 rng_{3};
  std::vector<std::shared_ptr<std::vector<float>>> store_;
  std::vector<std::string> dirs_;
};

void expect_shape(const ModelFile& m, const std::string& name, const Shape& s) {
  ASSERT_TRUE(m.has_tensor(name)) << name;
  EXPECT_EQ(m.record(name).shape, s) << name;
}

TEST(ImportDa3, AnyView) {
  Da3Fixture fx;
  const std::string dir = fx.write("DA3-TINY", "da3-small", true);
  const auto m = import_checkpoint(dir);
  EXPECT_EQ(m->get_string(key("arch")), "depthanything3");
  const std::string name = m->get_string(key("checkpoint_name"));
  EXPECT_EQ(name.substr(name.size() - 8), "DA3-TINY") << name;
  EXPECT_EQ(m->get_i32_array(key("vit.out_layers")), (std::vector<int32_t>{5, 7, 9, 11}));
  EXPECT_EQ(m->get_i32(key("vit.alt_start")), 4);
  EXPECT_EQ(m->get_i32(key("vit.rope_start")), 4);
  EXPECT_EQ(m->get_i32(key("vit.qknorm_start")), 4);
  EXPECT_TRUE(m->get_bool(key("vit.cat_token")));
  EXPECT_FLOAT_EQ(m->get_f32(key("vit.ln_eps")), 1e-6f);
  EXPECT_EQ(m->get_u32(key("head.output_dim")), 2u);
  EXPECT_TRUE(m->get_bool(key("head.pos_embed")));
  EXPECT_EQ(m->get_string(key("img.resize_mode")), "upper_bound");
  EXPECT_EQ(m->get_u32(key("img.resize_target")), 504u);
  EXPECT_EQ(m->get_u32(key("cam.dim_in")), 128u);
  expect_shape(*m, "vit.camera_token", {1, 2, E});
  expect_shape(*m, "vit.blk.4.attn_qnorm.weight", {64});
  expect_shape(*m, "vit.blk.11.attn_knorm.bias", {64});
  EXPECT_FALSE(m->has_tensor("vit.blk.3.attn_qnorm.weight"));
  expect_shape(*m, "head.norm.weight", {2 * E});
  expect_shape(*m, "head.proj.0.weight", {8, 2 * E, 1, 1});
  expect_shape(*m, "head.scratch.out2b.weight", {2, 32, 1, 1});
  EXPECT_FALSE(m->has_tensor("head.scratch.rn4.rc1.c1.weight"));
  expect_shape(*m, "head.scratch.rn4.rc2.c1.weight", {F, F, 3, 3});
  expect_shape(*m, "cam.bb0.weight", {2 * E, 2 * E});
  expect_shape(*m, "cam.fc_q.weight", {4, 2 * E});
  expect_shape(*m, "cam.fc_fov.bias", {2});
  EXPECT_FALSE(m->has_tensor("head.scratch.rn1_aux.out.weight"));  // aux only on request
  EXPECT_FALSE(m->has_key(key("head.has_aux")));
}

TEST(ImportDa3, AnyViewWithAux) {
  Da3Fixture fx;
  ImportOptions opt;
  opt.with_aux = true;
  const auto m = import_checkpoint(fx.write("DA3-AUX", "da3-small", true), opt);
  EXPECT_TRUE(m->get_bool(key("head.has_aux")));
  expect_shape(*m, "head.scratch.rn1_aux.rc1.c2.weight", {F, F, 3, 3});
  EXPECT_FALSE(m->has_tensor("head.scratch.rn4_aux.rc1.c1.weight"));
  expect_shape(*m, "head.scratch.rn4_aux.out.weight", {F, F, 1, 1});
  expect_shape(*m, "head.scratch.out1_aux.0.weight", {F / 2, F, 3, 3});
  expect_shape(*m, "head.scratch.out1_aux.1.weight", {F, F / 2, 3, 3});
  expect_shape(*m, "head.scratch.out1_aux.4.weight", {F / 2, F, 3, 3});
  expect_shape(*m, "head.scratch.out2a_aux.weight", {32, F / 2, 3, 3});
  expect_shape(*m, "head.scratch.out2_aux_ln.weight", {32});
  expect_shape(*m, "head.scratch.out2b_aux.weight", {7, 32, 1, 1});
}

TEST(ImportDa3, Mono) {
  Da3Fixture fx;
  const auto m = import_checkpoint(fx.write("DA3MONO-TINY", "da3mono-large", false));
  EXPECT_EQ(m->get_i32_array(key("vit.out_layers")), (std::vector<int32_t>{2, 5, 8, 11}));
  EXPECT_EQ(m->get_i32(key("vit.alt_start")), -1);
  EXPECT_FALSE(m->get_bool(key("vit.cat_token")));
  EXPECT_FALSE(m->get_bool(key("head.pos_embed")));
  EXPECT_EQ(m->get_string(key("head.sky_activation")), "relu");
  expect_shape(*m, "head.scratch.sky_out2a.weight", {32, F / 2, 3, 3});
  expect_shape(*m, "head.scratch.sky_out2b.weight", {1, 32, 1, 1});
  expect_shape(*m, "head.proj.0.weight", {8, E, 1, 1});
  EXPECT_FALSE(m->has_tensor("vit.camera_token"));
  EXPECT_FALSE(m->has_tensor("head.norm.weight"));
}

TEST(ImportDa3, NestedBranches) {
  Da3Fixture fx;
  const std::string dir = fx.write_nested("NESTED");
  ImportOptions any_opt;
  any_opt.nested_part = ImportOptions::NestedPart::AnyView;
  const auto any = import_checkpoint(dir, any_opt);
  const std::string name = any->get_string(key("checkpoint_name"));
  EXPECT_EQ(name.substr(name.size() - 14), "NESTED-anyview") << name;
  expect_shape(*any, "vit.camera_token", {1, 2, E});
  EXPECT_FALSE(any->has_key(key("m_vit.embed_dim")));
  ImportOptions opt;
  opt.nested_metric = true;
  const auto metric = import_checkpoint(dir, opt);
  EXPECT_EQ(metric->get_u32(key("m_vit.embed_dim")), 64u);
  EXPECT_EQ(metric->get_u32(key("m_head.features")), 16u);
  EXPECT_EQ(metric->get_i32_array(key("m_vit.out_layers")), (std::vector<int32_t>{2, 5, 8, 11}));
  expect_shape(*metric, "m_vit.blk.0.attn_qkv.weight", {3 * E, E});
  expect_shape(*metric, "m_head.scratch.sky_out2b.weight", {1, 32, 1, 1});
  EXPECT_FALSE(metric->has_tensor("vit.camera_token"));
  EXPECT_FALSE(metric->has_key(key("vit.embed_dim")));
  // The default: both branches in one index, each under its own names.
  const auto both = import_checkpoint(dir);
  EXPECT_EQ(both->get_string(key("checkpoint_name")).substr(name.size() - 14), "NESTED");
  EXPECT_EQ(both->get_u32(key("m_vit.embed_dim")), 64u);
  expect_shape(*both, "vit.camera_token", {1, 2, E});
  expect_shape(*both, "m_head.scratch.sky_out2b.weight", {1, 32, 1, 1});
  EXPECT_EQ(both->records().size(), any->records().size() + metric->records().size());
}

TEST(ImportDa3, Errors) {
  Da3Fixture fx;
  auto expect_err = [](const std::string& dir, const std::string& needle) {
    try {
      import_checkpoint(dir);
      ADD_FAILURE() << "no error (expected '" << needle << "')";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
      EXPECT_NE(e.message().find(needle), std::string::npos) << e.what();
    }
  };
  expect_err(fx.write("q3", "da3-small", true, [&](std::vector<TensorRecord>& r) {
    r.push_back(fx.make("model.backbone.pretrained.blocks.3.attn.q_norm.weight", {64}));
  }), "'model.backbone.pretrained.blocks.3.attn.q_norm.weight' [64] is not mapped");
  expect_err(fx.write("nocam", "da3-small", true, [](std::vector<TensorRecord>& r) {
    r.erase(std::remove_if(r.begin(), r.end(), [](const TensorRecord& t) { return t.name == "model.backbone.pretrained.camera_token"; }), r.end());
  }), "required parameter 'model.backbone.pretrained.camera_token' is missing");
  expect_err(fx.write("badname", "da4-huge", true), "unknown DA3 model_name 'da4-huge'");
  expect_err(fx.write("monoextra", "da3mono-large", false, [&](std::vector<TensorRecord>& r) {
    r.push_back(fx.make("model.head.scratch.refinenet4.resConfUnit1.conv1.weight", {F, F, 3, 3}));
  }), "'model.head.scratch.refinenet4.resConfUnit1.conv1.weight'");
}

TEST(ImportDa3, WriteGgufRoundTrip) {
  Da3Fixture fx;
  ImportOptions opt;
  opt.with_aux = true;
  const auto m = import_checkpoint(fx.write("DA3-RT", "da3-small", true), opt);
  const std::string out = scratch_path("rt.gguf");
  write_gguf(*m, out);
  const auto g = read_gguf(out);
  EXPECT_EQ(g->get_string("general.architecture"), "depthanything3");
  ASSERT_EQ(g->metadata().size(), m->metadata().size());
  for (const auto& [k, v] : m->metadata()) {
    ASSERT_TRUE(g->has_key(k)) << k;
    EXPECT_EQ(g->value(k).type, v.type) << k;
    if (v.type == MetaType::Array) {
      EXPECT_EQ(g->value(k).elem_type, v.elem_type) << k;
    }
  }
  EXPECT_EQ(g->get_i32_array(key("vit.out_layers")), m->get_i32_array(key("vit.out_layers")));
  ASSERT_EQ(g->records().size(), m->records().size());
  for (const TensorRecord& r : m->records()) {
    ASSERT_TRUE(g->has_tensor(r.name)) << r.name;
    const TensorRecord& o = g->record(r.name);
    EXPECT_EQ(o.shape, r.shape) << r.name;
    ASSERT_EQ(o.nbytes, r.nbytes) << r.name;
    EXPECT_EQ(std::memcmp(o.data, r.data, r.nbytes), 0) << r.name;
  }
  std::remove(out.c_str());
}

}  // namespace
}  // namespace dacpp

namespace dacpp {
namespace {

// DA3METRIC and DA3MONO share one architecture; a folder name that hides the metric model must not turn it into a
// mono model (the engine reads metric-ness from checkpoint_name, as depth-anything.cpp files require).
TEST(ImportDa3, MetricNameSurvivesAnUnhelpfulFolderName) {
  Da3Fixture fx;
  const auto metric = import_checkpoint(fx.write("weights", "da3metric-large", false));
  EXPECT_EQ(metric->get_string(key("checkpoint_name")), "DA3METRIC-LARGE");
  const auto mono = import_checkpoint(fx.write("my-metric-copy", "da3mono-large", false));
  EXPECT_EQ(mono->get_string(key("checkpoint_name")), "DA3MONO-LARGE");
}

}  // namespace
}  // namespace dacpp
