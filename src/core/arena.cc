#include "core/arena.h"

#include <algorithm>

namespace dacpp {

Tensor HostArena::alloc(const Shape& shape, DType dtype, const char* name) {
  const int64_t n = shape_numel(shape);
  const size_t bytes = (dtype_nbytes(dtype, n) + 63) / 64 * 64;
  while (current_ < blocks_.size() && blocks_[current_].size - blocks_[current_].used < bytes) ++current_;
  if (current_ == blocks_.size()) {
    Block b;
    b.size = std::max(block_bytes_, bytes);
    b.mem = host_alloc(b.size, "activation arena block");
    blocks_.push_back(std::move(b));
  }
  Block& b = blocks_[current_];
  void* p = static_cast<char*>(b.mem.get()) + b.used;
  b.used += bytes;
  used_total_ += bytes;
  peak_ = std::max(peak_, used_total_);
  return Tensor::view(p, shape, dtype, Device::cpu(), nullptr, name);
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
