#include "formats/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "core/error.h"
#include "formats/gguf_format.h"
#include "formats/mapped_file.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the GGUF reader assumes a little-endian host");

namespace dacpp {
namespace {

constexpr size_t kHeaderBytes = 24;    // magic, version, tensor_count, kv_count
constexpr size_t kMinTensorInfo = 32;  // name length, n_dims, one dim, type, offset
constexpr size_t kMinKv = 13;          // key length, value type, a one-byte value
constexpr uint32_t kMaxMetaType = 12;  // F64

// Bounds-checked little-endian reads over the mapped bytes. Failures are InvalidModel naming file and field.
class Cursor {
 public:
  Cursor(const std::string& path, const uint8_t* data, size_t size) : path_(path), data_(data), size_(size) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    DACPP_THROW(ErrorCode::InvalidModel, "model '", path_, "': ", field, ": ", problem);
  }
  size_t pos() const { return pos_; }
  size_t size() const { return size_; }
  size_t remaining() const { return size_ - pos_; }
  const uint8_t* base() const { return data_; }

  const uint8_t* take(size_t n, const std::string& field) {
    if (n > remaining())
      fail(field, str_cat("truncated: needs ", n, " bytes at offset ", pos_, " but the file has ", size_));
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  template <typename T>
  T read(const std::string& field) {
    T v;
    std::memcpy(&v, take(sizeof(T), field), sizeof(T));
    return v;
  }
  std::string str(const std::string& field) {
    const uint64_t n = read<uint64_t>(field + " length");
    if (n > remaining())
      fail(field, str_cat("string length ", n, " exceeds the ", remaining(), " bytes left in the file"));
    const uint8_t* p = take(static_cast<size_t>(n), field);
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  }

 private:
  const std::string& path_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

size_t min_value_bytes(MetaType t) {
  switch (t) {
    case MetaType::U8:
    case MetaType::I8:
    case MetaType::Bool:
      return 1;
    case MetaType::U16:
    case MetaType::I16:
      return 2;
    case MetaType::U32:
    case MetaType::I32:
    case MetaType::F32:
      return 4;
    case MetaType::U64:
    case MetaType::I64:
    case MetaType::F64:
    case MetaType::String:
      return 8;
    case MetaType::Array:
      return 12;
  }
  return 1;
}

bool is_float_type(MetaType t) {
  return t == MetaType::F32 || t == MetaType::F64;
}

MetaType read_type(Cursor& c, const std::string& field) {
  const uint32_t t = c.read<uint32_t>(field);
  if (t > kMaxMetaType) c.fail(field, str_cat("unknown value type ", t));
  return static_cast<MetaType>(t);
}

// One integer or bool of type t: sign-extended (signed) or zero-extended (unsigned, u64 reinterpreted).
int64_t read_int(Cursor& c, MetaType t, const std::string& field) {
  switch (t) {
    case MetaType::U8:
      return c.read<uint8_t>(field);
    case MetaType::I8:
      return c.read<int8_t>(field);
    case MetaType::U16:
      return c.read<uint16_t>(field);
    case MetaType::I16:
      return c.read<int16_t>(field);
    case MetaType::U32:
      return c.read<uint32_t>(field);
    case MetaType::I32:
      return c.read<int32_t>(field);
    case MetaType::U64:
      return static_cast<int64_t>(c.read<uint64_t>(field));
    case MetaType::I64:
      return c.read<int64_t>(field);
    case MetaType::Bool: {
      const uint8_t b = c.read<uint8_t>(field);
      if (b > 1) c.fail(field, str_cat("bool value is ", static_cast<int>(b), ", expected 0 or 1"));
      return b;
    }
    default:
      break;
  }
  c.fail(field, str_cat("internal: ", meta_type_name(t), " is not an integer type"));
}

double read_float(Cursor& c, MetaType t, const std::string& field) {
  if (t == MetaType::F32) return c.read<float>(field);
  return c.read<double>(field);
}

// Reads an array value (after its type tag). depth 0 = a top-level array; arrays inside arrays are accepted one
// level deep (their elements are validated and skipped; MetaValue keeps only the outer count in `u`).
void read_array(Cursor& c, const std::string& field, int depth, MetaValue& v) {
  const MetaType et = read_type(c, field + " array element type");
  const uint64_t n = c.read<uint64_t>(field + " array length");
  if (n > c.remaining() / min_value_bytes(et))
    c.fail(field, str_cat("array of ", n, " ", meta_type_name(et), " cannot fit in the ", c.remaining(),
                          " bytes left in the file"));
  v.type = MetaType::Array;
  v.elem_type = et;
  v.u = n;
  if (et == MetaType::Array) {
    if (depth > 0) c.fail(field, "arrays nested more than one level deep are not supported");
    for (uint64_t k = 0; k < n; ++k) {
      MetaValue inner;
      read_array(c, str_cat(field, "[", k, "]"), depth + 1, inner);
    }
  } else if (et == MetaType::String) {
    v.as.reserve(static_cast<size_t>(n));
    for (uint64_t k = 0; k < n; ++k) v.as.push_back(c.str(str_cat(field, "[", k, "]")));
  } else if (is_float_type(et)) {
    v.af.reserve(static_cast<size_t>(n));
    for (uint64_t k = 0; k < n; ++k) v.af.push_back(read_float(c, et, field));
  } else {
    v.ai.reserve(static_cast<size_t>(n));
    for (uint64_t k = 0; k < n; ++k) v.ai.push_back(read_int(c, et, field));
  }
}

MetaValue read_value(Cursor& c, const std::string& field) {
  MetaValue v;
  v.type = read_type(c, field + " value type");
  if (v.type == MetaType::Array) {
    read_array(c, field, 0, v);
  } else if (v.type == MetaType::String) {
    v.s = c.str(field);
  } else if (is_float_type(v.type)) {
    v.f = read_float(c, v.type, field);
  } else {
    v.i = read_int(c, v.type, field);
    v.u = static_cast<uint64_t>(v.i);
  }
  return v;
}

struct Header {
  uint64_t tensor_count = 0;
  uint64_t kv_count = 0;
};

Header read_header(Cursor& c) {
  if (c.size() == 0) c.fail("header", "the file is empty (0 bytes)");
  if (c.size() < kHeaderBytes)
    c.fail("header", str_cat("the file is ", c.size(), " bytes, too small for a GGUF header (", kHeaderBytes, ")"));
  const uint8_t* magic = c.take(4, "header.magic");
  if (std::memcmp(magic, gguf::kMagic, 4) != 0)
    c.fail("header.magic", str_cat("not a GGUF file (first bytes 0x", std::hex, static_cast<int>(magic[0]), " 0x",
                                   static_cast<int>(magic[1]), " 0x", static_cast<int>(magic[2]), " 0x",
                                   static_cast<int>(magic[3]), ", expected 'GGUF')"));
  const uint32_t version = c.read<uint32_t>("header.version");
  if (version != 2 && version != gguf::kVersion)
    c.fail("header.version", str_cat("unsupported GGUF version ", version, " (expected 2 or 3)"));
  Header h;
  h.tensor_count = c.read<uint64_t>("header.tensor_count");
  h.kv_count = c.read<uint64_t>("header.kv_count");
  const size_t left = c.remaining();
  if (h.tensor_count > left / kMinTensorInfo)
    c.fail("header.tensor_count", str_cat(h.tensor_count, " tensors cannot fit in a file of ", c.size(), " bytes"));
  if (h.kv_count > left / kMinKv || h.tensor_count * kMinTensorInfo + h.kv_count * kMinKv > left)
    c.fail("header.kv_count", str_cat(h.kv_count, " metadata entries cannot fit in a file of ", c.size(), " bytes"));
  return h;
}

std::map<std::string, MetaValue> read_metadata(Cursor& c, uint64_t kv_count) {
  std::map<std::string, MetaValue> meta;
  for (uint64_t k = 0; k < kv_count; ++k) {
    const std::string key = c.str(str_cat("metadata[", k, "].key"));
    const std::string field = str_cat("metadata key '", key, "'");
    if (meta.count(key)) c.fail(field, "the key appears more than once");
    meta.emplace(key, read_value(c, field));
  }
  return meta;
}

uint32_t read_alignment(const Cursor& c, const std::map<std::string, MetaValue>& meta) {
  auto it = meta.find(gguf::kAlignmentKey);
  if (it == meta.end()) return gguf::kDefaultAlignment;
  const std::string field = str_cat("metadata key '", gguf::kAlignmentKey, "'");
  const MetaValue& v = it->second;
  if (v.type != MetaType::U32) c.fail(field, str_cat("has type ", meta_type_name(v.type), ", expected u32"));
  const uint64_t a = static_cast<uint64_t>(v.i);
  if (a == 0 || (a & (a - 1)) != 0 || a > gguf::kMaxAlignment)
    c.fail(field, str_cat(a, " is not a power of two in 1..", gguf::kMaxAlignment));
  return static_cast<uint32_t>(a);
}

struct TensorInfo {
  TensorRecord rec;
  uint64_t offset = 0;  // relative to the data section
};

// ggml ne → torch shape, with the dtype's block constraint on the row (ne[0]) and a byte count that fits.
TensorInfo read_tensor_info(Cursor& c, uint64_t index) {
  TensorInfo t;
  t.rec.name = c.str(str_cat("tensor_info[", index, "].name"));
  const std::string f = str_cat("tensor '", t.rec.name, "'");
  const uint32_t n_dims = c.read<uint32_t>(f + " n_dims");
  if (n_dims < 1 || n_dims > gguf::kMaxDims)
    c.fail(f + " n_dims", str_cat(n_dims, " is out of range 1..", gguf::kMaxDims));
  uint64_t ne[gguf::kMaxDims] = {};
  int64_t numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    ne[d] = c.read<uint64_t>(str_cat(f, " ne[", d, "]"));
    if (ne[d] == 0 || ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      c.fail(str_cat(f, " ne[", d, "]"), str_cat(ne[d], " is not a valid dimension"));
    if (numel > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(ne[d]))
      c.fail(f + " shape", "the element count overflows int64");
    numel *= static_cast<int64_t>(ne[d]);
  }
  const uint32_t type_id = c.read<uint32_t>(f + " type");
  const std::optional<DType> dt = gguf::dtype_from_ggml(type_id);
  if (!dt) c.fail(f + " type", str_cat("unsupported tensor type ", type_id));
  t.rec.dtype = *dt;
  const int64_t bv = dtype_block_values(*dt);
  if (ne[0] % static_cast<uint64_t>(bv) != 0)
    c.fail(f + " shape",
           str_cat("row length ne[0] = ", ne[0], " is not a multiple of the ", dtype_name(*dt), " block size ", bv));
  const uint64_t blocks = static_cast<uint64_t>(numel / bv);
  if (blocks > std::numeric_limits<size_t>::max() / dtype_block_bytes(*dt))
    c.fail(f + " shape", "the byte size overflows");
  t.rec.nbytes = static_cast<size_t>(blocks) * dtype_block_bytes(*dt);
  for (uint32_t d = 0; d < n_dims; ++d) t.rec.shape.push_back(static_cast<int64_t>(ne[n_dims - 1 - d]));
  t.offset = c.read<uint64_t>(f + " offset");
  return t;
}

// Offsets aligned, extents inside the file, no two tensors sharing bytes; then points records at the data.
void place_tensors(const Cursor& c, std::vector<TensorInfo>& infos, size_t data_start, uint32_t alignment) {
  const size_t avail = data_start <= c.size() ? c.size() - data_start : 0;
  for (TensorInfo& t : infos) {
    const std::string f = str_cat("tensor '", t.rec.name, "' offset");
    if (t.offset % alignment != 0) c.fail(f, str_cat(t.offset, " is not a multiple of the alignment ", alignment));
    if (t.offset > avail || t.rec.nbytes > avail - t.offset)
      c.fail(f, str_cat("data [", t.offset, ", +", t.rec.nbytes, ") past the data section start ", data_start,
                        " lies outside the file (", c.size(), " bytes)"));
    t.rec.data = c.base() + data_start + t.offset;
  }
  std::vector<const TensorInfo*> order;
  for (const TensorInfo& t : infos) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    if (order[k - 1]->offset + order[k - 1]->rec.nbytes > order[k]->offset)
      c.fail(str_cat("tensor '", order[k]->rec.name, "' offset"),
             str_cat("data overlaps tensor '", order[k - 1]->rec.name, "'"));
  }
}

std::vector<TensorRecord> read_tensors(Cursor& c, uint64_t count, uint32_t alignment) {
  std::vector<TensorInfo> infos;
  infos.reserve(static_cast<size_t>(count));
  std::set<std::string> names;
  for (uint64_t k = 0; k < count; ++k) {
    infos.push_back(read_tensor_info(c, k));
    if (!names.insert(infos.back().rec.name).second)
      c.fail(str_cat("tensor '", infos.back().rec.name, "'"), "the tensor name appears more than once");
  }
  const size_t data_start = (c.pos() + alignment - 1) / alignment * alignment;
  place_tensors(c, infos, data_start, alignment);
  std::vector<TensorRecord> records;
  records.reserve(infos.size());
  for (TensorInfo& t : infos) records.push_back(std::move(t.rec));
  return records;
}

}  // namespace

std::shared_ptr<const ModelFile> read_gguf(const std::string& path) {
  std::shared_ptr<MappedFile> file = MappedFile::open(path);
  Cursor c(path, file->data(), file->size());
  const Header h = read_header(c);
  std::map<std::string, MetaValue> meta = read_metadata(c, h.kv_count);
  const uint32_t alignment = read_alignment(c, meta);
  std::vector<TensorRecord> records = read_tensors(c, h.tensor_count, alignment);
  const size_t bytes = file->size();
  std::shared_ptr<const MappedFile> mapping = file;
  return std::make_shared<const ModelFile>(path, std::move(meta), std::move(records), std::move(file), bytes,
                                           std::move(mapping));
}

}  // namespace dacpp
