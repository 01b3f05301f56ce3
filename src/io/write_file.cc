// write_file_atomic: temporary file in the destination directory, full write, close, rename.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fault.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

[[noreturn]] void fail(const std::string& path, int err) {
  DACPP_THROW(ErrorCode::Io, "cannot write '", path, "': ", std::strerror(err));
}

// Writes all of `size` bytes, retrying short writes and EINTR; returns 0 or an errno value.
int write_all(int fd, const uint8_t* p, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

void write_file_atomic(const std::string& path, const void* bytes, size_t size) {
  DACPP_CHECK(!path.empty(), ErrorCode::InvalidArgument, "cannot write a file with an empty path");
  DACPP_CHECK(bytes != nullptr || size == 0, ErrorCode::InvalidArgument, "cannot write '", path, "': no data");
  DACPP_FAULT_POINT("output.write", ErrorCode::Io, "cannot write '", path, "'");
  std::vector<char> tmpl(path.begin(), path.end());
  const char suffix[] = ".tmp-XXXXXX";
  tmpl.insert(tmpl.end(), suffix, suffix + sizeof(suffix));  // includes the terminating NUL
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(path, errno);
  const std::string tmp(tmpl.data());
  int err = ::fchmod(fd, 0644) != 0 ? errno : 0;
  if (err == 0) err = write_all(fd, static_cast<const uint8_t*>(bytes), size);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    fail(path, err);
  }
}

}  // namespace dacpp::io
