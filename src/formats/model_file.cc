#include "formats/model_file.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/thread_pool.h"
#include "formats/dequant.h"

namespace dacpp {
namespace {

bool is_unsigned_int(MetaType t) {
  return t == MetaType::U8 || t == MetaType::U16 || t == MetaType::U32 || t == MetaType::U64;
}
bool is_signed_int(MetaType t) {
  return t == MetaType::I8 || t == MetaType::I16 || t == MetaType::I32 || t == MetaType::I64;
}
bool is_float(MetaType t) {
  return t == MetaType::F32 || t == MetaType::F64;
}

// "u32", or "array of i64" for arrays.
std::string type_desc(const MetaValue& v) {
  if (v.type != MetaType::Array) return meta_type_name(v.type);
  return std::string("array of ") + meta_type_name(v.elem_type);
}

// True and the value in `out` when the integer fits in [lo, hi]. `raw` is MetaValue::i: sign-extended for signed
// types, zero-extended (u64 reinterpreted) for unsigned ones.
bool int_fits(MetaType t, int64_t raw, int64_t lo, int64_t hi, int64_t* out) {
  if (is_unsigned_int(t)) {
    const uint64_t u = static_cast<uint64_t>(raw);
    if (u > static_cast<uint64_t>(hi)) return false;
    *out = static_cast<int64_t>(u);
    return lo <= *out;
  }
  if (raw < lo || raw > hi) return false;
  *out = raw;
  return true;
}

std::string int_str(MetaType t, int64_t raw) {
  return is_unsigned_int(t) ? std::to_string(static_cast<uint64_t>(raw)) : std::to_string(raw);
}

// The parallel grain for dequantization, in storage blocks.
constexpr int64_t kDequantGrainBlocks = 4096;
// The parallel grain of the finite scan, in values.
constexpr int64_t kScanGrainValues = int64_t{1} << 20;

// Index of the first NaN/Inf in v[0, n), or -1. Branch-free inner loop over the exponent bits (vectorizes);
// large tensors are scanned in parallel chunks.
int64_t first_non_finite(const float* v, int64_t n) {
  auto chunk_bad = [v](int64_t b, int64_t e) {
    uint32_t bad = 0;
    for (int64_t i = b; i < e; ++i) {
      uint32_t bits;
      std::memcpy(&bits, v + i, 4);
      bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    return bad != 0;
  };
  std::atomic<bool> any{false};
  if (n <= kScanGrainValues) {
    any = chunk_bad(0, n);
  } else {
    ThreadPool pool;
    pool.parallel_for(n, kScanGrainValues, [&](int64_t b, int64_t e) {
      if (chunk_bad(b, e)) any.store(true, std::memory_order_relaxed);
    });
  }
  if (!any.load()) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return i;
  return -1;
}

}  // namespace

bool same_shape_up_to_leading_ones(const Shape& a, const Shape& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && a[i] == 1) ++i;
  while (j < b.size() && b[j] == 1) ++j;
  return a.size() - i == b.size() - j && std::equal(a.begin() + i, a.end(), b.begin() + j);
}

Shape with_rank(const Shape& s, size_t rank) {
  if (s.size() >= rank) return s;
  Shape out(rank - s.size(), 1);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

const char* meta_type_name(MetaType t) {
  switch (t) {
    case MetaType::U8:
      return "u8";
    case MetaType::I8:
      return "i8";
    case MetaType::U16:
      return "u16";
    case MetaType::I16:
      return "i16";
    case MetaType::U32:
      return "u32";
    case MetaType::I32:
      return "i32";
    case MetaType::F32:
      return "f32";
    case MetaType::Bool:
      return "bool";
    case MetaType::String:
      return "string";
    case MetaType::Array:
      return "array";
    case MetaType::U64:
      return "u64";
    case MetaType::I64:
      return "i64";
    case MetaType::F64:
      return "f64";
  }
  return "unknown";
}

size_t MetaValue::array_size() const {
  if (type != MetaType::Array) return 0;
  if (elem_type == MetaType::String) return as.size();
  if (is_float(elem_type)) return af.size();
  if (elem_type == MetaType::Array) return static_cast<size_t>(u);  // nested arrays: only the count is kept
  return ai.size();
}

ModelFile::ModelFile(std::string path, std::map<std::string, MetaValue> meta, std::vector<TensorRecord> tensors,
                     std::shared_ptr<void> keepalive, size_t file_bytes, std::shared_ptr<const MappedFile> mapping)
    : path_(std::move(path)),
      meta_(std::move(meta)),
      tensors_(std::move(tensors)),
      keepalive_(std::move(keepalive)),
      file_bytes_(file_bytes),
      mapping_(std::move(mapping)) {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorRecord& r = tensors_[i];
    if (!by_name_.emplace(r.name, i).second) fail(str_cat("tensor '", r.name, "' appears more than once"));
    const int64_t n = shape_numel(r.shape);
    if (dtype_nbytes(r.dtype, n) != r.nbytes || (r.nbytes > 0 && r.data == nullptr))
      fail(str_cat("tensor '", r.name, "' (", dtype_name(r.dtype), " ", shape_str(r.shape), ") has ", r.nbytes,
                   " bytes of data, expected ", dtype_nbytes(r.dtype, n)));
  }
}

void ModelFile::fail(const std::string& what) const {
  DACPP_THROW(ErrorCode::InvalidModel, "model '", path_, "': ", what);
}

bool ModelFile::has_tensor(const std::string& name) const {
  return by_name_.count(name) != 0;
}

const TensorRecord& ModelFile::record(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) fail(str_cat("tensor '", name, "' is missing"));
  return tensors_[it->second];
}

Tensor ModelFile::tensor_f32(const std::string& name) const {
  const TensorRecord& r = record(name);
  Tensor out = r.dtype == DType::F32 ? Tensor::view(const_cast<void*>(r.data), r.shape, DType::F32, Device::cpu(),
                                                    keepalive_, r.name)
                                     : dequantized(r);
  const int64_t bad = first_non_finite(out.data<float>(), out.numel());
  if (bad >= 0)
    fail(str_cat("tensor '", name, "' holds a non-finite value (", out.data<float>()[bad], ") at flat index ", bad,
                 " of ", out.numel(), "; the weights are corrupt"));
  return out;
}

Tensor ModelFile::dequantized(const TensorRecord& r) const {
  Tensor out = Tensor::empty(r.shape, DType::F32, r.name);
  const int64_t bv = dtype_block_values(r.dtype);
  const size_t bb = dtype_block_bytes(r.dtype);
  const int64_t nblocks = out.numel() / bv;
  const uint8_t* src = static_cast<const uint8_t*>(r.data);
  float* dst = out.data<float>();
  const DType dt = r.dtype;
  ThreadPool pool;
  pool.parallel_for(nblocks, kDequantGrainBlocks, [&](int64_t b0, int64_t b1) {
    dequantize_row(dt, src + static_cast<size_t>(b0) * bb, dst + b0 * bv, (b1 - b0) * bv);
  });
  return out;
}

Tensor ModelFile::tensor_f32(const std::string& name, const Shape& expected) const {
  return placed_copy(host_f32(name, expected), /*keep_f32=*/false);
}

Tensor ModelFile::device_f32(const std::string& name, const Shape& expected) const {
  return placed_copy(host_f32(name, expected), /*keep_f32=*/true);
}

void ModelFile::release_pages(const Tensor& t) const {
  if (mapping_ && t.defined() && t.device().is_cpu()) mapping_->release_pages(t.raw(), t.nbytes());
}

Tensor ModelFile::placed_copy(const Tensor& host, bool keep_f32) const {
  if (!placement_) return host;
  Tensor placed = placement_->place(host, keep_f32);
  // A copy was made (a GPU upload, bf16): the mapped f32 bytes need not stay resident.
  if (mapping_ && placed.raw() != host.raw()) mapping_->release_pages(host.raw(), host.nbytes());
  return placed;
}

std::shared_ptr<ModelFile> ModelFile::placed(std::shared_ptr<const WeightPlacement> placement) const {
  auto copy = std::make_shared<ModelFile>(*this);
  copy->placement_ = std::move(placement);
  return copy;
}

Tensor ModelFile::host_f32(const std::string& name, const Shape& expected) const {
  const TensorRecord& r = record(name);
  if (r.dtype == DType::I8 || r.dtype == DType::I32)
    fail(str_cat("tensor '", name, "' has dtype ", dtype_name(r.dtype),
                 "; a weight must be f32, f16, bf16, q8_0, q4_K, q5_K or q6_K"));
  if (!same_shape_up_to_leading_ones(r.shape, expected))
    fail(str_cat("tensor '", name, "' has shape ", shape_str(r.shape), ", expected ", shape_str(expected)));
  Tensor t = tensor_f32(name);
  return r.shape == expected ? t : t.reshape(expected);
}

bool ModelFile::has_key(const std::string& key) const {
  return meta_.count(key) != 0;
}

const MetaValue& ModelFile::value(const std::string& key) const {
  auto it = meta_.find(key);
  if (it == meta_.end()) fail(str_cat("metadata key '", key, "' is missing"));
  return it->second;
}

uint32_t ModelFile::get_u32(const std::string& key) const {
  const MetaValue& v = value(key);
  if (!is_unsigned_int(v.type) && !is_signed_int(v.type))
    fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected u32"));
  int64_t out = 0;
  if (!int_fits(v.type, v.i, 0, std::numeric_limits<uint32_t>::max(), &out))
    fail(str_cat("metadata key '", key, "' value ", int_str(v.type, v.i), " (", meta_type_name(v.type),
                 ") does not fit in u32"));
  return static_cast<uint32_t>(out);
}

int32_t ModelFile::get_i32(const std::string& key) const {
  const MetaValue& v = value(key);
  if (!is_unsigned_int(v.type) && !is_signed_int(v.type))
    fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected i32"));
  int64_t out = 0;
  if (!int_fits(v.type, v.i, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), &out))
    fail(str_cat("metadata key '", key, "' value ", int_str(v.type, v.i), " (", meta_type_name(v.type),
                 ") does not fit in i32"));
  return static_cast<int32_t>(out);
}

float ModelFile::get_f32(const std::string& key) const {
  const MetaValue& v = value(key);
  if (!is_float(v.type)) fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected f32"));
  return static_cast<float>(v.f);
}

bool ModelFile::get_bool(const std::string& key) const {
  const MetaValue& v = value(key);
  if (v.type != MetaType::Bool) fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected bool"));
  return v.i != 0;
}

std::string ModelFile::get_string(const std::string& key) const {
  const MetaValue& v = value(key);
  if (v.type != MetaType::String)
    fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected string"));
  return v.s;
}

std::vector<int32_t> ModelFile::get_i32_array(const std::string& key) const {
  const MetaValue& v = value(key);
  if (v.type != MetaType::Array || !(is_unsigned_int(v.elem_type) || is_signed_int(v.elem_type)))
    fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected array of i32"));
  std::vector<int32_t> out;
  out.reserve(v.ai.size());
  for (size_t k = 0; k < v.ai.size(); ++k) {
    int64_t x = 0;
    if (!int_fits(v.elem_type, v.ai[k], std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), &x))
      fail(str_cat("metadata key '", key, "' element ", k, " value ", int_str(v.elem_type, v.ai[k]), " (",
                   meta_type_name(v.elem_type), ") does not fit in i32"));
    out.push_back(static_cast<int32_t>(x));
  }
  return out;
}

std::vector<float> ModelFile::get_f32_array(const std::string& key) const {
  const MetaValue& v = value(key);
  if (v.type != MetaType::Array || !is_float(v.elem_type))
    fail(str_cat("metadata key '", key, "' has type ", type_desc(v), ", expected array of f32"));
  return std::vector<float>(v.af.begin(), v.af.end());
}

uint32_t ModelFile::get_u32_or(const std::string& key, uint32_t fallback) const {
  return has_key(key) ? get_u32(key) : fallback;
}
int32_t ModelFile::get_i32_or(const std::string& key, int32_t fallback) const {
  return has_key(key) ? get_i32(key) : fallback;
}
float ModelFile::get_f32_or(const std::string& key, float fallback) const {
  return has_key(key) ? get_f32(key) : fallback;
}
bool ModelFile::get_bool_or(const std::string& key, bool fallback) const {
  return has_key(key) ? get_bool(key) : fallback;
}
std::string ModelFile::get_string_or(const std::string& key, const std::string& fallback) const {
  return has_key(key) ? get_string(key) : fallback;
}

}  // namespace dacpp
