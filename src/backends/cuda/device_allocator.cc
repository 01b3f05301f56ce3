#include "backends/cuda/device_allocator.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops.h"
#include "core/fault.h"
#include "core/log.h"

namespace dacpp::cuda {

// Blocks are reused without synchronisation: every user of one pool enqueues its work on the one stream of its
// CudaContext, so a block freed by the host and handed out again is only touched after the earlier work on that
// stream (stream order). Host<->device copies go through the same stream.
struct DeviceAllocator::Pool {
  int device = 0;
  size_t cache_limit = 0;
  mutable std::mutex mu;
  std::map<size_t, std::vector<void*>> free_lists;  // size class -> free blocks
  std::unordered_map<void*, size_t> live;           // block -> size class
  size_t live_bytes = 0, cached_bytes = 0, peak_bytes = 0;

  void* allocate(size_t bytes, const char* what);
  void deallocate(void* p) noexcept;
  void release_cached_locked();
};

namespace {

[[noreturn]] void throw_oom(int device, size_t asked, const char* what, cudaError_t err) {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) cudaGetLastError();
  DACPP_THROW(ErrorCode::OutOfMemory, what, ": device allocation failed on cuda:", device, ": asked ", asked,
              " bytes, free ", free_b, " of ", total_b, " bytes (", cudaGetErrorName(err), ")");
}

}  // namespace

size_t DeviceAllocator::round_size(size_t bytes) {
  constexpr size_t kSmall = size_t{1} << 20;
  if (bytes == 0) return 256;
  if (bytes <= kSmall) return (bytes + 255) / 256 * 256;
  // 8 classes per octave: step = 2^(floor(log2(bytes)) - 3).
  int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  const size_t step = size_t{1} << (log2 - 3);
  DACPP_CHECK(bytes <= SIZE_MAX - step, ErrorCode::OutOfMemory, "device allocation of ", bytes,
              " bytes overflows");
  return (bytes + step - 1) / step * step;
}

void* DeviceAllocator::Pool::allocate(size_t bytes, const char* what) {
  DACPP_FAULT_POINT("device.alloc", ErrorCode::OutOfMemory, what, ": device allocation of ", bytes, " bytes on cuda:",
                    device);
  const size_t size = round_size(bytes);
  std::lock_guard<std::mutex> lock(mu);
  void* p = nullptr;
  auto it = free_lists.find(size);
  if (it != free_lists.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    cached_bytes -= size;
  } else {
    DACPP_CUDA_CHECK(cudaSetDevice(device), what, ": select cuda:", device);
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached_locked();
      err = cudaMalloc(&p, size);
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw_oom(device, bytes, what, err);
    }
    DACPP_CUDA_CHECK(err, what, ": cudaMalloc of ", size, " bytes");
  }
  live.emplace(p, size);
  live_bytes += size;
  peak_bytes = std::max(peak_bytes, live_bytes);
  return p;
}

void DeviceAllocator::Pool::deallocate(void* p) noexcept {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mu);
  auto it = live.find(p);
  if (it == live.end()) {
    log::error("cuda allocator: free of unknown block ", p, " on cuda:", device, " ignored");
    return;
  }
  const size_t size = it->second;
  live.erase(it);
  live_bytes -= size;
  if (cached_bytes + size <= cache_limit) {
    try {
      free_lists[size].push_back(p);
      cached_bytes += size;
      return;
    } catch (...) {
      // no memory for the free-list entry: return the block to the driver instead
    }
  }
  cudaError_t err = cudaFree(p);
  if (err != cudaSuccess) {
    cudaGetLastError();
    log::error("cuda allocator: cudaFree on cuda:", device, " failed: ", cudaGetErrorName(err), ": ",
               cudaGetErrorString(err));
  }
}

void DeviceAllocator::Pool::release_cached_locked() {
  for (auto& [size, blocks] : free_lists) {
    for (void* p : blocks) {
      cudaError_t err = cudaFree(p);
      if (err != cudaSuccess) {
        cudaGetLastError();
        log::error("cuda allocator: cudaFree on cuda:", device, " failed: ", cudaGetErrorName(err));
      }
    }
  }
  free_lists.clear();
  cached_bytes = 0;
}

DeviceAllocator::DeviceAllocator(int device_index, size_t cache_limit_bytes)
    : device_index_(device_index), pool_(std::make_shared<Pool>()) {
  pool_->device = device_index;
  pool_->cache_limit = cache_limit_bytes;
}

DeviceAllocator::~DeviceAllocator() {
  std::lock_guard<std::mutex> lock(pool_->mu);
  pool_->release_cached_locked();
  pool_->cache_limit = 0;  // blocks still held by tensors go straight back to the driver when freed
}

void* DeviceAllocator::allocate(size_t bytes, const char* what) { return pool_->allocate(bytes, what); }

void DeviceAllocator::deallocate(void* p) noexcept { pool_->deallocate(p); }

std::shared_ptr<void> DeviceAllocator::allocate_shared(size_t bytes, const char* what) {
  void* p = pool_->allocate(bytes, what);
  std::shared_ptr<Pool> pool = pool_;
  try {
    return std::shared_ptr<void>(p, [pool](void* q) { pool->deallocate(q); });
  } catch (...) {
    pool->deallocate(p);
    throw;
  }
}

void DeviceAllocator::release_cached() {
  std::lock_guard<std::mutex> lock(pool_->mu);
  pool_->release_cached_locked();
}

size_t DeviceAllocator::live_bytes() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->live_bytes;
}

size_t DeviceAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->cached_bytes;
}

size_t DeviceAllocator::peak_bytes() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->peak_bytes;
}

HostArena make_arena(CudaContext& ctx, size_t block_bytes) {
  std::shared_ptr<DeviceAllocator::Pool> pool = ctx.allocator().pool_;  // blocks keep the pool alive
  return HostArena(
      Device::cuda(ctx.device_index()),
      [pool](size_t bytes, const char* what) { return pool->allocate(bytes, what); },
      [pool](void* p) { pool->deallocate(p); }, block_bytes, 256);
}

}  // namespace dacpp::cuda
