// Large host buffers as their own 2 MiB-aligned anonymous mappings with transparent huge pages asked for
// (madvise(MADV_HUGEPAGE); the advice is all it is: without THP the mapping keeps 4 KiB pages).
//
// Why: every page of a fresh buffer is zero-filled by the kernel at its first write, one fault per page. A 12 MP
// depth map (48 MB of f32) is ~12 000 faults in 4 KiB pages and 24 in 2 MiB ones; on the 2-core development VM
// that was most of the DA2 postprocess's 103-110 ms for a 4000×3000 photo (docs/PERFORMANCE.md, session 40).
// Under AddressSanitizer the mappings are not used, so that ASan keeps checking these buffers as heap memory.
// DACPP_HUGE_PAGES=0 turns them off (every buffer from the heap), e.g. where THP compaction stalls are unwelcome.
#pragma once

#include <cstddef>
#include <new>

namespace dacpp::host_memory {

// Buffers from this size get a huge-page mapping: whole 2 MiB pages waste at most 2 MiB, under 25 % from here.
inline constexpr size_t kHugeFrom = size_t{8} << 20;

// True when a buffer of `bytes` is mapped in huge pages here (kHugeFrom or more; not under ASan, not with
// DACPP_HUGE_PAGES=0).
bool maps_huge(size_t bytes);

// The mapping's length for `bytes`: bytes rounded up to whole 2 MiB pages.
size_t mapped_length(size_t bytes);

// A 2 MiB-aligned read-write mapping of mapped_length(bytes) bytes, or nullptr when the system refuses it.
void* map(size_t bytes);
// Releases map(bytes)'s mapping (the same `bytes`).
void unmap(void* p, size_t bytes);

// An allocator for byte vectors of decoded images and the like: huge-page mappings where maps_huge(), the heap
// otherwise; elements are default-initialised (a resize() does not zero-fill what the caller overwrites).
template <typename T>
struct BufferAllocator {
  using value_type = T;
  BufferAllocator() = default;
  template <typename U>
  BufferAllocator(const BufferAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): rebinding

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (maps_huge(bytes)) {
      if (void* p = map(bytes)) return static_cast<T*>(p);
      throw std::bad_alloc();
    }
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (maps_huge(bytes)) unmap(p, bytes);
    else ::operator delete(p);
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... args) {
    ::new (static_cast<void*>(p)) U(static_cast<A&&>(args)...);
  }
  template <typename U>
  bool operator==(const BufferAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const BufferAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace dacpp::host_memory
