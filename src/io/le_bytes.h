// LeBytes: a growing byte buffer that appends integers and IEEE floats in little-endian order whatever the host,
// for the binary exporters (PLY, GLB, COLMAP).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dacpp::io {

class LeBytes {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v) { put(v, 4); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put(bits, 4);
  }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    put(bits, 8);
  }
  void str(const std::string& s) { bytes_.insert(bytes_.end(), s.begin(), s.end()); }
  void pad_to(size_t multiple, uint8_t fill) {
    while (bytes_.size() % multiple != 0) bytes_.push_back(fill);
  }
  void reserve(size_t n) { bytes_.reserve(n); }
  size_t size() const { return bytes_.size(); }
  const uint8_t* data() const { return bytes_.data(); }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

}  // namespace dacpp::io
