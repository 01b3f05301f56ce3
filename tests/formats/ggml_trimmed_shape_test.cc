// GGUF files written by ggml itself (gguf_write_to_file: depth-anything.cpp's `quantize`, so every published
// f16/q8_0/q*_k file) record only ggml_n_dims of a tensor's `ne`: the trailing ne of 1 — the LEADING torch dims of
// 1 — are dropped ([1, 32, 1, 1] → [32, 1, 1], cls_token [1, 1, C] → [C]). Found by the depth-anything.cpp interop
// check: its quantized files failed to load with "tensor 'head.scratch.out2b.weight' has shape [32,1,1]".
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/runner.h"
#include "formats/gguf_reader.h"
#include "formats/gguf_writer.h"
#include "formats/model_file.h"
#include "formats/open_model_file.h"
#include "gguf_test_util.h"
#include "models/model_test_util.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

using gguf_test::ScratchFile;

TEST(GgmlTrimmedShape, ShapeRules) {
  EXPECT_TRUE(same_shape_up_to_leading_ones({32, 1, 1}, {1, 32, 1, 1}));
  EXPECT_TRUE(same_shape_up_to_leading_ones({64}, {1, 1, 64}));
  EXPECT_TRUE(same_shape_up_to_leading_ones({1370, 64}, {1, 1370, 64}));
  EXPECT_TRUE(same_shape_up_to_leading_ones({1, 1}, {1}));
  EXPECT_FALSE(same_shape_up_to_leading_ones({32, 1}, {32}));  // trailing torch dims are real
  EXPECT_FALSE(same_shape_up_to_leading_ones({2, 16, 1, 1}, {1, 32, 1, 1}));
  EXPECT_FALSE(same_shape_up_to_leading_ones({64, 2}, {1, 2, 64}));
  EXPECT_EQ(with_rank({32, 1, 1}, 4), (Shape{1, 32, 1, 1}));
  EXPECT_EQ(with_rank({2, 32, 1, 1}, 4), (Shape{2, 32, 1, 1}));
  EXPECT_EQ(with_rank({3, 2, 32, 1, 1}, 4), (Shape{3, 2, 32, 1, 1}));
}

TEST(GgmlTrimmedShape, TensorIsReturnedWithTheExpectedShape) {
  std::vector<float> v(32);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i) - 3.f;
  TensorRecord r;
  r.name = "head.scratch.out2b.weight";
  r.shape = {32, 1, 1};
  r.data = v.data();
  r.nbytes = v.size() * sizeof(float);
  ModelFile mf("trimmed.gguf", {}, {r}, nullptr, 0);
  Tensor t = mf.tensor_f32(r.name, {1, 32, 1, 1});
  ASSERT_EQ(t.shape(), (Shape{1, 32, 1, 1}));
  EXPECT_EQ(std::memcmp(t.data<float>(), v.data(), r.nbytes), 0);
  gguf_test::expect_error([&] { mf.tensor_f32(r.name, {2, 16, 1, 1}); }, ErrorCode::InvalidModel,
                          {"out2b.weight", "[32,1,1]", "[2,16,1,1]"});
  gguf_test::expect_error([&] { mf.tensor_f32(r.name, {32, 1}); }, ErrorCode::InvalidModel, {"out2b.weight"});
}

Shape drop_leading_ones(const Shape& s) {
  size_t i = 0;
  while (i + 1 < s.size() && s[i] == 1) ++i;
  return Shape(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
}

void copy_value(GgufWriter& w, const std::string& k, const MetaValue& v) {
  switch (v.type) {
    case MetaType::U32: w.add_u32(k, static_cast<uint32_t>(v.u)); break;
    case MetaType::I32: w.add_i32(k, static_cast<int32_t>(v.i)); break;
    case MetaType::F32: w.add_f32(k, static_cast<float>(v.f)); break;
    case MetaType::Bool: w.add_bool(k, v.i != 0); break;
    case MetaType::String: w.add_string(k, v.s); break;
    case MetaType::Array:
      if (v.elem_type == MetaType::F32) {
        w.add_f32_array(k, std::vector<float>(v.af.begin(), v.af.end()));
      } else if (v.elem_type == MetaType::String) {
        w.add_string_array(k, v.as);
      } else {
        w.add_i32_array(k, std::vector<int32_t>(v.ai.begin(), v.ai.end()));
      }
      break;
    default: FAIL() << "unexpected metadata type for " << k;
  }
}

// Writes `mf` again the way ggml's writer does (leading 1-sized torch dims dropped); returns how many changed.
int write_trimmed(const ModelFile& mf, const std::string& path) {
  GgufWriter w;
  for (const auto& [k, v] : mf.metadata()) copy_value(w, k, v);
  int changed = 0;
  for (const TensorRecord& r : mf.records()) {
    const Shape s = drop_leading_ones(r.shape);
    changed += s != r.shape;
    w.add_tensor(r.name, r.dtype, s, r.data, r.nbytes);
  }
  w.write(path);
  return changed;
}

class GgmlTrimmedModel : public ::testing::TestWithParam<const char*> {};

TEST_P(GgmlTrimmedModel, LoadsAndRunsIdentically) {
  const std::string dir = std::string(DACPP_FIXTURES_DIR) + "/models/";
  const std::string src = dir + GetParam();
  if (!std::filesystem::exists(src)) GTEST_SKIP() << src << " absent";
  ScratchFile trimmed("trim_trimmed.gguf");
  std::shared_ptr<const ModelFile> mf = open_model_file(src);
  ASSERT_GE(write_trimmed(*mf, trimmed.path()), 3);  // out2b (+ sky_out2b), cls_token, pos_embed at least
  EXPECT_EQ(read_gguf(trimmed.path())->record("head.scratch.out2b.weight").shape, (Shape{32, 1, 1}));

  std::shared_ptr<const Model> a = Model::load(src), b = Model::load(trimmed.path());
  const std::string fixture = dir + std::filesystem::path(GetParam()).begin()->string();
  Tensor input = testing::load_npy(fixture + "/input.npy");
  ASSERT_TRUE(input.defined());
  const Shape s = input.shape();
  if (s.size() == 5) input = input.reshape({s[0] * s[1], s[2], s[3], s[4]});
  ForwardResult ra = Runner(a, testing::runner_options(2)).forward(input);
  ForwardResult rb = Runner(b, testing::runner_options(2)).forward(input);
  ASSERT_EQ(ra.depth.shape(), rb.depth.shape());
  EXPECT_EQ(std::memcmp(ra.depth.data<float>(), rb.depth.data<float>(), ra.depth.nbytes()), 0);
  EXPECT_EQ(ra.sky.defined(), rb.sky.defined());
  if (ra.sky.defined()) {
    EXPECT_EQ(std::memcmp(ra.sky.data<float>(), rb.sky.data<float>(), ra.sky.nbytes()), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GgmlTrimmedModel,
                         ::testing::Values("da2_tiny_rel/da2_tiny_rel.pth", "da3mono_tiny"));

}  // namespace
}  // namespace dacpp
