#include "formats/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "formats/mapped_file.h"
#include "formats/tensor_buffers.h"

namespace dacpp {
namespace {

using nlohmann::json;

struct Entry {
  std::string name;
  std::string dtype;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  DACPP_THROW(ErrorCode::InvalidModel, "safetensors '", path, "': ", what);
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The item size of a safetensors dtype string, 0 when unsupported.
size_t item_size(const std::string& dt) {
  if (dt == "F32" || dt == "I32") return 4;
  if (dt == "F16" || dt == "BF16") return 2;
  if (dt == "I64" || dt == "F64") return 8;
  return 0;
}

Entry parse_entry(const std::string& path, const std::string& name, const json& v) {
  const std::string where = "tensor '" + name + "'";
  if (!v.is_object()) fail(path, where + " is not a JSON object");
  Entry e;
  e.name = name;
  auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) fail(path, where + " field 'dtype' is missing or not a string");
  e.dtype = dt->get<std::string>();
  if (item_size(e.dtype) == 0)
    fail(path, where + " field 'dtype' is '" + e.dtype + "', expected one of F32, F16, BF16, F64, I32, I64");
  auto sh = v.find("shape");
  if (sh == v.end() || !sh->is_array()) fail(path, where + " field 'shape' is missing or not an array");
  if (sh->size() > 8) fail(path, where + " field 'shape' has " + std::to_string(sh->size()) + " dims (max 8)");
  for (const json& d : *sh) {
    if (!d.is_number_unsigned()) fail(path, where + " field 'shape' holds a non-integer or negative dim " + d.dump());
    e.shape.push_back(static_cast<int64_t>(std::min<uint64_t>(d.get<uint64_t>(), uint64_t{1} << 62)));
  }
  auto off = v.find("data_offsets");
  if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    fail(path, where + " field 'data_offsets' must be an array of two non-negative integers");
  e.begin = (*off)[0].get<uint64_t>();
  e.end = (*off)[1].get<uint64_t>();
  return e;
}

// Checks offsets, sizes and overlaps of all entries against a data region of `data_bytes`.
void validate_entries(const std::string& path, std::vector<Entry>& entries, uint64_t data_bytes) {
  for (const Entry& e : entries) {
    const std::string where = "tensor '" + e.name + "' data_offsets [" + std::to_string(e.begin) + "," +
                              std::to_string(e.end) + "]";
    if (e.begin > e.end) fail(path, where + " has begin > end");
    if (e.end > data_bytes)
      fail(path, where + " end is past the data region (" + std::to_string(data_bytes) + " bytes)");
    int64_t numel = 0;
    try {
      numel = shape_numel(e.shape);
    } catch (const Error&) {
      fail(path, "tensor '" + e.name + "' field 'shape' " + shape_str(e.shape) + " overflows");
    }
    const uint64_t want = static_cast<uint64_t>(numel);
    const size_t isz = item_size(e.dtype);
    if (want > std::numeric_limits<uint64_t>::max() / isz || want * isz != e.end - e.begin)
      fail(path, where + " spans " + std::to_string(e.end - e.begin) + " bytes, but shape " + shape_str(e.shape) +
                     " of " + e.dtype + " needs " + std::to_string(want * isz));
  }
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    const Entry& a = *order[i - 1];
    const Entry& b = *order[i];
    if (b.begin < a.end && b.end > b.begin && a.end > a.begin)
      fail(path, "tensor '" + b.name + "' data_offsets overlap those of tensor '" + a.name + "'");
  }
}

TensorRecord make_record(const Entry& e, const uint8_t* data, TensorBuffers& buffers) {
  const uint8_t* src = data + e.begin;
  const int64_t n = shape_numel(e.shape);
  if (e.dtype == "I64") return buffers.i64_to_i32(e.name, e.shape, src, n);
  if (e.dtype == "F64") return buffers.f64_to_f32(e.name, e.shape, src, n);
  const DType dt = e.dtype == "F32" ? DType::F32 : e.dtype == "F16" ? DType::F16
                 : e.dtype == "BF16" ? DType::BF16 : DType::I32;
  return buffers.aligned_view(e.name, dt, e.shape, src, static_cast<size_t>(e.end - e.begin));
}

}  // namespace

CheckpointTensors read_safetensors(const std::string& path) {
  auto map = MappedFile::open(path);
  const size_t size = map->size();
  if (size < 8) fail(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  const uint64_t hlen = read_u64_le(map->data());
  if (hlen > size - 8)
    fail(path, "header length " + std::to_string(hlen) + " is larger than the file (" + std::to_string(size) + " bytes)");
  if (hlen > kSafetensorsMaxHeaderBytes)
    fail(path, "header length " + std::to_string(hlen) + " exceeds the 100 MB limit");
  json header;
  try {
    header = json::parse(map->data() + 8, map->data() + 8 + hlen);
  } catch (const json::exception& ex) {
    fail(path, std::string("header is not valid JSON: ") + ex.what());
  }
  if (!header.is_object()) fail(path, "header is not a JSON object");

  CheckpointTensors out;
  out.path = path;
  out.file_bytes = size;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) fail(path, "field '__metadata__' is not an object");
      for (auto m = it->begin(); m != it->end(); ++m)
        out.metadata[m.key()] = m->is_string() ? m->get<std::string>() : m->dump();
      continue;
    }
    entries.push_back(parse_entry(path, it.key(), it.value()));
  }
  const uint8_t* data = map->data() + 8 + hlen;
  validate_entries(path, entries, size - 8 - hlen);

  auto buffers = std::make_shared<TensorBuffers>(map);
  for (const Entry& e : entries) out.tensors.push_back(make_record(e, data, *buffers));
  out.keepalive = buffers;
  return out;
}

}  // namespace dacpp
