#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/fault.h"

namespace dacpp {

AtomicFile::AtomicFile(std::string path, bool durable)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp.XXXXXX"), durable_(durable) {
  DACPP_CHECK(!path_.empty(), ErrorCode::InvalidArgument, "cannot write a file with an empty path");
  // A unique temporary per writer: two writers of the same path (two processes converting to one file) each
  // write their own and the last rename wins, instead of interleaving into one shared "<path>.tmp".
  fd_ = ::mkostemp(tmp_path_.data(), O_CLOEXEC);
  if (fd_ < 0) fail(str_cat("cannot create '", path_, ".tmp.*'"), errno);
  if (::fchmod(fd_, 0644) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_path_.c_str());
    fail(str_cat("cannot set the mode of '", tmp_path_, "'"), err);
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  DACPP_THROW(ErrorCode::Io, "cannot write '", path_, "': ", what, ": ", std::strerror(err));
}

void AtomicFile::write(const void* data, size_t n) {
  DACPP_FAULT_POINT("output.write", ErrorCode::Io, "cannot write '", path_, "' at offset ", written_);
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
  if (durable_ && ::fsync(fd_) != 0) fail("fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close failed", errno);
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) fail(str_cat("cannot rename '", tmp_path_, "'"), errno);
  committed_ = true;
}

}  // namespace dacpp
