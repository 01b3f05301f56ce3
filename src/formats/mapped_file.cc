#include "formats/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/fault.h"

namespace dacpp {
namespace {

// Closes the descriptor on scope exit.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  DACPP_FAULT_POINT("file.read", ErrorCode::Io, "opening model '", path, "'");
  FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) DACPP_THROW(ErrorCode::NotFound, "model '", path, "': file not found");
    DACPP_THROW(ErrorCode::Io, "model '", path, "': cannot open: ", std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) DACPP_THROW(ErrorCode::Io, "model '", path, "': cannot stat: ", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) DACPP_THROW(ErrorCode::InvalidArgument, "model '", path, "': is a directory, not a file");
  if (!S_ISREG(st.st_mode)) DACPP_THROW(ErrorCode::InvalidArgument, "model '", path, "': is not a regular file");
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(path, nullptr, 0));
  DACPP_FAULT_POINT("file.mmap", ErrorCode::Io, "mapping model '", path, "' (", size, " bytes)");
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED)
    DACPP_THROW(ErrorCode::Io, "model '", path, "': cannot map ", size, " bytes: ", std::strerror(errno));
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<uint8_t*>(p), size));
}

void MappedFile::release_pages(const void* p, size_t n) const {
  if (data_ == nullptr || p == nullptr || n == 0) return;
  const auto begin = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(data_);
  if (begin < base || begin - base > size_ || n > size_ - (begin - base)) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page, last = (begin + n) / page * page;
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace dacpp
