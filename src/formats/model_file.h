// ModelFile: the format-neutral weight index (style.md A9). One loaded model file (GGUF, or a checkpoint
// converted in memory) = named tensors + typed metadata. Immutable after construction; safe to share across
// threads. Tensor names and shapes are the depth-anything.cpp GGUF names (formats/tensor_names.h) with shapes in
// **torch order** (the reverse of ggml `ne`).
//
// Every getter that can fail throws Error{InvalidModel} naming the file and the key or tensor:
//   "model 'm.gguf': metadata key 'depthanything3.vit.depth' is missing"
//   "model 'm.gguf': metadata key 'depthanything3.vit.depth' has type string, expected u32"
//   "model 'm.gguf': tensor 'vit.blk.3.attn_qkv.weight' is missing"
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/tensor.h"
#include "formats/mapped_file.h"

namespace dacpp {

// GGUF metadata value types (the GGUF v3 type ids).
enum class MetaType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9, U64 = 10,
  I64 = 11, F64 = 12,
};
const char* meta_type_name(MetaType t);

struct MetaValue {
  MetaType type = MetaType::U32;
  MetaType elem_type = MetaType::U32;  // for arrays
  // Scalars: integers in i (sign-extended or zero-extended), floats in f, bools in i (0/1).
  int64_t i = 0;
  uint64_t u = 0;                 // integers as unsigned bits (readers fill both); arrays: the element count
  double f = 0;
  std::string s;
  std::vector<int64_t> ai;        // integer / bool arrays
  std::vector<double> af;         // float arrays
  std::vector<std::string> as;    // string arrays
  size_t array_size() const;
};

struct TensorRecord {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;           // torch order
  const void* data = nullptr;  // host bytes (mmap or owned)
  size_t nbytes = 0;
};

// GGUF stores ggml `ne`, whose unused trailing dims are 1; ggml's own writer (gguf_write_to_file, used by
// depth-anything.cpp's `quantize`) records only ggml_n_dims of them, so a torch shape loses its LEADING 1-sized
// dims: a [1, 32, 1, 1] conv comes back as [32, 1, 1], a [1, 1, C] cls_token as [C]. Both spellings are the same
// tensor. `same_shape_up_to_leading_ones` compares shapes that way; `with_rank` left-pads a shape with 1s to
// `rank` dims (a shape already at or above `rank` is returned unchanged).
bool same_shape_up_to_leading_ones(const Shape& a, const Shape& b);
Shape with_rank(const Shape& s, size_t rank);

// Placement of weights (design.md §4.4: residency is explicit). A Model built for a GPU, or for the CPU in bf16, gets
// a `ModelFile::placed()` copy: its weight accessor `tensor_f32(name, expected)` hands each weight to the placement,
// which returns the placed copy (and chooses its dtype); `host_f32` still returns the host tensor for the few
// weights host code needs (the pos-embed table). Implemented above this layer (engine), owned by the Model.
class WeightPlacement {
 public:
  virtual ~WeightPlacement() = default;
  // The placed tensor for `host` (host f32, already shape- and NaN-checked, named): in the placement's weight
  // dtype when `keep_f32` is false (it may keep small parameters f32), else f32. Throws Backend/OutOfMemory.
  virtual Tensor place(const Tensor& host, bool keep_f32) const = 0;
  // Whether placed weights stay in host memory (a CPU model in another precision than f32's) rather than on a GPU.
  virtual bool on_host() const = 0;
};

class ModelFile {
 public:
  // `mapping`: the file mapping the tensors' bytes lie in, when they do (read_gguf); a placed ModelFile then gives
  // back the host pages of each weight it has copied (MappedFile::release_pages), so a model on a GPU or in bf16
  // does not also keep its f32 weights resident.
  ModelFile(std::string path, std::map<std::string, MetaValue> meta, std::vector<TensorRecord> tensors,
            std::shared_ptr<void> keepalive, size_t file_bytes, std::shared_ptr<const MappedFile> mapping = nullptr);

  const std::string& path() const { return path_; }
  size_t file_bytes() const { return file_bytes_; }

  // ---- tensors ----
  bool has_tensor(const std::string& name) const;
  const TensorRecord& record(const std::string& name) const;   // throws InvalidModel if missing
  const std::vector<TensorRecord>& records() const { return tensors_; }
  // The tensor as host f32: a zero-copy view for f32 storage, else dequantized (f16, bf16, q8_0, q4_K, q5_K,
  // q6_K) into a new buffer; i8/i32 are converted. The view keeps the file mapping alive. Throws InvalidModel
  // naming the tensor for a NaN/Inf value (every value is scanned: a load-time cost of about one memory pass over
  // the weights, in parallel for large tensors).
  Tensor tensor_f32(const std::string& name) const;
  // The weight accessor: tensor_f32 plus a dtype check (InvalidModel "tensor 'x' has dtype i32; ...": integers
  // are not weights) and a shape check: throws InvalidModel "tensor 'x' has shape [a,b], expected [c,d]". A stored
  // shape that differs only by leading 1-sized dims (see same_shape_up_to_leading_ones) is accepted and the
  // tensor is returned with the `expected` shape.
  // On a placed ModelFile, the returned tensor is the placement's device copy.
  Tensor tensor_f32(const std::string& name, const Shape& expected) const;
  // tensor_f32(name, expected) on the host, whatever the placement.
  Tensor host_f32(const std::string& name, const Shape& expected) const;
  // tensor_f32(name, expected) kept in f32 on the placement's device (the host tensor when not placed).
  Tensor device_f32(const std::string& name, const Shape& expected) const;

  // Gives back the host pages of `t` where it is a view of this file's mapping (nothing otherwise): for a caller
  // that has made its own copy of a weight and will not read the view again. A later read faults them back in.
  void release_pages(const Tensor& t) const;

  // A copy of this index (sharing the file mapping) whose weight accessor places weights with `placement`.
  std::shared_ptr<ModelFile> placed(std::shared_ptr<const WeightPlacement> placement) const;
  const WeightPlacement* placement() const { return placement_.get(); }

  // ---- metadata (keys are full GGUF keys, e.g. "depthanything3.vit.depth") ----
  const std::map<std::string, MetaValue>& metadata() const { return meta_; }
  bool has_key(const std::string& key) const;
  const MetaValue& value(const std::string& key) const;  // throws InvalidModel if missing
  uint32_t get_u32(const std::string& key) const;        // accepts any non-negative integer type that fits
  int32_t get_i32(const std::string& key) const;         // accepts any integer type that fits
  float get_f32(const std::string& key) const;           // accepts f32/f64
  bool get_bool(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  std::vector<int32_t> get_i32_array(const std::string& key) const;
  std::vector<float> get_f32_array(const std::string& key) const;
  // Optional forms: return `fallback` when the key is absent, still throw on a wrong type.
  uint32_t get_u32_or(const std::string& key, uint32_t fallback) const;
  int32_t get_i32_or(const std::string& key, int32_t fallback) const;
  float get_f32_or(const std::string& key, float fallback) const;
  bool get_bool_or(const std::string& key, bool fallback) const;
  std::string get_string_or(const std::string& key, const std::string& fallback) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  // `host` through the placement (itself when there is none), its mapped pages given back when copied.
  Tensor placed_copy(const Tensor& host, bool keep_f32) const;
  Tensor dequantized(const TensorRecord& r) const;

  std::string path_;
  std::map<std::string, MetaValue> meta_;
  std::vector<TensorRecord> tensors_;
  std::map<std::string, size_t> by_name_;
  std::shared_ptr<void> keepalive_;
  size_t file_bytes_ = 0;
  std::shared_ptr<const WeightPlacement> placement_;
  std::shared_ptr<const MappedFile> mapping_;
};

}  // namespace dacpp
