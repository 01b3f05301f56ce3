#include "formats/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/fault.h"

namespace dacpp {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_path_(path_ + ".tmp") {
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(str_cat("cannot create '", tmp_path_, "'"), errno);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(tmp_path_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  DACPP_THROW(ErrorCode::Io, "writing '", path_, "': ", what, ": ", std::strerror(err));
}

void AtomicFile::write(const void* data, size_t n) {
  DACPP_FAULT_POINT("output.write", ErrorCode::Io, "writing '", path_, "' at offset ", written_);
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::write(fd_, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) fail(str_cat("write of ", n, " bytes at offset ", written_, " failed"), k < 0 ? errno : EIO);
    p += k;
    n -= static_cast<size_t>(k);
    written_ += static_cast<size_t>(k);
  }
}

void AtomicFile::write_zeros(size_t n) {
  static constexpr char kZeros[256] = {};
  while (n > 0) {
    const size_t k = n < sizeof kZeros ? n : sizeof kZeros;
    write(kZeros, k);
    n -= k;
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail("fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close failed", errno);
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) fail(str_cat("cannot rename '", tmp_path_, "'"), errno);
  committed_ = true;
}

}  // namespace dacpp
