// Tests of the safetensors reader: a well-formed file, and a matrix of corrupt headers that must each be an
// InvalidModel error naming the file and the field.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "formats/checkpoint_test_util.h"
#include "formats/safetensors_reader.h"

namespace dacpp {
namespace {

using testing::put_le;
using testing::scratch_path;
using testing::write_bytes;

// header length (LE u64) + header + data.
std::string st_file(const std::string& header, const std::string& data) {
  std::string out;
  put_le(out, header.size(), 8);
  return out + header + data;
}

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

void expect_invalid(const std::string& bytes, const std::vector<std::string>& needles) {
  const std::string path = scratch_path("bad.safetensors");
  write_bytes(path, bytes);
  try {
    read_safetensors(path);
    ADD_FAILURE() << "no error (expected '" << needles.front() << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel) << e.what();
    EXPECT_NE(e.message().find(path), std::string::npos) << e.what();
    for (const auto& n : needles) EXPECT_NE(e.message().find(n), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(SafetensorsReader, ReadsTensorsAndMetadata) {
  std::string data = floats({1.5f, -2.f, 3.25f, 4.f, 5.f, 6.f});
  data += std::string("\x00\x3c\x00\xc0", 4);                  // f16 1.0, -2.0
  data += std::string("\x80\x3f\x40\x40", 4);                  // bf16 1.0, 3.0
  std::string i64;
  put_le(i64, static_cast<uint64_t>(-7), 8);
  put_le(i64, 9, 8);
  data += i64;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("h":{"dtype":"F16","shape":[2],"data_offsets":[24,28]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[28,32]},)"
      R"("n":{"dtype":"I64","shape":[2],"data_offsets":[32,48]},"e":{"dtype":"F32","shape":[0,4],"data_offsets":[48,48]}})";
  const std::string path = scratch_path("ok.safetensors");
  write_bytes(path, st_file(header + "   ", data));  // trailing header padding is allowed
  const CheckpointTensors ck = read_safetensors(path);
  EXPECT_EQ(ck.metadata.at("format"), "pt");
  ASSERT_EQ(ck.tensors.size(), 5u);
  std::map<std::string, TensorRecord> by;
  for (const auto& r : ck.tensors) by[r.name] = r;
  EXPECT_EQ(by["w"].shape, (Shape{2, 3}));
  EXPECT_EQ(by["w"].dtype, DType::F32);
  EXPECT_EQ(static_cast<const float*>(by["w"].data)[2], 3.25f);
  EXPECT_EQ(by["h"].dtype, DType::F16);
  EXPECT_EQ(by["b"].dtype, DType::BF16);
  EXPECT_EQ(by["n"].dtype, DType::I32);
  EXPECT_EQ(static_cast<const int32_t*>(by["n"].data)[0], -7);
  EXPECT_EQ(static_cast<const int32_t*>(by["n"].data)[1], 9);
  EXPECT_EQ(by["e"].shape, (Shape{0, 4}));
  for (const auto& r : ck.tensors)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data) % (r.dtype == DType::F32 || r.dtype == DType::I32 ? 4 : 2), 0u);
  std::remove(path.c_str());
}

TEST(SafetensorsReader, CorruptMatrix) {
  const std::string d = floats({1, 2, 3, 4});
  auto one = [&](const std::string& entry) { return st_file("{\"t\":" + entry + "}", d); };
  expect_invalid("", {"too short"});
  expect_invalid(std::string("\x10\x00\x00", 3), {"too short"});
  std::string huge;
  put_le(huge, 1000, 8);
  expect_invalid(huge + "{}", {"header length 1000", "larger than the file"});
  expect_invalid(st_file("{\"t\": [", d), {"not valid JSON"});
  expect_invalid(st_file("[1,2]", d), {"not a JSON object"});
  expect_invalid(one(R"({"dtype":"Q4","shape":[4],"data_offsets":[0,16]})"), {"'t'", "'dtype'", "Q4"});
  expect_invalid(one(R"({"shape":[4],"data_offsets":[0,16]})"), {"'t'", "'dtype'"});
  expect_invalid(one(R"({"dtype":"F32","shape":[-4],"data_offsets":[0,16]})"), {"'t'", "'shape'"});
  expect_invalid(one(R"({"dtype":"F32","shape":4,"data_offsets":[0,16]})"), {"'t'", "'shape'"});
  expect_invalid(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0]})"), {"'t'", "'data_offsets'"});
  expect_invalid(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0,32]})"), {"'t'", "past the data region"});
  expect_invalid(one(R"({"dtype":"F32","shape":[4],"data_offsets":[8,4]})"), {"'t'", "begin > end"});
  expect_invalid(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,16]})"), {"'t'", "needs 12"});
  expect_invalid(one(R"({"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,16]})"), {"'t'"});
  expect_invalid(one("3"), {"'t'", "not a JSON object"});
  expect_invalid(st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", d),
                 {"overlap", "'a'", "'b'"});
  expect_invalid(st_file(R"({"__metadata__":[1]})", d), {"__metadata__"});
}

TEST(SafetensorsReader, MissingFileIsNotFound) {
  try {
    read_safetensors("/nonexistent/dir/m.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound);
    EXPECT_NE(e.message().find("/nonexistent/dir/m.safetensors"), std::string::npos);
  }
}

}  // namespace
}  // namespace dacpp
