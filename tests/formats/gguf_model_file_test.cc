// ModelFile typed getters over every GGUF value type (files built byte by byte), type-mismatch and range errors,
// and the constructor's own checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "formats/gguf_reader.h"
#include "formats/model_file.h"
#include "gguf_test_util.h"

namespace dacpp {
namespace {

using gguf_test::expect_error;
using gguf_test::RawGguf;
using gguf_test::ScratchFile;

enum : uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 };

class GgufModelFile : public ::testing::Test {
 protected:
  void SetUp() override {
    RawGguf g;
    g.header(0, 19);
    g.str("v.u8").u32(U8).u8(200);
    g.str("v.i8").u32(I8).u8(0xFB);             // -5
    g.str("v.u16").u32(U16).u8(0x60).u8(0xEA);  // 60000
    g.str("v.i16").u32(I16).u8(0xD4).u8(0xFE);  // -300
    g.str("v.u64big").u32(U64).u64(5000000000ull);
    g.str("v.u64").u32(U64).u64(7);
    g.str("v.i64").u32(I64).u64(static_cast<uint64_t>(int64_t{-7}));
    g.str("v.i64big").u32(I64).u64(uint64_t(1) << 40);
    g.str("v.f64").u32(F64).u64(0x4004000000000000ull);  // 2.5
    g.str("v.f32").u32(F32).f32(-0.125f);
    g.str("v.bool").u32(BOOL).u8(1);
    g.str("v.str").u32(STR).str("hello");
    g.str("a.u32").u32(ARR).u32(U32).u64(3).u32(1).u32(2).u32(4000000000u);
    g.str("a.i64").u32(ARR).u32(I64).u64(2).u64(static_cast<uint64_t>(int64_t{-3})).u64(9);
    g.str("a.u64").u32(ARR).u32(U64).u64(2).u64(1).u64(~uint64_t(0));
    g.str("a.f64").u32(ARR).u32(F64).u64(1).u64(0x4004000000000000ull);
    g.str("a.f32").u32(ARR).u32(F32).u64(2).f32(0.5f).f32(-1.0f);
    g.str("a.bool").u32(ARR).u32(BOOL).u64(2).u8(1).u8(0);
    g.str("a.nested").u32(ARR).u32(ARR).u64(2).u32(STR).u64(1).str("x").u32(U8).u64(2).u8(1).u8(2);
    gguf_test::spill(file_.path(), g.bytes());
    m_ = read_gguf(file_.path());
  }

  void expect_model_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
    std::vector<std::string> all = parts;
    all.push_back("model '" + file_.path() + "'");
    expect_error(fn, ErrorCode::InvalidModel, all);
  }

  ScratchFile file_{"model_file.gguf"};
  std::shared_ptr<const ModelFile> m_;
};

TEST_F(GgufModelFile, ValueTypesAreRecorded) {
  EXPECT_EQ(m_->metadata().size(), 19u);
  EXPECT_EQ(m_->value("v.u16").type, MetaType::U16);
  EXPECT_EQ(m_->value("v.u64big").i, 5000000000ll);
  EXPECT_EQ(m_->value("a.nested").type, MetaType::Array);
  EXPECT_EQ(m_->value("a.nested").elem_type, MetaType::Array);
  EXPECT_EQ(m_->value("a.nested").array_size(), 2u);
  EXPECT_EQ(m_->value("a.bool").ai, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(m_->value("a.f64").array_size(), 1u);
  EXPECT_EQ(m_->value("v.str").array_size(), 0u);
}

TEST_F(GgufModelFile, IntegerGettersAcceptAnyIntegerThatFits) {
  EXPECT_EQ(m_->get_u32("v.u8"), 200u);
  EXPECT_EQ(m_->get_u32("v.u16"), 60000u);
  EXPECT_EQ(m_->get_u32("v.u64"), 7u);
  EXPECT_EQ(m_->get_i32("v.i8"), -5);
  EXPECT_EQ(m_->get_i32("v.i16"), -300);
  EXPECT_EQ(m_->get_i32("v.u16"), 60000);
  EXPECT_EQ(m_->get_i32("v.i64"), -7);
  expect_model_error([&] { m_->get_u32("v.u64big"); }, {"'v.u64big'", "5000000000", "u64", "does not fit in u32"});
  expect_model_error([&] { m_->get_u32("v.i8"); }, {"'v.i8'", "-5", "does not fit in u32"});
  expect_model_error([&] { m_->get_i32("v.i64big"); }, {"'v.i64big'", "1099511627776", "i64", "does not fit in i32"});
  expect_model_error([&] { m_->get_u32("v.f32"); }, {"metadata key 'v.f32' has type f32, expected u32"});
  expect_model_error([&] { m_->get_i32("v.bool"); }, {"metadata key 'v.bool' has type bool, expected i32"});
}

TEST_F(GgufModelFile, OtherScalarGetters) {
  EXPECT_EQ(m_->get_f32("v.f64"), 2.5f);
  EXPECT_EQ(m_->get_f32("v.f32"), -0.125f);
  EXPECT_TRUE(m_->get_bool("v.bool"));
  EXPECT_EQ(m_->get_string("v.str"), "hello");
  expect_model_error([&] { m_->get_f32("v.str"); }, {"metadata key 'v.str' has type string, expected f32"});
  expect_model_error([&] { m_->get_f32("v.u8"); }, {"'v.u8' has type u8, expected f32"});
  expect_model_error([&] { m_->get_bool("v.u8"); }, {"'v.u8' has type u8, expected bool"});
  expect_model_error([&] { m_->get_string("a.u32"); }, {"'a.u32' has type array of u32, expected string"});
  expect_model_error([&] { m_->get_u32("nope.key"); }, {"metadata key 'nope.key' is missing"});
}

TEST_F(GgufModelFile, ArrayGetters) {
  EXPECT_EQ(m_->get_i32_array("a.i64"), (std::vector<int32_t>{-3, 9}));
  EXPECT_EQ(m_->get_f32_array("a.f64"), (std::vector<float>{2.5f}));
  EXPECT_EQ(m_->get_f32_array("a.f32"), (std::vector<float>{0.5f, -1.0f}));
  expect_model_error([&] { m_->get_i32_array("a.u32"); }, {"'a.u32' element 2 value 4000000000 (u32)"});
  expect_model_error([&] { m_->get_i32_array("a.u64"); }, {"'a.u64' element 1 value 18446744073709551615 (u64)"});
  expect_model_error([&] { m_->get_i32_array("a.f32"); }, {"'a.f32' has type array of f32, expected array of i32"});
  expect_model_error([&] { m_->get_i32_array("a.bool"); }, {"has type array of bool, expected array of i32"});
  expect_model_error([&] { m_->get_i32_array("v.i8"); }, {"'v.i8' has type i8, expected array of i32"});
  expect_model_error([&] { m_->get_f32_array("a.i64"); }, {"'a.i64' has type array of i64, expected array of f32"});
}

TEST_F(GgufModelFile, OptionalGetters) {
  EXPECT_EQ(m_->get_u32_or("missing", 14), 14u);
  EXPECT_EQ(m_->get_i32_or("missing", -2), -2);
  EXPECT_EQ(m_->get_f32_or("missing", 0.25f), 0.25f);
  EXPECT_TRUE(m_->get_bool_or("missing", true));
  EXPECT_EQ(m_->get_string_or("missing", "fb"), "fb");
  EXPECT_EQ(m_->get_u32_or("v.u8", 14), 200u);
  expect_model_error([&] { m_->get_u32_or("v.str", 14); }, {"'v.str' has type string, expected u32"});
  expect_model_error([&] { m_->get_string_or("v.u8", "x"); }, {"'v.u8' has type u8, expected string"});
}

TEST(GgufModelFileCtor, RejectsDuplicateAndMisSizedRecords) {
  static const float kData[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto rec = [](const std::string& name, size_t nbytes) {
    TensorRecord r;
    r.name = name;
    r.shape = {2, 4};
    r.data = kData;
    r.nbytes = nbytes;
    return r;
  };
  expect_error(
      [&] {
        ModelFile("m.pth", {}, {rec("w", 32), rec("w", 32)}, nullptr, 64);
      },
      ErrorCode::InvalidModel, {"model 'm.pth'", "tensor 'w' appears more than once"});
  expect_error([&] { ModelFile("m.pth", {}, {rec("w", 16)}, nullptr, 64); }, ErrorCode::InvalidModel,
               {"model 'm.pth'", "'w'", "16 bytes", "expected 32"});
  ModelFile ok("m.pth", {}, {rec("w", 32)}, nullptr, 64);
  EXPECT_EQ(ok.tensor_f32("w").data<float>()[7], 8.0f);
}

}  // namespace
}  // namespace dacpp
