#include "formats/zip_archive.h"

#include <algorithm>

#include "core/error.h"

namespace dacpp {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kEocd64LocatorSig = 0x07064b50;
constexpr uint32_t kEocd64Sig = 0x06064b50;
constexpr size_t kEocdBytes = 22;
constexpr size_t kCentralBytes = 46;
constexpr size_t kLocalBytes = 30;

uint64_t rd(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

uint32_t crc32_ieee(const uint8_t* data, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

ZipArchive::ZipArchive(std::string path, const uint8_t* data, size_t size)
    : path_(std::move(path)), data_(data), size_(size) {
  const Directory dir = find_directory();
  if (dir.offset > size_ || dir.size > size_ - dir.offset)
    fail("central directory [" + std::to_string(dir.offset) + ", +" + std::to_string(dir.size) +
         ") is outside the file (" + std::to_string(size_) + " bytes)");
  if (dir.count > dir.size / kCentralBytes)
    fail("central directory claims " + std::to_string(dir.count) + " entries in " + std::to_string(dir.size) + " bytes");
  size_t pos = static_cast<size_t>(dir.offset);
  const size_t end = static_cast<size_t>(dir.offset + dir.size);
  for (uint64_t i = 0; i < dir.count; ++i) {
    if (pos > end || end - pos < kCentralBytes)
      fail("central directory entry " + std::to_string(i) + " at offset " + std::to_string(pos) + " is truncated");
    pos = read_central_entry(pos);
    if (pos > end) fail("central directory entry " + std::to_string(i) + " runs past the directory end");
  }
}

void ZipArchive::fail(const std::string& what) const {
  DACPP_THROW(ErrorCode::InvalidModel, "zip '", path_, "': ", what);
}

ZipArchive::Directory ZipArchive::find_directory() const {
  if (size_ < kEocdBytes) fail("file is " + std::to_string(size_) + " bytes, too short for a ZIP archive");
  const size_t lowest = size_ - kEocdBytes > 65535 ? size_ - kEocdBytes - 65535 : 0;
  for (size_t pos = size_ - kEocdBytes + 1; pos-- > lowest;) {
    if (rd(data_ + pos, 4) != kEocdSig) continue;
    const uint8_t* p = data_ + pos;
    const uint64_t comment = rd(p + 20, 2);
    if (pos + kEocdBytes + comment > size_) continue;
    if (rd(p + 4, 2) != 0 || rd(p + 6, 2) != 0) fail("multi-disk archives are not supported");
    Directory d{rd(p + 16, 4), rd(p + 12, 4), rd(p + 10, 2)};
    if (d.offset == 0xffffffffu || d.size == 0xffffffffu || d.count == 0xffffu) return read_zip64_directory(pos);
    return d;
  }
  fail("no end-of-central-directory record (not a ZIP archive; torch.save files before torch 1.6 use a legacy "
       "format that is not supported: re-save with a newer torch)");
}

ZipArchive::Directory ZipArchive::read_zip64_directory(size_t eocd_pos) const {
  if (eocd_pos < 20 || rd(data_ + eocd_pos - 20, 4) != kEocd64LocatorSig)
    fail("zip64 markers in the end-of-central-directory record but no zip64 locator");
  const uint64_t off = rd(data_ + eocd_pos - 20 + 8, 8);
  if (off > size_ || size_ - off < 56 || rd(data_ + off, 4) != kEocd64Sig)
    fail("zip64 end-of-central-directory record at offset " + std::to_string(off) + " is invalid");
  const uint8_t* p = data_ + off;
  return Directory{rd(p + 48, 8), rd(p + 40, 8), rd(p + 32, 8)};
}

size_t ZipArchive::read_central_entry(size_t pos) {
  const uint8_t* p = data_ + pos;
  if (rd(p, 4) != kCentralSig) fail("bad central directory signature at offset " + std::to_string(pos));
  const uint64_t flags = rd(p + 8, 2), method = rd(p + 10, 2);
  const uint32_t crc = static_cast<uint32_t>(rd(p + 16, 4));
  uint64_t csize = rd(p + 20, 4), usize = rd(p + 24, 4), local = rd(p + 42, 4);
  const size_t name_len = rd(p + 28, 2), extra_len = rd(p + 30, 2), comment_len = rd(p + 32, 2);
  const size_t total = kCentralBytes + name_len + extra_len + comment_len;
  if (total > size_ - pos) fail("central directory entry at offset " + std::to_string(pos) + " is truncated");
  const std::string name(reinterpret_cast<const char*>(p + kCentralBytes), name_len);
  if (flags & 1u) fail("entry '" + name + "' is encrypted");
  if (method != 0) fail("entry '" + name + "' uses compression method " + std::to_string(method) + " (only stored entries are supported)");
  // zip64 extra field: the 64-bit values of exactly those fields set to 0xffffffff, in this order.
  const uint8_t* x = p + kCentralBytes + name_len;
  for (size_t k = 0; k + 4 <= extra_len;) {
    const uint64_t id = rd(x + k, 2), len = rd(x + k + 2, 2);
    if (k + 4 + len > extra_len) fail("entry '" + name + "' has a truncated extra field");
    if (id == 1) {
      size_t q = k + 4;
      auto take = [&](uint64_t& field) {
        if (field != 0xffffffffu) return;
        if (q + 8 > k + 4 + len) fail("entry '" + name + "' has a truncated zip64 extra field");
        field = rd(x + q, 8);
        q += 8;
      };
      take(usize);
      take(csize);
      take(local);
    }
    k += 4 + len;
  }
  if (csize != usize) fail("entry '" + name + "' is stored with compressed size " + std::to_string(csize) + " != size " + std::to_string(usize));
  add_entry(name, local, usize, crc);
  return pos + total;
}

void ZipArchive::add_entry(const std::string& name, uint64_t local, uint64_t size, uint32_t crc) {
  if (local > size_ || size_ - local < kLocalBytes)
    fail("entry '" + name + "' local header offset " + std::to_string(local) + " is outside the file");
  const uint8_t* p = data_ + local;
  if (rd(p, 4) != kLocalSig) fail("entry '" + name + "' has a bad local header signature at offset " + std::to_string(local));
  const uint64_t start = local + kLocalBytes + rd(p + 26, 2) + rd(p + 28, 2);
  if (start > size_ || size > size_ - start)
    fail("entry '" + name + "' data [" + std::to_string(start) + ", +" + std::to_string(size) +
         ") is past the end of the file (" + std::to_string(size_) + " bytes)");
  if (!entries_.emplace(name, Entry{start, size, crc}).second) fail("entry '" + name + "' appears twice");
}

const ZipArchive::Entry& ZipArchive::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) fail("entry '" + name + "' is missing");
  return it->second;
}

void ZipArchive::verify_crc(const std::string& name) const {
  const Entry& e = entry(name);
  const uint32_t got = crc32_ieee(bytes(e), static_cast<size_t>(e.size));
  if (got != e.crc32) fail("entry '" + name + "' has CRC-32 " + std::to_string(got) + ", expected " + std::to_string(e.crc32));
}

}  // namespace dacpp
