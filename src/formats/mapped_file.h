// MappedFile: a whole model file mapped read-only-shared / copy-on-write into memory (MAP_PRIVATE), so writes
// through a borrowed view never reach the file. Keep it alive (shared_ptr) as long as any pointer into it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dacpp {

class MappedFile {
 public:
  // Maps `path`. Errors (all name the path): NotFound when it does not exist, InvalidArgument when it is not a
  // regular file (a directory, a device), Io for any other open/stat/mmap failure (fault sites "file.read" at open,
  // "file.mmap" at map). A 0-byte file maps to size() == 0 and data() == nullptr.
  static std::shared_ptr<MappedFile> open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Gives back this process's copy of the whole pages inside [p, p + n) (madvise MADV_DONTNEED; partial pages at the
  // ends and anything outside the mapping are left alone): a later read maps the file's bytes again. For ranges
  // that were never written (a weight already copied elsewhere: weights are never written in place). Advisory: a
  // failure is ignored.
  void release_pages(const void* p, size_t n) const;

 private:
  MappedFile(std::string path, uint8_t* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dacpp
