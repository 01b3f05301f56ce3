// Helpers of the checkpoint reader and importer tests: scratch files and a stored-ZIP writer.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "formats/zip_archive.h"
#include "util/scratch.h"

namespace dacpp::testing {

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A per-process scratch file path: /tmp/dacpp_<tag>_<pid>_<name>.
inline std::string scratch_path(const std::string& name) {
  return ::dacpp::testing::scratch_path("ckpt", name);
}

inline void put_le(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A minimal ZIP with stored entries (no zip64), in the given order.
inline std::string make_stored_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out, central;
  for (const auto& [name, data] : entries) {
    const uint64_t off = out.size();
    const uint32_t crc = crc32_ieee(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    std::string h;
    put_le(h, 0x04034b50, 4); put_le(h, 20, 2); put_le(h, 0, 2); put_le(h, 0, 2); put_le(h, 0, 4);
    put_le(h, crc, 4); put_le(h, data.size(), 4); put_le(h, data.size(), 4); put_le(h, name.size(), 2);
    put_le(h, 0, 2);
    out += h + name + data;
    std::string c;
    put_le(c, 0x02014b50, 4); put_le(c, 20, 2); put_le(c, 20, 2); put_le(c, 0, 2); put_le(c, 0, 2);
    put_le(c, 0, 4); put_le(c, crc, 4); put_le(c, data.size(), 4); put_le(c, data.size(), 4);
    put_le(c, name.size(), 2); put_le(c, 0, 2); put_le(c, 0, 2); put_le(c, 0, 2); put_le(c, 0, 2);
    put_le(c, 0, 4); put_le(c, off, 4);
    central += c + name;
  }
  const uint64_t cd_off = out.size();
  out += central;
  std::string e;
  put_le(e, 0x06054b50, 4); put_le(e, 0, 2); put_le(e, 0, 2); put_le(e, entries.size(), 2);
  put_le(e, entries.size(), 2); put_le(e, central.size(), 4); put_le(e, cd_off, 4); put_le(e, 0, 2);
  return out + e;
}

}  // namespace dacpp::testing

#include <nlohmann/json.hpp>

#include "formats/model_file.h"

namespace dacpp::testing {

// Writes `tensors` (any of f32/f16/bf16/i32) as a safetensors file; `data` must hold nbytes bytes each.
inline void write_safetensors(const std::string& path, const std::vector<TensorRecord>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const TensorRecord& r : tensors) {
    const char* dt = r.dtype == DType::F32 ? "F32" : r.dtype == DType::F16 ? "F16" : r.dtype == DType::BF16 ? "BF16" : "I32";
    header[r.name] = {{"dtype", dt}, {"shape", r.shape}, {"data_offsets", {data.size(), data.size() + r.nbytes}}};
    if (r.nbytes) data.append(static_cast<const char*>(r.data), r.nbytes);
  }
  std::string h = header.dump();
  while (h.size() % 8) h.push_back(' ');
  std::string out;
  put_le(out, h.size(), 8);
  write_bytes(path, out + h + data);
}

}  // namespace dacpp::testing
