// GgufWriter → read_gguf round trips: every KV type, every tensor dtype, alignment, typed getters, tensor_f32,
// writer argument errors and atomic, checked output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/fault.h"
#include "formats/dequant.h"
#include "formats/gguf_reader.h"
#include "formats/gguf_writer.h"
#include "gguf_sample.h"
#include "gguf_test_util.h"

namespace dacpp {
namespace {

using gguf_test::expect_error;

bool exists(const std::string& p) {
  return ::access(p.c_str(), F_OK) == 0;
}

TEST(GgufRoundTrip, MetadataOfEveryWriterType) {
  const gguf_test::ScratchFile file("rt_meta.gguf");
  const std::string& path = file.path();
  gguf_test::sample_writer().write(path);
  auto m = read_gguf(path);
  EXPECT_EQ(m->path(), path);
  EXPECT_EQ(m->get_string("general.architecture"), "depthanything3");
  EXPECT_EQ(m->value("depthanything3.vit.depth").type, MetaType::U32);
  EXPECT_EQ(m->get_u32("depthanything3.vit.depth"), 12u);
  EXPECT_EQ(m->get_i32("depthanything3.vit.depth"), 12);
  EXPECT_EQ(m->value("depthanything3.vit.alt_start").type, MetaType::I32);
  EXPECT_EQ(m->get_i32("depthanything3.vit.alt_start"), -1);
  EXPECT_EQ(m->get_f32("depthanything3.vit.rope_freq"), 100.0f);
  EXPECT_TRUE(m->get_bool("depthanything3.vit.cat_token"));
  EXPECT_FALSE(m->get_bool("depthanything3.vit.qkv_bias"));
  EXPECT_EQ(m->get_string("depthanything3.img.resize_mode"), "upper_bound");
  const MetaValue& ol = m->value("depthanything3.vit.out_layers");
  EXPECT_EQ(ol.elem_type, MetaType::I32);  // depth-anything.cpp accepts INT32 arrays only
  EXPECT_EQ(ol.array_size(), 4u);
  EXPECT_EQ(m->get_i32_array("depthanything3.vit.out_layers"), (std::vector<int32_t>{5, 7, 9, -11}));
  EXPECT_EQ(m->value("depthanything3.img.mean").elem_type, MetaType::F32);
  EXPECT_EQ(m->get_f32_array("depthanything3.img.mean"), (std::vector<float>{0.485f, 0.456f, 0.406f}));
  EXPECT_EQ(m->value("depthanything3.test.names").as, (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_FALSE(m->has_key("general.alignment"));
  EXPECT_EQ(m->metadata().size(), 10u);
}

TEST(GgufRoundTrip, TensorsOfEveryDtype) {
  const gguf_test::ScratchFile file("rt_tensors.gguf");
  const std::string& path = file.path();
  gguf_test::sample_writer().write(path);
  auto m = read_gguf(path);
  const auto& specs = gguf_test::sample_tensors();
  ASSERT_EQ(m->records().size(), specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    const TensorRecord& r = m->record(specs[k].name);
    const Tensor want = gguf_test::sample_tensor(k);
    EXPECT_EQ(r.dtype, specs[k].dtype) << r.name;
    EXPECT_EQ(r.shape, specs[k].shape) << r.name;
    ASSERT_EQ(r.nbytes, want.nbytes()) << r.name;
    EXPECT_EQ(std::memcmp(r.data, want.raw(), r.nbytes), 0) << r.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data) % 32, 0u) << r.name;
    const Tensor f = m->tensor_f32(r.name);
    std::vector<float> expect(static_cast<size_t>(want.numel()));
    dequantize_row(r.dtype, want.raw(), expect.data(), want.numel());
    ASSERT_EQ(f.shape(), specs[k].shape);
    for (int64_t i = 0; i < f.numel(); ++i) ASSERT_EQ(f.data<float>()[i], expect[i]) << r.name << " [" << i << "]";
  }
}

TEST(GgufRoundTrip, F32IsAZeroCopyViewAndShapesAreChecked) {
  const gguf_test::ScratchFile file("rt_view.gguf");
  const std::string& path = file.path();
  gguf_test::sample_writer().write(path);
  Tensor t;
  const void* rec_data = nullptr;
  {
    auto m = read_gguf(path);
    rec_data = m->record("t.f32").data;
    t = m->tensor_f32("t.f32", {2, 3, 32});
    expect_error(
        [&] {
          m->tensor_f32("t.f32", {3, 2, 32});
        },
        ErrorCode::InvalidModel, {path, "tensor 't.f32' has shape [2,3,32], expected [3,2,32]"});
    expect_error([&] { m->tensor_f32("nope"); }, ErrorCode::InvalidModel, {path, "tensor 'nope' is missing"});
  }
  EXPECT_EQ(t.raw(), rec_data);  // the view keeps the mapping alive after the ModelFile is gone
  const std::vector<float> v = gguf_test::sample_values(t.numel(), 0);
  for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.data<float>()[i], v[i]);
}

TEST(GgufRoundTrip, NonDefaultAlignmentIsWrittenAndHonoured) {
  const gguf_test::ScratchFile file("rt_align.gguf");
  const std::string& path = file.path();
  GgufWriter w = gguf_test::sample_writer();
  w.set_alignment(256);
  w.write(path);
  auto m = read_gguf(path);
  EXPECT_EQ(m->get_u32("general.alignment"), 256u);
  for (const TensorRecord& r : m->records()) EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data) % 256, 0u) << r.name;
}

TEST(GgufRoundTrip, EmptyFileOfNoTensors) {
  const gguf_test::ScratchFile file("rt_empty.gguf");
  const std::string& path = file.path();
  GgufWriter w;
  w.add_string("general.architecture", "x");
  w.write(path);
  auto m = read_gguf(path);
  EXPECT_TRUE(m->records().empty());
  EXPECT_EQ(m->get_string("general.architecture"), "x");
}

TEST(GgufWriterErrors, RejectsBadArguments) {
  GgufWriter w;
  w.add_u32("a.b", 1);
  expect_error([&] { w.add_string("a.b", "x"); }, ErrorCode::InvalidArgument, {"'a.b'", "twice"});
  expect_error([&] { w.add_u32("general.alignment", 64); }, ErrorCode::InvalidArgument, {"set_alignment"});
  expect_error([&] { w.set_alignment(48); }, ErrorCode::InvalidArgument, {"48"});
  expect_error([&] { w.set_alignment(2u << 20); }, ErrorCode::InvalidArgument, {"power of two"});
  const float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  w.add_tensor("w", DType::F32, {2, 4}, f, sizeof f);
  expect_error([&] { w.add_tensor("w", DType::F32, {8}, f, sizeof f); }, ErrorCode::InvalidArgument, {"'w'", "twice"});
  expect_error(
      [&] {
        w.add_tensor("x", DType::F32, {3, 4}, f, sizeof f);
      },
      ErrorCode::InvalidArgument, {"'x'", "32 bytes"});
  expect_error([&] { w.add_tensor("q", DType::Q8_0, {2, 16}, f, 34); }, ErrorCode::InvalidArgument, {"'q'"});
  expect_error([&] { w.add_tensor(std::string(64, 'n'), DType::F32, {8}, f, sizeof f); }, ErrorCode::InvalidArgument,
               {"63 bytes"});
  expect_error(
      [&] {
        w.add_tensor("r5", Tensor::zeros({1, 1, 1, 1, 8}));
      },
      ErrorCode::InvalidArgument, {"'r5'", "1..4 dimensions"});
}

TEST(GgufWriterErrors, IoFailuresNameThePathAndLeaveNoFile) {
  GgufWriter w = gguf_test::sample_writer();
  expect_error([&] { w.write("/nonexistent_dir_dacpp/x.gguf"); }, ErrorCode::Io, {"/nonexistent_dir_dacpp/x.gguf"});
  const gguf_test::ScratchFile file("rt_fault.gguf");
  const std::string& path = file.path();
  ::unlink(path.c_str());
  for (const char* spec : {"output.write:1", "output.write:3", "output.write:9"}) {
    fault::configure(spec);
    expect_error([&] { w.write(path); }, ErrorCode::Io, {path, "injected fault"});
    fault::configure("");
    EXPECT_FALSE(exists(path)) << spec;
    EXPECT_TRUE(gguf_test::temporaries_of(path).empty()) << spec;
  }
  w.write(path);
  EXPECT_EQ(read_gguf(path)->records().size(), gguf_test::sample_tensors().size());
}

TEST(GgufWriterErrors, FailedRewriteKeepsTheOldFile) {
  const gguf_test::ScratchFile file("rt_keep.gguf");
  const std::string& path = file.path();
  GgufWriter small;
  small.add_string("general.architecture", "old");
  small.write(path);
  fault::configure("output.write:2");
  EXPECT_THROW(gguf_test::sample_writer().write(path), Error);
  fault::configure("");
  EXPECT_EQ(read_gguf(path)->get_string("general.architecture"), "old");
}

// Two writers of one path at once (two `dacpp convert` runs, ctest -j): each writes its own temporary, both
// succeed, and the file is one of the two whole files, never an interleaving or a failed rename.
TEST(GgufWriterErrors, ConcurrentWritersOfOnePathEachLeaveAWholeFile) {
  const gguf_test::ScratchFile file("rt_race.gguf");
  const std::string& path = file.path();
  GgufWriter a = gguf_test::sample_writer();
  GgufWriter b;
  b.add_string("general.architecture", "other");
  b.add_tensor("t", Tensor::zeros({64, 64}));
  for (int round = 0; round < 20; ++round) {
    std::string err_a, err_b;
    std::thread ta([&] {
      try {
        a.write(path);
      } catch (const Error& e) {
        err_a = e.what();
      }
    });
    std::thread tb([&] {
      try {
        b.write(path);
      } catch (const Error& e) {
        err_b = e.what();
      }
    });
    ta.join();
    tb.join();
    ASSERT_EQ(err_a, "") << "round " << round;
    ASSERT_EQ(err_b, "") << "round " << round;
    const std::string arch = read_gguf(path)->get_string("general.architecture");
    EXPECT_TRUE(arch == "other" || read_gguf(path)->records().size() == gguf_test::sample_tensors().size()) << arch;
    EXPECT_TRUE(gguf_test::temporaries_of(path).empty()) << "round " << round;
  }
}

// Writes the sample and the engine's own f32 decoding of it into $DACPP_GGUF_INTEROP_DIR for the gguf-py check
// (docs: the helper report); skipped when the variable is unset.
TEST(GgufInterop, WritesSampleForGgufPy) {
  const char* dir = std::getenv("DACPP_GGUF_INTEROP_DIR");
  if (!dir) GTEST_SKIP() << "DACPP_GGUF_INTEROP_DIR not set";
  const std::string sample = std::string(dir) + "/sample.gguf";
  gguf_test::sample_writer().write(sample);
  auto m = read_gguf(sample);
  GgufWriter decoded;
  decoded.add_string("general.architecture", "decoded");
  for (const TensorRecord& r : m->records()) decoded.add_tensor(r.name, m->tensor_f32(r.name).clone());
  decoded.write(std::string(dir) + "/decoded.gguf");
}

}  // namespace
}  // namespace dacpp
