// ZipArchive: the index of an uncompressed ("stored") ZIP archive held in memory, as written by torch.save since
// torch 1.6 (PyTorchStreamWriter). Reads the end-of-central-directory record (and its zip64 form), the central
// directory and each entry's local header; every offset and size is checked against the buffer. Compressed or
// encrypted entries, multi-disk archives and duplicate names are rejected.
//
// Errors: Error{InvalidModel} naming the file, the record and the numbers:
//   "zip 'm.pth': entry 'archive/data/0' data [1024, 9000) is past the end of the file (4096 bytes)"
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dacpp {

class ZipArchive {
 public:
  struct Entry {
    uint64_t offset = 0;  // of the entry's bytes, from the start of the buffer
    uint64_t size = 0;
    uint32_t crc32 = 0;
  };

  // Indexes `data[0, size)`; `path` is used in messages. The buffer must outlive the archive.
  ZipArchive(std::string path, const uint8_t* data, size_t size);

  const std::string& path() const { return path_; }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // The entry's bytes. Throws InvalidModel "zip 'p': entry 'name' is missing" when absent.
  const Entry& entry(const std::string& name) const;
  const uint8_t* bytes(const Entry& e) const { return data_ + e.offset; }
  // Recomputes the entry's CRC-32 and throws InvalidModel on a mismatch.
  void verify_crc(const std::string& name) const;

 private:
  struct Directory {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t count = 0;
  };
  [[noreturn]] void fail(const std::string& what) const;
  Directory find_directory() const;
  Directory read_zip64_directory(size_t eocd_pos) const;
  size_t read_central_entry(size_t pos);
  void add_entry(const std::string& name, uint64_t local_offset, uint64_t size, uint32_t crc);

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::map<std::string, Entry> entries_;
};

uint32_t crc32_ieee(const uint8_t* data, size_t n);

}  // namespace dacpp
