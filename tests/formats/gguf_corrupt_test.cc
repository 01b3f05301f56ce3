// The corrupt-file matrix: every malformed GGUF must throw dacpp::Error naming the file and the field, never crash
// (run under ASan+UBSan too).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <limits>

#include "core/fault.h"
#include "formats/gguf_reader.h"
#include "gguf_sample.h"
#include "gguf_test_util.h"

namespace dacpp {
namespace {

using gguf_test::expect_error;
using gguf_test::RawGguf;
using gguf_test::ScratchFile;

constexpr uint32_t kF32 = 0, kQ8_0 = 8;

// Writes `bytes` and expects read_gguf to fail with InvalidModel naming the path and containing `parts`.
void expect_invalid_at(int line, const std::string& bytes, const std::vector<std::string>& parts) {
  SCOPED_TRACE(::testing::Message() << "case at line " << line);
  ScratchFile f("corrupt.gguf");
  gguf_test::spill(f.path(), bytes);
  std::vector<std::string> all = parts;
  all.push_back("model '" + f.path() + "'");
  expect_error([&] { read_gguf(f.path()); }, ErrorCode::InvalidModel, all);
}

#define expect_invalid(...) expect_invalid_at(__LINE__, __VA_ARGS__)

// Two f32 [8] tensors at offsets 0 and 32 after one KV: the base of the tensor-level cases.
std::string two_tensors(uint64_t off_a, uint64_t off_b, uint32_t type_b = kF32, std::vector<uint64_t> ne_b = {8},
                        const std::string& name_b = "b") {
  RawGguf g;
  g.header(2, 1).kv_string("general.architecture", "x");
  g.tensor("a", {8}, kF32, off_a).tensor(name_b, ne_b, type_b, off_b).pad(32).fill(64);
  return g.bytes();
}

TEST(GgufCorrupt, BaseFileIsValid) {
  ScratchFile f("base.gguf");
  gguf_test::spill(f.path(), two_tensors(0, 32));
  auto m = read_gguf(f.path());
  EXPECT_EQ(m->records().size(), 2u);
  EXPECT_EQ(m->tensor_f32("b", {8}).numel(), 8);
}

TEST(GgufCorrupt, MissingEmptyAndDirectory) {
  expect_error([] { read_gguf("/nonexistent_dacpp/m.gguf"); }, ErrorCode::NotFound,
               {"/nonexistent_dacpp/m.gguf", "not found"});
  expect_invalid("", {"empty"});
  const std::string dir = gguf_test::scratch("dir.gguf");
  ::mkdir(dir.c_str(), 0755);
  expect_error([&] { read_gguf(dir); }, ErrorCode::InvalidArgument, {dir, "directory"});
  ::rmdir(dir.c_str());
}

TEST(GgufCorrupt, TruncatedAtEveryOffset) {
  // Every prefix of a valid file whose last tensor ends at the end of the file (no trailing padding) is invalid.
  ScratchFile f("trunc.gguf");
  gguf_test::sample_writer().write(f.path());
  const size_t size = gguf_test::slurp(f.path()).size();
  ASSERT_GT(size, 1000u);
  ASSERT_EQ(read_gguf(f.path())->records().size(), gguf_test::sample_tensors().size());
  for (size_t n = size; n-- > 0;) {  // shrinking in place: rewriting a file per prefix is slow on some filesystems
    ASSERT_EQ(::truncate(f.path().c_str(), static_cast<off_t>(n)), 0);
    try {
      read_gguf(f.path());
      FAIL() << "a file truncated to " << n << " of " << size << " bytes was accepted";
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::InvalidModel) << n << ": " << e.message();
      ASSERT_NE(e.message().find(f.path()), std::string::npos) << e.message();
    }
  }
}

TEST(GgufCorrupt, Header) {
  std::string bad_magic = two_tensors(0, 32);
  bad_magic[3] = 'X';
  expect_invalid(bad_magic, {"header.magic", "not a GGUF file"});
  expect_invalid("GGUF\x03", {"header", "too small"});
  expect_invalid(RawGguf().header(0, 0, 1).bytes(), {"header.version", "unsupported GGUF version 1"});
  expect_invalid(RawGguf().header(0, 0, 4).bytes(), {"header.version", "4"});
  expect_invalid(RawGguf().header(uint64_t(1) << 40, 0).fill(64).bytes(), {"header.tensor_count", "1099511627776"});
  expect_invalid(RawGguf().header(~uint64_t(0), 0).bytes(), {"header.tensor_count"});
  expect_invalid(RawGguf().header(0, uint64_t(1) << 60).fill(64).bytes(), {"header.kv_count"});
  expect_invalid(RawGguf().header(2, 4).fill(90).bytes(), {"header.kv_count"});  // each fits alone, not together
}

TEST(GgufCorrupt, VersionTwoIsAccepted) {
  ScratchFile f("v2.gguf");
  gguf_test::spill(f.path(), RawGguf().header(0, 1, 2).kv_u32("k.v", 7).bytes());
  EXPECT_EQ(read_gguf(f.path())->get_u32("k.v"), 7u);
}

TEST(GgufCorrupt, Metadata) {
  expect_invalid(RawGguf().header(0, 1).u64(uint64_t(1) << 62).fill(20).bytes(),
                 {"metadata[0].key", "string length 4611686018427387904"});
  expect_invalid(RawGguf().header(0, 1).str("k.s").u32(8).u64(1000).fill(20).bytes(), {"metadata key 'k.s'", "1000"});
  expect_invalid(RawGguf().header(0, 1).str("k.t").u32(13).u32(0).bytes(),
                 {"metadata key 'k.t'", "unknown value type 13"});
  expect_invalid(RawGguf().header(0, 1).str("k.b").u32(7).u8(2).bytes(), {"metadata key 'k.b'", "bool value is 2"});
  expect_invalid(RawGguf().header(0, 2).kv_u32("k.d", 1).kv_u32("k.d", 2).bytes(), {"'k.d'", "more than once"});
  expect_invalid(RawGguf().header(0, 1).str("k.a").u32(9).u32(4).u64(uint64_t(1) << 40).fill(16).bytes(),
                 {"metadata key 'k.a'", "array of 1099511627776 u32 cannot fit"});
  expect_invalid(RawGguf().header(0, 1).str("k.a").u32(9).u32(8).u64(3).str("ok").u64(99).fill(10).bytes(),
                 {"metadata key 'k.a'[1]"});
  expect_invalid(RawGguf().header(0, 1).str("k.a").u32(9).u32(77).u64(1).u32(0).bytes(),
                 {"'k.a' array element type", "unknown value type 77"});
  // array of arrays of arrays
  expect_invalid(RawGguf().header(0, 1).str("k.n").u32(9).u32(9).u64(1).u32(9).u64(1).u32(4).u64(1).u32(5).bytes(),
                 {"'k.n'", "nested more than one level"});
  expect_invalid(RawGguf().header(0, 1).str("k.b").u32(9).u32(7).u64(2).u8(1).u8(3).bytes(), {"bool value is 3"});
}

TEST(GgufCorrupt, Alignment) {
  auto with_alignment = [](uint32_t type, uint64_t a) {
    RawGguf g;
    g.header(0, 1).str("general.alignment").u32(type);
    if (type == 4)
      g.u32(static_cast<uint32_t>(a));
    else
      g.u64(a);
    return g.bytes();
  };
  expect_invalid(with_alignment(4, 48), {"general.alignment", "48 is not a power of two"});
  expect_invalid(with_alignment(4, 0), {"general.alignment", "0 is not"});
  expect_invalid(with_alignment(4, 2u << 20), {"general.alignment", "2097152"});
  expect_invalid(with_alignment(10, 64), {"general.alignment", "has type u64, expected u32"});
}

TEST(GgufCorrupt, TensorInfo) {
  expect_invalid(two_tensors(0, 64), {"tensor 'b' offset", "outside the file"});
  expect_invalid(two_tensors(0, uint64_t(1) << 62), {"tensor 'b' offset", "outside the file"});
  expect_invalid(two_tensors(0, ~uint64_t(0) - 31), {"tensor 'b' offset"});
  expect_invalid(two_tensors(0, 0), {"offset", "data overlaps tensor"});
  expect_invalid(two_tensors(32, 0, kF32, {16}), {"tensor 'a' offset", "overlaps tensor 'b'"});
  expect_invalid(two_tensors(0, 16), {"tensor 'b' offset", "16 is not a multiple of the alignment 32"});
  expect_invalid(two_tensors(0, 32, /*type_b=*/2), {"tensor 'b' type", "unsupported tensor type 2"});
  expect_invalid(two_tensors(0, 32, 40), {"unsupported tensor type 40"});
  expect_invalid(two_tensors(0, 32, kF32, {}), {"tensor 'b' n_dims", "0 is out of range 1..4"});
  expect_invalid(two_tensors(0, 32, kF32, {1, 1, 1, 1, 8}), {"tensor 'b' n_dims", "5 is out of range"});
  expect_invalid(two_tensors(0, 32, kF32, {8, 0}), {"tensor 'b' ne[1]", "0 is not a valid dimension"});
  expect_invalid(two_tensors(0, 32, kF32, {uint64_t(1) << 63}), {"tensor 'b' ne[0]"});
  expect_invalid(two_tensors(0, 32, kF32, {uint64_t(1) << 32, uint64_t(1) << 32}), {"tensor 'b' shape", "overflow"});
  expect_invalid(two_tensors(0, 32, kF32, {uint64_t(1) << 62, 1}), {"tensor 'b' shape", "overflow"});
  expect_invalid(two_tensors(0, 32, kQ8_0, {48}),
                 {"tensor 'b' shape", "48 is not a multiple of the q8_0 block size 32"});
  expect_invalid(two_tensors(0, 32, kF32, {8}, "a"), {"tensor 'a'", "appears more than once"});
}

TEST(GgufCorrupt, InjectedIoFaults) {
  ScratchFile f("fault.gguf");
  gguf_test::spill(f.path(), two_tensors(0, 32));
  for (const char* site : {"file.read", "file.mmap"}) {
    fault::configure(site);
    expect_error([&] { read_gguf(f.path()); }, ErrorCode::Io, {f.path(), "injected fault at ", site});
    fault::configure("");
  }
  EXPECT_EQ(read_gguf(f.path())->records().size(), 2u);
}

}  // namespace
}  // namespace dacpp
