// HostArena: a bump allocator for one forward's activations. Sized by the first pass over a geometry and reused;
// reset() between forwards keeps the blocks. Tensors handed out borrow the arena's memory: they must not outlive
// the arena or the next reset().
#pragma once

#include <memory>
#include <vector>

#include "core/tensor.h"

namespace dacpp {

class HostArena {
 public:
  explicit HostArena(size_t block_bytes = size_t{64} << 20) : block_bytes_(block_bytes) {}

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
  std::vector<Block> blocks_;
  size_t current_ = 0;
  size_t block_bytes_;
  size_t used_total_ = 0;
  size_t peak_ = 0;
};

}  // namespace dacpp
