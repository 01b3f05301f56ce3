// Shared plumbing for the libFuzzer targets: readers that take a path get the fuzz input as a memfd, opened
// through /proc/self/fd/<n>, so no temp files pile up. Anything escaping a target other than dacpp::Error is a
// crash by design: libFuzzer reports the uncaught exception as a deadly signal (abort).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "formats/checkpoint_tensors.h"

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

// The body of the checkpoint-reader targets (.pth, safetensors): the input as a file, read by `reader`
// (CheckpointTensors(const std::string& path)), then the first and last byte of every tensor touched so an
// offset out of range shows up under ASan. dacpp::Error is the expected outcome for bad input.
template <typename Reader>
int read_checkpoint(const uint8_t* data, size_t size, Reader reader) {
  MemFile file(data, size);
  if (!file.ok()) return 0;
  try {
    const CheckpointTensors ct = reader(file.path());
    volatile uint8_t sink = 0;
    for (const TensorRecord& r : ct.tensors)
      if (r.nbytes > 0) {
        const uint8_t* b = static_cast<const uint8_t*>(r.data);
        sink = sink ^ b[0] ^ b[r.nbytes - 1];
      }
    (void)sink;
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace dacpp::fuzz
