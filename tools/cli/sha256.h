// SHA-256 (FIPS 180-4), streaming. Used by `dacpp pull` to verify downloads against the hub's LFS sha256.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dacpp::cli {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // Lower-case hex of the 32-byte digest. Finalizes: call once, after the last update().
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// SHA-256 of a whole file, lower-case hex. Throws Error{Io} naming the file if it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace dacpp::cli
