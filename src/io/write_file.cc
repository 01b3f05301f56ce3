// write_file_atomic: one AtomicFile (unique temporary in the destination directory, full write, rename).
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "io/writers.h"

namespace dacpp::io {

void write_file_atomic(const std::string& path, const void* bytes, size_t size) {
  DACPP_CHECK(bytes != nullptr || size == 0, ErrorCode::InvalidArgument, "cannot write '", path, "': no data");
  AtomicFile out(path, /*durable=*/false);
  if (size > 0) out.write(bytes, size);
  out.commit();
}

}  // namespace dacpp::io
