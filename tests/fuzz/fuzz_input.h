// Shared plumbing for the libFuzzer targets: readers that take a path get the fuzz input as a memfd, opened
// through /proc/self/fd/<n>, so no temp files pile up. Anything escaping a target other than dacpp::Error is a
// crash by design: libFuzzer reports the uncaught exception as a deadly signal (abort).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace dacpp::fuzz {

// An anonymous in-memory file holding the bytes; closed on destruction.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) : fd_(memfd_create("dacpp-fuzz", 0)) {
    size_t off = 0;
    while (fd_ >= 0 && off < size) {
      ssize_t n = write(fd_, data + off, size - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  ~MemFile() {
    if (fd_ >= 0) close(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace dacpp::fuzz
