// Tests of the PyTorch zip checkpoint reader against files written by torch.save (scripts/gen_pth_fixtures.py)
// and against corrupted and hand-crafted archives.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "formats/checkpoint_test_util.h"
#include "formats/pth_reader.h"
#include "formats/tensor_buffers.h"

namespace dacpp {
namespace {

using testing::make_stored_zip;
using testing::read_bytes;
using testing::scratch_path;
using testing::write_bytes;

const std::string kDir = std::string(DACPP_FIXTURES_DIR) + "/pth/";

std::vector<double> values_of(const TensorRecord& r) {
  TensorBuffers tmp;
  const TensorRecord f = tmp.to_f32(r);
  const auto* p = static_cast<const float*>(f.data);
  return std::vector<double>(p, p + shape_numel(f.shape));
}

// Expects read_pth(path) to throw InvalidModel whose message contains `needle` (and the path).
void expect_invalid(const std::string& path, const std::string& needle) {
  try {
    read_pth(path);
    FAIL() << "no error for " << path << " (expected '" << needle << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel) << e.what();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.what();
    EXPECT_NE(e.message().find(path), std::string::npos) << e.what();
  }
}

TEST(PthReader, MatchesTorchSaveFixtures) {
  const auto expected = nlohmann::json::parse(read_bytes(kDir + "expected.json"));
  ASSERT_GE(expected.size(), 6u);
  for (auto file = expected.begin(); file != expected.end(); ++file) {
    SCOPED_TRACE(file.key());
    const CheckpointTensors ck = read_pth(kDir + file.key() + ".pth");
    ASSERT_EQ(ck.tensors.size(), file->size());
    for (const TensorRecord& r : ck.tensors) {
      SCOPED_TRACE(r.name);
      ASSERT_TRUE(file->contains(r.name));
      const auto& want = (*file)[r.name];
      EXPECT_EQ(dtype_name(r.dtype), want["dtype"].get<std::string>());
      EXPECT_EQ(r.shape, want["shape"].get<Shape>());
      const auto got = values_of(r);
      const auto vals = want["values"].get<std::vector<double>>();
      ASSERT_EQ(got.size(), vals.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], vals[i]) << "index " << i;
    }
  }
}

TEST(PthReader, KeepsContiguousF32ZeroCopy) {
  const std::string path = kDir + "views.pth";
  const CheckpointTensors ck = read_pth(path);
  const std::string bytes = read_bytes(path);
  for (const TensorRecord& r : ck.tensors) {
    if (r.name != "row") continue;
    // A contiguous view with storage offset 10 inside the shared storage: not copied.
    const auto* p = static_cast<const uint8_t*>(r.data);
    const std::string here(reinterpret_cast<const char*>(p), r.nbytes);
    EXPECT_NE(bytes.find(here), std::string::npos);
    EXPECT_EQ(r.nbytes, 5u * 4u);
  }
}

TEST(PthReader, TruncatedAtEveryOffsetIsInvalidModel) {
  const std::string bytes = read_bytes(kDir + "dtypes.pth");
  const std::string path = scratch_path("trunc.pth");
  for (size_t n = 0; n < bytes.size(); n += (n < 64 || n > bytes.size() - 64) ? 1 : 7) {
    write_bytes(path, bytes.substr(0, n));
    try {
      read_pth(path);
      ADD_FAILURE() << "truncated to " << n << " bytes loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidModel) << n << ": " << e.what();
    }
  }
  std::remove(path.c_str());
}

TEST(PthReader, EveryByteFlipIsAnErrorOrLoads) {
  const std::string bytes = read_bytes(kDir + "module.pth");
  const std::string path = scratch_path("flip.pth");
  int errors = 0;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0x5a);
    write_bytes(path, b);
    try {
      read_pth(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidModel) << i << ": " << e.what();
      ++errors;
    }
  }
  EXPECT_GT(errors, 40);  // header, directory and pickle flips must be caught
  std::remove(path.c_str());
}

TEST(PthReader, BadZipSignature) {
  std::string b = read_bytes(kDir + "param.pth");
  const size_t eocd = b.rfind(std::string("PK\x05\x06", 4));
  ASSERT_NE(eocd, std::string::npos);
  b[eocd + 2] = 9;
  const std::string path = scratch_path("badsig.pth");
  write_bytes(path, b);
  expect_invalid(path, "end-of-central-directory");
  std::remove(path.c_str());
}

TEST(PthReader, NotAZipAtAll) {
  const std::string path = scratch_path("legacy.pth");
  write_bytes(path, std::string("\x80\x02\x8a\x0a" "legacy magic", 16) + std::string(64, '\0'));
  expect_invalid(path, "legacy");
  std::remove(path.c_str());
}

// A pickle-only archive: "a/data.pkl" = `pkl`, plus extra entries.
std::string write_archive(const std::string& name, const std::string& pkl,
                          std::vector<std::pair<std::string, std::string>> extra = {}) {
  extra.insert(extra.begin(), {"a/data.pkl", pkl});
  const std::string path = scratch_path(name);
  write_bytes(path, make_stored_zip(extra));
  return path;
}

TEST(PthReader, CraftedPickleDefects) {
  using namespace std::string_literals;
  const std::string p2 = "\x80\x02"s;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {p2 + "}\xff."s, "unsupported opcode 0xff"},
      {p2 + "h\x05."s, "memo index 5"},
      {p2 + "j\x00\x00\x00\x7f."s, "memo index"},
      {p2 + "s."s, "stack underflow"},
      {p2 + "}(K\x01u."s, "odd number"},
      {p2 + "cos\nsystem\n."s, "global 'os.system' is not allowed"},
      {p2 + "}X\xff\xff\x00\x00" "ab."s, "truncated"},
      {p2 + "}"s, "truncated"},
      {p2 + "}}."s, "2 values on the stack"},
      {p2 + "N."s, "not a dict"},
      {p2 + "(((."s, "MARK left open"},
      {p2 + std::string(2000, '(') + ".", "MARK nesting"},
      {p2 + "ccollections\nOrderedDict\nK\x01\x85R."s, "OrderedDict called with arguments"},
      {p2 + "N\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09."s, "LONG1"},
      {"\x80\x09}."s, "protocol 9"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const std::string path = write_archive("pk" + std::to_string(i) + ".pth", cases[i].first);
    expect_invalid(path, cases[i].second);
    std::remove(path.c_str());
  }
}

// Re-packs a torch.save fixture with its entries renamed by `rename`.
std::string repack(const std::string& fixture, const std::string& name,
                   const std::function<std::string(const std::string&)>& rename) {
  const std::string bytes = read_bytes(kDir + fixture);
  ZipArchive zip(fixture, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [n, e] : zip.entries())
    entries.push_back({rename(n), bytes.substr(static_cast<size_t>(e.offset), static_cast<size_t>(e.size))});
  const std::string path = scratch_path(name);
  write_bytes(path, make_stored_zip(entries));
  return path;
}

TEST(PthReader, RepackedArchiveStillLoads) {
  const std::string path = repack("views.pth", "repack.pth", [](const std::string& n) { return n; });
  EXPECT_EQ(read_pth(path).tensors.size(), 5u);
  std::remove(path.c_str());
}

TEST(PthReader, StorageKeyMissing) {
  const std::string path = repack("views.pth", "nokey.pth", [](const std::string& n) {
    return n == "views/data/0" ? std::string("views/data/7") : n;
  });
  expect_invalid(path, "storage record 'views/data/0' is missing");
  std::remove(path.c_str());
}

TEST(PthReader, StorageTooShort) {
  const std::string bytes = read_bytes(kDir + "param.pth");
  ZipArchive zip("param.pth", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [n, e] : zip.entries()) {
    std::string data = bytes.substr(static_cast<size_t>(e.offset), static_cast<size_t>(e.size));
    if (n == "param/data/0") data.resize(data.size() - 4);
    entries.push_back({n, data});
  }
  const std::string path = scratch_path("short.pth");
  write_bytes(path, make_stored_zip(entries));
  expect_invalid(path, "has 8 bytes, expected 3 x 4");
  std::remove(path.c_str());
}

TEST(PthReader, CompressedEntryRejected) {
  std::string zip = make_stored_zip({{"a/data.pkl", std::string("\x80\x02}.", 4)}});
  const size_t central = zip.find(std::string("PK\x01\x02", 4));
  zip[central + 10] = 8;  // method deflate
  const std::string path = scratch_path("deflate.pth");
  write_bytes(path, zip);
  expect_invalid(path, "compression method 8");
  std::remove(path.c_str());
}

TEST(PthReader, EmptyStateDictLoads) {
  const std::string path = write_archive("emptysd.pth", std::string("\x80\x02}q\x00.", 6));
  EXPECT_TRUE(read_pth(path).tensors.empty());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dacpp
