#include "formats/gguf_writer.h"

#include <cstring>

#include "core/error.h"
#include "core/atomic_file.h"
#include "formats/gguf_format.h"
#include "formats/model_file.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the GGUF writer assumes a little-endian host");

namespace dacpp {
namespace {

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

void put_type(std::string& out, MetaType t) {
  put<uint32_t>(out, static_cast<uint32_t>(t));
}

void put_str(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.append(s);
}

template <typename T>
std::string encode_scalar(MetaType t, T v) {
  std::string out;
  put_type(out, t);
  put<T>(out, v);
  return out;
}

template <typename T>
std::string encode_array(MetaType elem, const std::vector<T>& v) {
  std::string out;
  put_type(out, MetaType::Array);
  put_type(out, elem);
  put<uint64_t>(out, v.size());
  for (const T& x : v) put<T>(out, x);
  return out;
}

size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

void GgufWriter::add_kv(const std::string& key, std::string encoded) {
  DACPP_CHECK(!key.empty(), ErrorCode::InvalidArgument, "gguf writer: empty metadata key");
  DACPP_CHECK(key != gguf::kAlignmentKey, ErrorCode::InvalidArgument, "gguf writer: set '", key,
              "' with set_alignment()");
  DACPP_CHECK(keys_.insert(key).second, ErrorCode::InvalidArgument, "gguf writer: metadata key '", key,
              "' added twice");
  kvs_.push_back({key, std::move(encoded)});
}

void GgufWriter::add_u32(const std::string& key, uint32_t v) {
  add_kv(key, encode_scalar(MetaType::U32, v));
}
void GgufWriter::add_i32(const std::string& key, int32_t v) {
  add_kv(key, encode_scalar(MetaType::I32, v));
}
void GgufWriter::add_f32(const std::string& key, float v) {
  add_kv(key, encode_scalar(MetaType::F32, v));
}
void GgufWriter::add_bool(const std::string& key, bool v) {
  add_kv(key, encode_scalar<uint8_t>(MetaType::Bool, v ? 1 : 0));
}

void GgufWriter::add_string(const std::string& key, const std::string& v) {
  std::string out;
  put_type(out, MetaType::String);
  put_str(out, v);
  add_kv(key, std::move(out));
}

void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  add_kv(key, encode_array(MetaType::I32, v));
}
void GgufWriter::add_f32_array(const std::string& key, const std::vector<float>& v) {
  add_kv(key, encode_array(MetaType::F32, v));
}

void GgufWriter::add_string_array(const std::string& key, const std::vector<std::string>& v) {
  std::string out;
  put_type(out, MetaType::Array);
  put_type(out, MetaType::String);
  put<uint64_t>(out, v.size());
  for (const std::string& s : v) put_str(out, s);
  add_kv(key, std::move(out));
}

void GgufWriter::set_alignment(uint32_t a) {
  DACPP_CHECK(a != 0 && (a & (a - 1)) == 0 && a <= gguf::kMaxAlignment, ErrorCode::InvalidArgument,
              "gguf writer: alignment ", a, " is not a power of two in 1..", gguf::kMaxAlignment);
  alignment_ = a;
}

void GgufWriter::add_tensor(const std::string& name, const Tensor& t) {
  const std::string what = str_cat("gguf writer: tensor '", name, "'");
  DACPP_CHECK(!name.empty() && name.size() <= gguf::kMaxTensorName, ErrorCode::InvalidArgument, what,
              ": the name must be 1..", gguf::kMaxTensorName, " bytes");
  DACPP_CHECK(t.defined() && t.device().is_cpu(), ErrorCode::InvalidArgument, what, ": not a defined host tensor");
  const Shape& s = t.shape();
  DACPP_CHECK(!s.empty() && s.size() <= gguf::kMaxDims, ErrorCode::InvalidArgument, what, ": shape ", shape_str(s),
              " must have 1..", gguf::kMaxDims, " dimensions");
  for (int64_t d : s)
    DACPP_CHECK(d > 0, ErrorCode::InvalidArgument, what, ": shape ", shape_str(s), " has a non-positive dimension");
  const int64_t bv = dtype_block_values(t.dtype());
  DACPP_CHECK(s.back() % bv == 0, ErrorCode::InvalidArgument, what, ": last dimension of ", shape_str(s),
              " is not a multiple of the ", dtype_name(t.dtype()), " block size ", bv);
  DACPP_CHECK(names_.insert(name).second, ErrorCode::InvalidArgument, what, " added twice");
  tensors_.push_back({name, t});
}

void GgufWriter::add_tensor(const std::string& name, DType dtype, const Shape& shape, const void* bytes,
                            size_t nbytes) {
  const int64_t n = shape_numel(shape);
  DACPP_CHECK(n > 0 && dtype_nbytes(dtype, n) == nbytes, ErrorCode::InvalidArgument, "gguf writer: tensor '", name,
              "' (", dtype_name(dtype), " ", shape_str(shape), ") given ", nbytes, " bytes, expected ",
              dtype_nbytes(dtype, n));
  Tensor t = Tensor::empty(shape, dtype, name);
  std::memcpy(t.data<uint8_t>(), bytes, nbytes);
  add_tensor(name, t);
}

std::string GgufWriter::encode_header(const std::vector<uint64_t>& offsets) const {
  const bool write_alignment = alignment_ != gguf::kDefaultAlignment;
  std::string h;
  h.append(reinterpret_cast<const char*>(gguf::kMagic), 4);
  put<uint32_t>(h, gguf::kVersion);
  put<uint64_t>(h, tensors_.size());
  put<uint64_t>(h, kvs_.size() + (write_alignment ? 1 : 0));
  for (const Kv& kv : kvs_) {
    put_str(h, kv.key);
    h.append(kv.encoded);
  }
  if (write_alignment) {
    put_str(h, gguf::kAlignmentKey);
    h.append(encode_scalar(MetaType::U32, alignment_));
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i].tensor;
    put_str(h, tensors_[i].name);
    put<uint32_t>(h, static_cast<uint32_t>(t.rank()));
    for (int d = t.rank() - 1; d >= 0; --d) put<uint64_t>(h, static_cast<uint64_t>(t.shape()[d]));
    put<uint32_t>(h, gguf::ggml_type_id(t.dtype()));
    put<uint64_t>(h, offsets[i]);
  }
  return h;
}

void GgufWriter::write(const std::string& path) const {
  std::vector<uint64_t> offsets;
  size_t offset = 0;
  for (const Entry& e : tensors_) {
    offsets.push_back(offset);
    offset = align_up(offset + e.tensor.nbytes(), alignment_);
  }
  const std::string header = encode_header(offsets);
  AtomicFile out(path);
  out.write(header.data(), header.size());
  out.write_zeros(align_up(header.size(), alignment_) - header.size());
  for (const Entry& e : tensors_) {
    const size_t n = e.tensor.nbytes();
    out.write(e.tensor.raw(), n);
    out.write_zeros(align_up(n, alignment_) - n);
  }
  out.commit();
}

}  // namespace dacpp
