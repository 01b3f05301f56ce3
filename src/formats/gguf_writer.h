// GgufWriter: builds a GGUF v3 file in the depth-anything.cpp layout (spec/gguf-compat.md §1.1): key/values in
// insertion order, array KVs written exactly as INT32 / FLOAT32 / STRING arrays, tensor shapes given in torch order
// and written as ggml `ne` (reversed), tensor data aligned to 32 bytes (or set_alignment(); `general.alignment` is
// written only when it differs from 32). The caller adds `general.architecture` itself (first, by convention).
//
// Errors: InvalidArgument for a duplicate key or tensor name, a bad shape (rank 1..4, dims > 0, last dim a multiple
// of the dtype's block size), a tensor name over 63 bytes, bytes that do not match the shape, a non-CPU tensor;
// Io from write() naming the path (the file is written to `<path>.tmp` and renamed; fault site "output.write").
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace dacpp {

class GgufWriter {
 public:
  void add_u32(const std::string& key, uint32_t v);
  void add_i32(const std::string& key, int32_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& v);
  void add_f32_array(const std::string& key, const std::vector<float>& v);
  void add_string_array(const std::string& key, const std::vector<std::string>& v);
  // Power of two in 1..1 MiB, else InvalidArgument.
  void set_alignment(uint32_t alignment);

  // Shares `t`'s storage until write() (no copy). Any dtype; host tensors only.
  void add_tensor(const std::string& name, const Tensor& t);
  // Copies `nbytes` bytes, which must equal dtype_nbytes(dtype, numel(shape)).
  void add_tensor(const std::string& name, DType dtype, const Shape& shape, const void* bytes, size_t nbytes);

  size_t kv_count() const { return kvs_.size(); }
  size_t tensor_count() const { return tensors_.size(); }

  // Writes the whole file atomically. May be called more than once.
  void write(const std::string& path) const;

 private:
  struct Kv {
    std::string key;
    std::string encoded;  // value type tag + value bytes
  };
  struct Entry {
    std::string name;
    Tensor tensor;
  };

  void add_kv(const std::string& key, std::string encoded);
  std::string encode_header(const std::vector<uint64_t>& offsets) const;

  std::vector<Kv> kvs_;
  std::set<std::string> keys_;
  std::vector<Entry> tensors_;
  std::set<std::string> names_;
  uint32_t alignment_ = 32;
};

}  // namespace dacpp
