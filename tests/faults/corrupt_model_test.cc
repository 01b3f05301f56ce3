// Corrupt-model matrix (issue "Never crash" item 4). For every model class we implement (DA2 relative, DA2 metric,
// DA3 mono, DA3 metric, DA3 any-view, DA3 giant with SwiGLU, DA3 nested), built in memory from the tiny fixtures:
// each tensor removed in turn, each metadata key removed in turn, each tensor's shape perturbed, each tensor given an
// integer dtype, NaN and Inf in each weight. DA3 nested is also loaded as depth-anything.cpp's two files (any-view +
// metric branch), each corrupted in turn. The pose-conditioning parameters of a DA3 any-view checkpoint (cam_enc,
// not converted: inference never uses them) are corrupted in the checkpoint itself, as they are validated at import.
// Plus whole-file cases: a well-formed GGUF of another family, a 0-byte file, a GGUF claiming 64 GiB of data.
// Every case must end in Error{InvalidModel} at load whose message names the item — never a crash, never a load
// that quietly succeeds on a tensor the network uses.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "engine/model.h"
#include "formats/checkpoint_test_util.h"
#include "formats/gguf_reader.h"
#include "formats/gguf_writer.h"
#include "formats/import.h"
#include "formats/nested_model_file.h"
#include "formats/safetensors_reader.h"
#include "util/scratch.h"

namespace dacpp {
namespace {

struct ModelCase {
  const char* label;
  const char* path;  // under DACPP_FIXTURES_DIR
};

// One per implemented model class.
const ModelCase kCases[] = {
    {"da2_relative", "/tiny-da2.gguf"},
    {"da2_metric", "/models/da2_tiny_metric/da2_tiny_metric_hypersim.pth"},
    {"da3_mono", "/models/da3mono_tiny"},
    {"da3_metric", "/models/da3metric_tiny"},
    {"da3_any_view", "/models/da3small_tiny"},
    {"da3_giant", "/models/da3giant_tiny"},    // SwiGLU FFN, f16 checkpoint
    {"da3_nested", "/models/da3nested_tiny"},  // one checkpoint: any-view + metric branch in one index
};

// Tensors the network does not read, so they may be absent. The only tolerated ones are those upstream checkpoints
// carry but inference never touches: the deepest DPT fusion block's first residual unit (refinenet4 has no skip
// input, so resConfUnit1 is never called; DA2 files keep it).
bool tolerated_unused(const std::string& name) { return name.rfind("head.scratch.rn4.rc1.", 0) == 0; }

// A mutable copy of a ModelFile's index. Unchanged records keep pointing into the base file's data; changed ones
// point into buffers owned by the variant. build() ties both lifetimes to the new ModelFile.
class Variant {
 public:
  explicit Variant(std::shared_ptr<const ModelFile> base)
      : base_(std::move(base)), meta_(base_->metadata()), records_(base_->records()) {}

  std::vector<TensorRecord>& records() { return records_; }
  std::map<std::string, MetaValue>& meta() { return meta_; }

  // Replaces record i's bytes with an owned copy (resized to nbytes, zero-filled beyond the old data).
  void* own(size_t i, size_t nbytes) {
    auto buf = std::make_shared<std::vector<uint8_t>>(nbytes, 0);
    std::memcpy(buf->data(), records_[i].data, std::min(nbytes, records_[i].nbytes));
    owned_.push_back(buf);
    records_[i].data = buf->data();
    records_[i].nbytes = nbytes;
    return buf->data();
  }

  std::shared_ptr<const ModelFile> build() const {
    struct Hold {
      std::shared_ptr<const ModelFile> base;
      std::vector<std::shared_ptr<std::vector<uint8_t>>> owned;
    };
    auto hold = std::make_shared<Hold>(Hold{base_, owned_});
    return std::make_shared<ModelFile>(base_->path() + " (corrupted)", meta_, records_, hold, base_->file_bytes());
  }

 private:
  std::shared_ptr<const ModelFile> base_;
  std::map<std::string, MetaValue> meta_;
  std::vector<TensorRecord> records_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> owned_;
};

// What one load attempt ended in.
struct Outcome {
  bool loaded = false;
  bool invalid_model = false;
  std::string message;  // the error text, or the escaping exception's description
};

template <typename Fn>
Outcome try_load(Fn fn) {
  Outcome o;
  try {
    fn();
    o.loaded = true;
  } catch (const Error& e) {
    o.invalid_model = e.code() == ErrorCode::InvalidModel;
    o.message = str_cat(error_code_name(e.code()), ": ", e.what());
  } catch (const std::exception& e) {
    o.message = str_cat("non-dacpp exception: ", e.what());
  }
  return o;
}

Outcome try_from_file(const Variant& v) {
  return try_load([&] { Model::from_file(v.build()); });
}

// Asserts the outcome is InvalidModel naming every item of `parts`.
void expect_invalid_model(const Outcome& o, const std::string& what, const std::vector<std::string>& parts) {
  ASSERT_FALSE(o.loaded) << what << ": the model loaded";
  ASSERT_TRUE(o.invalid_model) << what << ": " << o.message;
  for (const std::string& p : parts) EXPECT_NE(o.message.find(p), std::string::npos) << what << ": " << o.message;
}

class CorruptModel : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    const std::string path = std::string(DACPP_FIXTURES_DIR) + GetParam().path;
    base_ = open_model(path);
    Model::from_file(base_);  // the uncorrupted model must load, or every case below would pass vacuously
    for (const TensorRecord& r : base_->records()) {
      Variant v(base_);
      v.records().erase(v.records().begin() + static_cast<long>(&r - base_->records().data()));
      if (try_from_file(v).loaded) unused_.insert(r.name);
    }
  }

  static std::shared_ptr<const ModelFile> open_model(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    char magic[4] = {};
    f.read(magic, 4);
    return std::memcmp(magic, "GGUF", 4) == 0 ? read_gguf(path) : import_checkpoint(path);
  }

  // Indices of the records the network uses (those whose removal fails the load).
  std::vector<size_t> used() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < base_->records().size(); ++i)
      if (!unused_.count(base_->records()[i].name)) out.push_back(i);
    return out;
  }

  std::shared_ptr<const ModelFile> base_;
  std::set<std::string> unused_;
};

TEST_P(CorruptModel, EachTensorRemovedIsNamed) {
  for (const std::string& name : unused_)
    EXPECT_TRUE(tolerated_unused(name)) << GetParam().label << ": '" << name << "' is in the file but loads fine "
                                        << "without it";
  ASSERT_GT(used().size(), 20u);
  for (size_t i : used()) {
    Variant v(base_);
    const std::string name = v.records()[i].name;
    v.records().erase(v.records().begin() + static_cast<long>(i));
    expect_invalid_model(try_from_file(v), "without " + name, {name});
  }
}

TEST_P(CorruptModel, EachRequiredKeyRemovedIsNamed) {
  int required = 0;
  for (const auto& kv : base_->metadata()) {
    Variant v(base_);
    v.meta().erase(kv.first);
    const Outcome o = try_from_file(v);
    if (o.loaded) continue;  // an optional key with a documented default
    ++required;
    expect_invalid_model(o, "without key " + kv.first, {kv.first});
  }
  EXPECT_GE(required, 6) << "the ViT/head size keys are required";
}

TEST_P(CorruptModel, EachTensorShapePerturbedIsNamed) {
  for (size_t i : used()) {
    const TensorRecord& r = base_->records()[i];
    const std::string name = r.name;
    for (size_t d = 0; d < r.shape.size(); ++d) {
      Variant w(base_);
      TensorRecord& rw = w.records()[i];
      rw.shape[d] += 1;
      w.own(i, dtype_nbytes(rw.dtype, shape_numel(rw.shape)));
      expect_invalid_model(try_from_file(w), str_cat(name, " dim ", d, " + 1"), {name});
    }
  }
}

TEST_P(CorruptModel, IntegerDtypeIsNamed) {
  for (size_t i : used()) {
    Variant v(base_);
    TensorRecord& r = v.records()[i];
    if (r.dtype != DType::F32) continue;
    r.dtype = DType::I32;  // same byte size: only the type is wrong
    expect_invalid_model(try_from_file(v), r.name + " as i32", {r.name});
  }
}

TEST_P(CorruptModel, NonFiniteWeightIsNamed) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  size_t k = 0;
  for (size_t i : used()) {
    Variant v(base_);
    TensorRecord& r = v.records()[i];
    if (r.dtype != DType::F32) continue;
    const std::string name = r.name;
    float* p = static_cast<float*>(v.own(i, r.nbytes));
    p[shape_numel(r.shape) / 2] = bad[k++ % 3];
    expect_invalid_model(try_from_file(v), name + " with a non-finite value", {name, "non-finite"});
  }
  EXPECT_GT(k, 20u);
}

INSTANTIATE_TEST_SUITE_P(AllClasses, CorruptModel, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ModelCase>& p) { return std::string(p.param.label); });

// ---- DA3 nested as depth-anything.cpp's two files (engine/model_nested.h), each corrupted in turn ----

class CorruptNestedFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::string(DACPP_FIXTURES_DIR) + "/models/da3nested_tiny";
    ImportOptions o;
    o.nested_part = ImportOptions::NestedPart::AnyView;
    files_[0] = import_checkpoint(dir, o);
    o.nested_part = ImportOptions::NestedPart::Metric;
    files_[1] = import_checkpoint(dir, o);
    ASSERT_TRUE(load_pair(files_[0], files_[1]).loaded) << load_pair(files_[0], files_[1]).message;
  }

  static Outcome load_pair(std::shared_ptr<const ModelFile> any_view, std::shared_ptr<const ModelFile> metric) {
    return try_load([&] { Model::from_file(merge_nested(any_view, metric)); });
  }
  // The pair with file k (0 any-view, 1 metric branch) replaced by the variant.
  Outcome load_with(int k, const Variant& v) const {
    return k == 0 ? load_pair(v.build(), files_[1]) : load_pair(files_[0], v.build());
  }

  std::shared_ptr<const ModelFile> files_[2];
};

TEST_F(CorruptNestedFiles, EachTensorRemovedIsNamed) {
  for (int k = 0; k < 2; ++k) {
    ASSERT_GT(files_[k]->records().size(), 100u);
    for (size_t i = 0; i < files_[k]->records().size(); ++i) {
      Variant v(files_[k]);
      const std::string name = v.records()[i].name;
      v.records().erase(v.records().begin() + static_cast<long>(i));
      const Outcome o = load_with(k, v);
      if (o.loaded && tolerated_unused(name)) continue;
      expect_invalid_model(o, str_cat("file ", k, " without ", name), {name});
    }
  }
}

TEST_F(CorruptNestedFiles, EachRequiredKeyRemovedIsNamed) {
  for (int k = 0; k < 2; ++k) {
    int required = 0;
    for (const auto& kv : files_[k]->metadata()) {
      Variant v(files_[k]);
      v.meta().erase(kv.first);
      const Outcome o = load_with(k, v);
      if (o.loaded) continue;  // an optional key with a documented default
      ++required;
      expect_invalid_model(o, str_cat("file ", k, " without key ", kv.first), {kv.first});
    }
    EXPECT_GE(required, 6) << "file " << k << ": the ViT/head size keys are required";
  }
}

TEST_F(CorruptNestedFiles, NonFiniteWeightIsNamed) {
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < files_[k]->records().size(); ++i) {
      Variant v(files_[k]);
      TensorRecord& r = v.records()[i];
      ASSERT_EQ(r.dtype, DType::F32) << r.name;  // the importer stores f32
      const std::string name = r.name;
      static_cast<float*>(v.own(i, r.nbytes))[shape_numel(r.shape) / 2] = std::numeric_limits<float>::quiet_NaN();
      const Outcome o = load_with(k, v);
      if (o.loaded && tolerated_unused(name)) continue;
      expect_invalid_model(o, str_cat("file ", k, ": ", name, " with a NaN"), {name, "non-finite"});
    }
}

// ---- DA3 any-view checkpoints: the pose-conditioning parameters (cam_enc), unused by inference ----
// They are not converted, so they never reach a ModelFile: each case writes the corrupted checkpoint folder.

class CorruptCheckpoint : public ::testing::Test {
 protected:
  void open(const std::string& fixture) {
    const std::string src = std::string(DACPP_FIXTURES_DIR) + "/models/" + fixture;
    ck_ = read_safetensors(src + "/model.safetensors");
    config_ = testing::read_bytes(src + "/config.json");
    dir_ = ::dacpp::testing::scratch_path("corrupt_cam_enc");
    ::mkdir(dir_.c_str(), 0755);
    for (size_t i = 0; i < ck_.tensors.size(); ++i)
      if (ck_.tensors[i].name.find(".cam_enc.") != std::string::npos) cam_enc_.push_back(i);
    ASSERT_TRUE(load(ck_.tensors).loaded) << load(ck_.tensors).message;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    std::remove((dir_ + "/model.safetensors").c_str());
    std::remove((dir_ + "/config.json").c_str());
    ::rmdir(dir_.c_str());
  }

  Outcome load(const std::vector<TensorRecord>& tensors) const {
    testing::write_safetensors(dir_ + "/model.safetensors", tensors);
    testing::write_bytes(dir_ + "/config.json", config_);
    return try_load([&] { Model::load(dir_); });
  }
  // The checkpoint with tensor i's data replaced by `bytes` (shape and dtype as set in `r`).
  Outcome load_with(size_t i, TensorRecord r, const std::vector<uint8_t>& bytes) const {
    std::vector<TensorRecord> t = ck_.tensors;
    r.data = bytes.data();
    r.nbytes = bytes.size();
    t[i] = r;
    return load(t);
  }

  CheckpointTensors ck_;
  std::string config_, dir_;
  std::vector<size_t> cam_enc_;
};

TEST_F(CorruptCheckpoint, EachParameterCorruptedIsNamed) {
  open("da3small_tiny");
  // model/cam_enc.py: pose_branch (2 linears), token_norm, trunk_norm, 4 blocks of 14 parameters.
  ASSERT_EQ(cam_enc_.size(), 8u + 4u * 14u);
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  size_t k = 0;
  for (size_t i : cam_enc_) {
    const TensorRecord& r = ck_.tensors[i];
    ASSERT_EQ(r.dtype, DType::F32) << r.name;
    std::vector<TensorRecord> removed = ck_.tensors;
    removed.erase(removed.begin() + static_cast<long>(i));
    expect_invalid_model(load(removed), "without " + r.name, {r.name, "missing"});
    for (size_t d = 0; d < r.shape.size(); ++d) {
      TensorRecord w = r;
      w.shape[d] += 1;
      expect_invalid_model(load_with(i, w, std::vector<uint8_t>(dtype_nbytes(w.dtype, shape_numel(w.shape)), 0)),
                           str_cat(r.name, " dim ", d, " + 1"), {r.name, "shape"});
    }
    const auto* p = static_cast<const uint8_t*>(r.data);
    std::vector<uint8_t> bytes(p, p + r.nbytes);
    TensorRecord as_int = r;
    as_int.dtype = DType::I32;  // same byte size: only the type is wrong
    expect_invalid_model(load_with(i, as_int, bytes), r.name + " as i32", {r.name, "i32"});
    const float v = bad[k++ % 3];
    std::memcpy(bytes.data() + (shape_numel(r.shape) / 2) * sizeof(float), &v, sizeof(float));
    expect_invalid_model(load_with(i, r, bytes), r.name + " with a non-finite value", {r.name, "non-finite"});
  }
}

TEST_F(CorruptCheckpoint, NonFiniteHalfIsNamed) {
  open("da3giant_tiny");  // an f16 checkpoint
  ASSERT_FALSE(cam_enc_.empty());
  const TensorRecord& r = ck_.tensors[cam_enc_.back()];
  ASSERT_EQ(r.dtype, DType::F16) << r.name;
  const auto* p = static_cast<const uint8_t*>(r.data);
  std::vector<uint8_t> bytes(p, p + r.nbytes);
  const uint16_t nan = 0x7e00;
  std::memcpy(bytes.data() + 2 * (shape_numel(r.shape) / 2), &nan, 2);
  expect_invalid_model(load_with(cam_enc_.back(), r, bytes), r.name + " with an f16 NaN", {r.name, "non-finite"});
}

// An integer dtype on a weight the network uses, in an official-format checkpoint (not only in GGUF): the importer
// must not quietly convert it to f32. Every mapped parameter of the checkpoint is tried, cam_enc included.
TEST_F(CorruptCheckpoint, IntegerWeightIsNamed) {
  open("da3small_tiny");
  int tried = 0;
  for (size_t i = 0; i < ck_.tensors.size(); ++i) {
    const TensorRecord& r = ck_.tensors[i];
    if (r.dtype != DType::F32) continue;
    const auto* p = static_cast<const uint8_t*>(r.data);
    TensorRecord as_int = r;
    as_int.dtype = DType::I32;  // same byte size: only the type is wrong
    const Outcome o = load_with(i, as_int, std::vector<uint8_t>(p, p + r.nbytes));
    if (o.loaded) continue;  // a parameter the importer ignores (e.g. the GS adapter), integer or not
    ++tried;
    expect_invalid_model(o, r.name + " as i32", {r.name, "i32"});
  }
  EXPECT_GT(tried, 100) << "the network's parameters were not tried";
}

// ---- whole-file cases, through Model::load ----

std::string temp_path(const std::string& name) { return ::dacpp::testing::scratch_path("corrupt_model", name); }

TEST(CorruptModelFile, WrongFamilyGgufIsNamed) {
  const std::string path = temp_path("llama.gguf");
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_u32("llama.embedding_length", 8);
  const std::vector<float> emb(8 * 4, 0.5f);
  w.add_tensor("token_embd.weight", DType::F32, {4, 8}, emb.data(), emb.size() * sizeof(float));
  w.write(path);
  expect_invalid_model(try_load([&] { Model::load(path); }), "llama GGUF", {"general.architecture", "llama"});
  std::remove(path.c_str());
}

TEST(CorruptModelFile, ZeroByteFilesAreInvalid) {
  for (const char* name : {"empty.gguf", "empty.pth", "empty.safetensors"}) {
    const std::string path = temp_path(name);
    { std::ofstream f(path, std::ios::binary); }
    expect_invalid_model(try_load([&] { Model::load(path); }), name, {path});
    std::remove(path.c_str());
  }
}

// A hand-written GGUF v3 whose single tensor claims 64 GiB (f32 [16384, 1048576]) in a file of a few hundred bytes.
void write_huge_claim(const std::string& path) {
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) { u64(s.size()); b += s; };
  b += "GGUF";
  u32(3);
  u64(1);  // tensors
  u64(1);  // kv
  str("general.architecture");
  u32(8);  // string
  str("depthanything3");
  str("vit.patch_embd.weight");
  u32(2);
  u64(1048576);  // ne0
  u64(16384);    // ne1
  u32(0);        // f32
  u64(0);        // offset
  b.resize((b.size() + 31) / 32 * 32, '\0');
  b.append(64, '\0');  // a token of data
  std::ofstream(path, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

TEST(CorruptModelFile, GgufClaiming64GiBIsRejectedBeforeUse) {
  const std::string path = temp_path("huge.gguf");
  write_huge_claim(path);
  expect_invalid_model(try_load([&] { Model::load(path); }), "64 GiB claim", {"vit.patch_embd.weight", "68719476736"});
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dacpp
