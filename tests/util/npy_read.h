// A small NPY v1/v2 reader for tests: little-endian float32 ('<f4'), C order. Header-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace dacpp::testing {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
  std::string header;  // the dictionary text, for format checks
  size_t data_offset = 0;
};

// Parses NPY bytes; returns false (with `error` set) on anything unexpected.
inline bool parse_npy(const std::vector<uint8_t>& b, NpyArray* out, std::string* error) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0) return *error = "bad magic", false;
  size_t hlen = 0, start = 0;
  if (b[6] == 1) hlen = b[8] | (b[9] << 8), start = 10;
  else if (b[6] == 2 && b.size() >= 12) hlen = b[8] | (b[9] << 8) | (b[10] << 16) | (size_t(b[11]) << 24), start = 12;
  else return *error = "bad version", false;
  if (start + hlen > b.size()) return *error = "header past the end", false;
  out->header.assign(reinterpret_cast<const char*>(b.data()) + start, hlen);
  const std::string& h = out->header;
  if (h.find("'descr': '<f4'") == std::string::npos) return *error = "not <f4: " + h, false;
  if (h.find("'fortran_order': False") == std::string::npos) return *error = "not C order: " + h, false;
  const size_t s = h.find("'shape': (");
  const size_t e = h.find(')', s);
  if (s == std::string::npos || e == std::string::npos) return *error = "no shape: " + h, false;
  out->shape.clear();
  std::string dims = h.substr(s + 10, e - s - 10);
  int64_t count = 1;
  for (size_t p = 0; p < dims.size();) {
    while (p < dims.size() && (dims[p] == ' ' || dims[p] == ',')) ++p;
    if (p >= dims.size()) break;
    size_t q = p;
    while (q < dims.size() && dims[q] >= '0' && dims[q] <= '9') ++q;
    if (q == p) return *error = "bad shape: " + dims, false;
    out->shape.push_back(std::stoll(dims.substr(p, q - p)));
    count *= out->shape.back();
    p = q;
  }
  out->data_offset = start + hlen;
  if (b.size() - out->data_offset != static_cast<size_t>(count) * 4) return *error = "data size mismatch", false;
  out->values.resize(static_cast<size_t>(count));
  if (!out->values.empty()) std::memcpy(out->values.data(), b.data() + out->data_offset, out->values.size() * 4);
  return true;
}

inline std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace dacpp::testing
