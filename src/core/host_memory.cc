#include "core/host_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace dacpp::host_memory {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

constexpr size_t kPage = size_t{2} << 20;

}  // namespace

bool maps_huge(size_t bytes) {
  static const bool off = [] {
    const char* v = std::getenv("DACPP_HUGE_PAGES");
    return v != nullptr && std::string(v) == "0";
  }();
  return !off && !kAsan && bytes >= kHugeFrom && bytes <= static_cast<size_t>(-1) / 2;
}

size_t mapped_length(size_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage;
}

void* map(size_t bytes) {
  const size_t len = mapped_length(bytes);
  // One page more than asked, then the slack before the first 2 MiB boundary and after the buffer given back.
  void* base = mmap(nullptr, len + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  const auto b = reinterpret_cast<uintptr_t>(base);
  const uintptr_t a = (b + kPage - 1) / kPage * kPage;
  if (a > b) munmap(base, a - b);
  const uintptr_t end = b + len + kPage;
  if (end > a + len) munmap(reinterpret_cast<void*>(a + len), end - (a + len));
  void* p = reinterpret_cast<void*>(a);
  madvise(p, len, MADV_HUGEPAGE);
  return p;
}

void unmap(void* p, size_t bytes) {
  if (p != nullptr) munmap(p, mapped_length(bytes));
}

}  // namespace dacpp::host_memory
