#include "core/arena.h"

#include <algorithm>

namespace dacpp {

HostArena::HostArena(Device device, AllocateFn allocate, FreeFn free, size_t block_bytes, size_t alignment)
    : block_bytes_(block_bytes), device_(device), allocate_(std::move(allocate)), free_(std::move(free)),
      alignment_(alignment) {
  DACPP_CHECK(allocate_ && free_, ErrorCode::InvalidArgument, "HostArena on ", device_name(device),
              ": allocate and free callbacks are required");
  DACPP_CHECK(alignment >= 64 && (alignment & (alignment - 1)) == 0, ErrorCode::InvalidArgument, "HostArena on ",
              device_name(device), ": alignment ", alignment, " is not a power of two >= 64");
}

std::shared_ptr<void> HostArena::new_block(size_t bytes) {
  if (!allocate_) return host_alloc(bytes, "activation arena block");
  void* p = allocate_(bytes, "activation arena block");
  DACPP_CHECK(p != nullptr, ErrorCode::OutOfMemory, "activation arena block on ", device_name(device_),
              ": allocator returned no memory for ", bytes, " bytes");
  FreeFn free = free_;
  return std::shared_ptr<void>(p, [free](void* q) { free(q); });
}

Tensor HostArena::alloc(const Shape& shape, DType dtype, const char* name) {
  const int64_t n = shape_numel(shape);
  const size_t bytes = (dtype_nbytes(dtype, n) + alignment_ - 1) / alignment_ * alignment_;
  while (current_ < blocks_.size() && blocks_[current_].size - blocks_[current_].used < bytes) ++current_;
  if (current_ == blocks_.size()) {
    Block b;
    b.size = std::max(block_bytes_, bytes);
    b.mem = new_block(b.size);
    blocks_.push_back(std::move(b));
  }
  Block& b = blocks_[current_];
  void* p = static_cast<char*>(b.mem.get()) + b.used;
  b.used += bytes;
  used_total_ += bytes;
  peak_ = std::max(peak_, used_total_);
  return Tensor::view(p, shape, dtype, device_, nullptr, name);
}

void HostArena::reset() {
  for (Block& b : blocks_) b.used = 0;
  current_ = 0;
  used_total_ = 0;
}

HostArena::Mark HostArena::mark() const {
  Mark m;
  m.block = current_;
  m.used = current_ < blocks_.size() ? blocks_[current_].used : 0;
  m.total = used_total_;
  return m;
}

void HostArena::rewind(const Mark& m) {
  for (size_t i = m.block; i < blocks_.size(); ++i) blocks_[i].used = (i == m.block) ? m.used : 0;
  current_ = std::min(m.block, blocks_.size());
  used_total_ = m.total;
}

void HostArena::release() {
  blocks_.clear();
  current_ = 0;
  used_total_ = 0;
}

size_t HostArena::reserved_bytes() const {
  size_t s = 0;
  for (const Block& b : blocks_) s += b.size;
  return s;
}

}  // namespace dacpp
