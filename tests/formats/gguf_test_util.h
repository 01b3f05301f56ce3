// Helpers of the GGUF tests: scratch files, a byte-level GGUF builder for corrupt files, and an error matcher.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "util/scratch.h"

namespace dacpp::gguf_test {

// /tmp/dacpp_gguf_<pid>_<name>.
inline std::string scratch(const std::string& name) {
  return ::dacpp::testing::scratch_path("gguf", name);
}

// The writer's temporaries left next to `path` ("<path>.tmp.XXXXXX").
inline std::vector<std::string> temporaries_of(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string prefix = p.filename().string() + ".tmp";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(p.parent_path(), ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().string());
  return found;
}

// A scratch path removed (with any temporaries of the writer) when the object goes out of scope.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name) : path_(scratch(name)) {}
  ~ScratchFile() {
    ::unlink(path_.c_str());
    for (const std::string& t : temporaries_of(path_)) ::unlink(t.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void spill(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs fn and expects a dacpp::Error with `code` whose message contains every one of `parts`.
inline void expect_error(const std::function<void()>& fn, ErrorCode code, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << error_code_name(e.code()) << ": " << e.message();
    for (const std::string& p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << e.message() << " lacks " << p;
  }
}

// A GGUF file written byte by byte, for files the real writer refuses to produce.
class RawGguf {
 public:
  RawGguf& u8(uint8_t v) { return put(&v, 1); }
  RawGguf& u32(uint32_t v) { return put(&v, 4); }
  RawGguf& u64(uint64_t v) { return put(&v, 8); }
  RawGguf& f32(float v) { return put(&v, 4); }
  RawGguf& str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
    return *this;
  }
  RawGguf& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    bytes_ += "GGUF";
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  RawGguf& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
  RawGguf& kv_string(const std::string& key, const std::string& v) { return str(key).u32(8).str(v); }
  // ne in ggml order.
  RawGguf& tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  RawGguf& pad(size_t alignment) {
    while (bytes_.size() % alignment) bytes_.push_back('\0');
    return *this;
  }
  RawGguf& fill(size_t n, uint8_t v = 0x11) {
    bytes_.append(n, static_cast<char>(v));
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  RawGguf& put(const void* p, size_t n) {
    bytes_.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string bytes_;
};

}  // namespace dacpp::gguf_test
