// HostArena: a bump allocator for one forward's activations. Sized by the first pass over a geometry and reused;
// reset() between forwards keeps the blocks. Tensors handed out borrow the arena's memory: they must not outlive
// the arena or the next reset().
//
// Despite the name it serves any device: the default constructor takes its blocks from host_alloc (64-byte
// aligned, Device::cpu()); the second constructor takes them from a pluggable block allocator (e.g. the CUDA
// caching allocator, see cuda::make_arena) and tags every tensor it hands out with that Device. Core never
// touches device memory: it only does pointer arithmetic inside the blocks.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace dacpp {

class HostArena {
 public:
  explicit HostArena(size_t block_bytes = size_t{64} << 20) : block_bytes_(block_bytes) {}

  // Allocates a block of at least `bytes` (aligned to at least `alignment`) or throws (OutOfMemory); `what`
  // names the request. Frees a block from the allocate callback; must not throw.
  using AllocateFn = std::function<void*(size_t bytes, const char* what)>;
  using FreeFn = std::function<void(void*)>;
  // An arena on `device` whose blocks come from allocate/free; allocations are rounded to `alignment` bytes
  // (a power of two >= 64; 256 for CUDA). Throws InvalidArgument on a missing callback or a bad alignment.
  HostArena(Device device, AllocateFn allocate, FreeFn free, size_t block_bytes = size_t{64} << 20,
            size_t alignment = 256);

  const Device& device() const { return device_; }

  // A new uninitialised f32 (or other dtype) tensor from the arena. Throws OutOfMemory (site "host.alloc").
  Tensor alloc(const Shape& shape, DType dtype = DType::F32, const char* name = "");
  // Forget all allocations; keep the blocks.
  void reset();

  // Stack-order release within one forward: rewind(mark()) frees every allocation made after the mark (their
  // tensors dangle afterwards) and keeps the ones made before it. Used by layers for their temporaries.
  struct Mark {
    size_t block = 0;
    size_t used = 0;
    size_t total = 0;
  };
  Mark mark() const;
  void rewind(const Mark& m);
  // Release all blocks.
  void release();
  size_t reserved_bytes() const;
  size_t used_bytes() const { return used_total_; }
  size_t peak_bytes() const { return peak_; }

 private:
  struct Block {
    std::shared_ptr<void> mem;
    size_t size = 0;
    size_t used = 0;
  };
  std::shared_ptr<void> new_block(size_t bytes);

  std::vector<Block> blocks_;
  size_t current_ = 0;
  size_t block_bytes_;
  Device device_;
  AllocateFn allocate_;  // empty: host_alloc
  FreeFn free_;
  size_t alignment_ = 64;
  size_t used_total_ = 0;
  size_t peak_ = 0;
};

}  // namespace dacpp
