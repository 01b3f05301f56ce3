// AtomicFile: writes a file as a unique `<path>.tmp.XXXXXX` (one per writer: concurrent writers of one path never
// share a temporary) and renames it over `path` on commit(), so readers never see a partial file. Every write is
// checked; failures throw Error{Io} naming the path and the OS error (fault site "output.write" at each write).
// Destroying an uncommitted AtomicFile removes the temporary file.
#pragma once

#include <cstddef>
#include <string>

namespace dacpp {

class AtomicFile {
 public:
  // `durable`: fsync before the rename (models, conversions); outputs written per request skip it.
  explicit AtomicFile(std::string path, bool durable = true);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);
  void write_zeros(size_t n);
  size_t bytes_written() const { return written_; }
  // Flushes to disk, closes and renames into place.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int err);

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  size_t written_ = 0;
  bool durable_ = true;
  bool committed_ = false;
};

}  // namespace dacpp
