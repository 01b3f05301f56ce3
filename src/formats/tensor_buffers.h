// TensorBuffers: the keepalive of checkpoint tensors. Holds the source file mapping(s) and every buffer a reader
// or the importer allocated (dtype conversions, misaligned or non-contiguous copies, concatenations), and builds
// the TensorRecords that point into them. Not thread-safe while being filled; immutable afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/model_file.h"

namespace dacpp {

class TensorBuffers {
 public:
  TensorBuffers() = default;
  explicit TensorBuffers(std::shared_ptr<const void> source) { hold(std::move(source)); }

  // Keeps `p` alive as long as this object.
  void hold(std::shared_ptr<const void> p) { held_.push_back(std::move(p)); }

  // A new zero-initialised owned buffer of `bytes` bytes (64-byte aligned). Throws OutOfMemory naming `what`.
  uint8_t* alloc(size_t bytes, const std::string& what);

  // A record over `src` (`nbytes` bytes of `dt`); copied into an owned buffer when `src` is not aligned to the
  // element size, so that consumers may read it as typed memory. Empty tensors get data == nullptr.
  TensorRecord aligned_view(const std::string& name, DType dt, const Shape& shape, const uint8_t* src, size_t nbytes);
  // Little-endian i64 → i32 (throws InvalidModel naming the tensor when a value does not fit).
  TensorRecord i64_to_i32(const std::string& name, const Shape& shape, const uint8_t* src, int64_t n);
  // Little-endian f64 → f32.
  TensorRecord f64_to_f32(const std::string& name, const Shape& shape, const uint8_t* src, int64_t n);
  // A record of dtype F32 with the same values: `r` itself when already f32, else a converted copy (f16, bf16, i32).
  TensorRecord to_f32(const TensorRecord& r);

 private:
  std::vector<std::shared_ptr<const void>> held_;
};

}  // namespace dacpp
