// DeviceAllocator: a bounded caching allocator of CUDA device memory for one device.
//
// Blocks are rounded up to a size class (256-byte multiples below 1 MiB, then 1/8-octave steps) and every pointer
// is 256-byte aligned (cudaMalloc's own alignment; cuBLASLt and vector loads need >= 16). A freed block goes back
// to a per-class free list and is reused by the next request of the same class; when the cached (free) bytes would
// exceed the cache limit, the block is returned to the driver instead. When cudaMalloc fails, the whole cache is
// released and the allocation retried once before it is reported.
//
// Errors: OutOfMemory "<what>: device allocation failed on cuda:N: asked B bytes, free F of T bytes" (site
// "device.alloc" injects it). Thread-safe. The pool state is shared with every block handed out through
// allocate_shared(), so tensors may outlive the allocator object (their blocks are then freed to the driver).
// No CUDA header is needed to use this class.
#pragma once

#include <cstddef>
#include <memory>

#include "core/arena.h"

namespace dacpp::cuda {

class CudaContext;

class DeviceAllocator {
 public:
  // cache_limit_bytes bounds the free blocks kept for reuse (live blocks are not bounded by it).
  explicit DeviceAllocator(int device_index, size_t cache_limit_bytes = size_t{2} << 30);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // >= bytes of device memory, 256-byte aligned; bytes == 0 gives a 256-byte block. `what` names the request in
  // errors (a tensor, an arena block). Must be returned with deallocate().
  void* allocate(size_t bytes, const char* what);
  // Returns a block from allocate() to the cache. nullptr is ignored. Never throws.
  void deallocate(void* p) noexcept;
  // A block owned by the returned pointer: its deleter hands the block back to this pool.
  std::shared_ptr<void> allocate_shared(size_t bytes, const char* what);

  // Returns every cached (free) block to the driver. Throws Backend if cudaFree fails.
  void release_cached();
  int device_index() const { return device_index_; }
  size_t live_bytes() const;    // handed out and not yet returned (rounded sizes)
  size_t cached_bytes() const;  // free blocks held for reuse
  size_t peak_bytes() const;    // max live_bytes() so far

  // The size class a request of `bytes` is rounded to (exposed for tests).
  static size_t round_size(size_t bytes);

  struct Pool;  // implementation detail (device_allocator.cc)

 private:
  friend HostArena make_arena(CudaContext& ctx, size_t block_bytes);

  int device_index_;
  std::shared_ptr<Pool> pool_;
};

}  // namespace dacpp::cuda
