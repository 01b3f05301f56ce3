#include "formats/pth_reader.h"

#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "formats/mapped_file.h"
#include "formats/pickle_reader.h"
#include "formats/tensor_buffers.h"
#include "formats/zip_archive.h"

namespace dacpp {
namespace {

using pickle::Kind;
using pickle::PickleReader;
using pickle::TensorRef;

constexpr int kMaxDictDepth = 16;
constexpr uint64_t kMaxPickleBytes = 256u << 20;

struct StorageType {
  const char* name;
  size_t item_size;
  int kind;  // 0: view as `dtype`, 1: i64 → i32, 2: f64 → f32
  DType dtype;
};

constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", 4, 0, DType::F32}, {"HalfStorage", 2, 0, DType::F16}, {"BFloat16Storage", 2, 0, DType::BF16},
    {"IntStorage", 4, 0, DType::I32},   {"LongStorage", 8, 1, DType::I32}, {"DoubleStorage", 8, 2, DType::F32},
};

class PthDecoder {
 public:
  PthDecoder(const std::string& path, const ZipArchive& zip, std::string prefix, const PickleReader& pk,
             TensorBuffers& buffers)
      : path_(path), zip_(zip), prefix_(std::move(prefix)), pk_(pk), buffers_(buffers) {}

  void flatten(int32_t dict, const std::string& name_prefix, int depth, std::vector<TensorRecord>& out) {
    if (depth > kMaxDictDepth) fail("dicts nested deeper than " + std::to_string(kMaxDictDepth) + " levels");
    const auto items = pk_.at(dict).items;  // copy: stable while recursing
    for (size_t k = 0; k + 1 < items.size(); k += 2) {
      const pickle::Value& key = pk_.at(items[k]);
      if (key.kind != Kind::String) fail("a state-dict key under '" + name_prefix + "' is not a string");
      const std::string name = name_prefix + key.s;
      const pickle::Value& val = pk_.at(items[k + 1]);
      if (val.kind == Kind::Tensor) {
        out.push_back(materialize(name, val.tensor));
      } else if (val.kind == Kind::Dict) {
        flatten(items[k + 1], name + ".", depth + 1, out);
      } else {
        log::debug("pth '", path_, "': skipping non-tensor entry '", name, "'");
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    DACPP_THROW(ErrorCode::InvalidModel, "pth '", path_, "': ", what);
  }

  TensorRecord materialize(const std::string& name, const TensorRef& t) {
    const pickle::Value& st = pk_.at(t.storage);
    const StorageType* type = nullptr;
    for (const StorageType& s : kStorageTypes)
      if (st.s == s.name) type = &s;
    if (!type) fail("tensor '" + name + "' has unsupported storage type " + st.s);
    const std::string record = prefix_ + "data/" + st.key;
    if (!zip_.contains(record)) fail("tensor '" + name + "': storage record '" + record + "' is missing");
    const ZipArchive::Entry& e = zip_.entry(record);
    const uint64_t storage_numel = static_cast<uint64_t>(st.i);
    if (storage_numel > e.size / type->item_size || storage_numel * type->item_size != e.size)
      fail("tensor '" + name + "': storage '" + record + "' has " + std::to_string(e.size) + " bytes, expected " +
           std::to_string(storage_numel) + " x " + std::to_string(type->item_size));
    Shape shape(t.size.begin(), t.size.end());
    const uint64_t numel = checked_extent(name, t, storage_numel);
    const uint8_t* base = zip_.bytes(e);
    const uint8_t* src = numel == 0 ? base : base + static_cast<uint64_t>(t.offset) * type->item_size;
    if (numel > 0 && !is_contiguous(t)) src = gather(name, t, base, type->item_size, numel);
    const int64_t n = static_cast<int64_t>(numel);
    if (type->kind == 1) return buffers_.i64_to_i32(name, shape, src, n);
    if (type->kind == 2) return buffers_.f64_to_f32(name, shape, src, n);
    return buffers_.aligned_view(name, type->dtype, shape, src, numel * type->item_size);
  }

  // numel of the view; checks that every element it addresses lies inside the storage.
  uint64_t checked_extent(const std::string& name, const TensorRef& t, uint64_t storage_numel) const {
    unsigned __int128 numel = 1, last = static_cast<uint64_t>(t.offset);
    for (size_t k = 0; k < t.size.size(); ++k) {
      numel *= static_cast<uint64_t>(t.size[k]);
      if (numel > (uint64_t{1} << 48)) fail("tensor '" + name + "' has too many elements");
    }
    if (numel == 0) return 0;
    for (size_t k = 0; k < t.size.size(); ++k)
      last += static_cast<unsigned __int128>(t.size[k] - 1) * static_cast<uint64_t>(t.stride[k]);
    if (last >= storage_numel)
      fail("tensor '" + name + "' (offset " + std::to_string(t.offset) + ", shape " + shape_str(t.size) +
           ", stride " + shape_str(t.stride) + ") reaches past its storage of " + std::to_string(storage_numel) +
           " elements");
    return static_cast<uint64_t>(numel);
  }

  static bool is_contiguous(const TensorRef& t) {
    int64_t expect = 1;
    for (size_t k = t.size.size(); k-- > 0;) {
      if (t.size[k] != 1 && t.stride[k] != expect) return false;
      expect *= t.size[k];
    }
    return true;
  }

  // Copies a strided view into a new contiguous buffer of the same element type.
  const uint8_t* gather(const std::string& name, const TensorRef& t, const uint8_t* base, size_t isz,
                        uint64_t numel) {
    uint8_t* dst = buffers_.alloc(numel * isz, name);
    const size_t rank = t.size.size();
    std::vector<int64_t> idx(rank, 0);
    for (uint64_t i = 0; i < numel; ++i) {
      int64_t off = t.offset;
      for (size_t k = 0; k < rank; ++k) off += idx[k] * t.stride[k];
      std::memcpy(dst + i * isz, base + static_cast<uint64_t>(off) * isz, isz);
      for (size_t k = rank; k-- > 0;) {
        if (++idx[k] < t.size[k]) break;
        idx[k] = 0;
      }
    }
    return dst;
  }

  std::string path_;
  const ZipArchive& zip_;
  std::string prefix_;
  const PickleReader& pk_;
  TensorBuffers& buffers_;
};

// The "<archive>/" prefix of the single "<archive>/data.pkl" entry.
std::string find_archive_prefix(const std::string& path, const ZipArchive& zip) {
  std::string prefix;
  int found = 0;
  for (const auto& [name, e] : zip.entries()) {
    const size_t slash = name.find('/');
    if (slash != std::string::npos && name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      prefix = name.substr(0, slash + 1);
      ++found;
    }
  }
  if (found != 1)
    DACPP_THROW(ErrorCode::InvalidModel, "pth '", path, "': expected one '<archive>/data.pkl' entry, found ", found);
  return prefix;
}

}  // namespace

CheckpointTensors read_pth(const std::string& path) {
  auto map = MappedFile::open(path);
  ZipArchive zip(path, map->data(), map->size());
  const std::string prefix = find_archive_prefix(path, zip);
  if (zip.contains(prefix + "byteorder")) {
    const ZipArchive::Entry& b = zip.entry(prefix + "byteorder");
    const std::string order(reinterpret_cast<const char*>(zip.bytes(b)), static_cast<size_t>(b.size));
    DACPP_CHECK(order == "little", ErrorCode::InvalidModel, "pth '", path, "': byte order '", order,
                "' is not supported (only little-endian)");
  }
  const std::string pkl_name = prefix + "data.pkl";
  zip.verify_crc(pkl_name);
  const ZipArchive::Entry& pkl = zip.entry(pkl_name);
  DACPP_CHECK(pkl.size <= kMaxPickleBytes, ErrorCode::InvalidModel, "pth '", path, "': data.pkl is ", pkl.size,
              " bytes, more than the limit of ", kMaxPickleBytes);
  PickleReader reader(path + ":" + pkl_name, zip.bytes(pkl), static_cast<size_t>(pkl.size));
  const int32_t root = reader.run();
  DACPP_CHECK(reader.at(root).kind == Kind::Dict, ErrorCode::InvalidModel, "pth '", path,
              "': the pickled object is not a dict (state dict)");

  auto buffers = std::make_shared<TensorBuffers>(map);
  CheckpointTensors out;
  out.path = path;
  out.file_bytes = map->size();
  PthDecoder(path, zip, prefix, reader, *buffers).flatten(root, "", 0, out.tensors);
  out.keepalive = buffers;
  return out;
}

}  // namespace dacpp
