// layers::Exec — what a layer's forward needs besides its weights: the op context (device, backend state) and the
// activation arena of the running forward. Both belong to a Runner; layers keep no state of their own.
//
// ArenaScope frees, on destruction, every activation allocated in its lifetime (stack order, HostArena::rewind):
// a layer opens one around its temporaries after allocating the tensor it returns.
#pragma once

#include "core/arena.h"
#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::layers {

struct Exec {
  ops::Context& ctx;
  HostArena& arena;

  // A new uninitialised activation on the context's device, in its activation dtype (f32 on the CPU; the
  // model's precision on a GPU). Throws OutOfMemory.
  Tensor alloc(const Shape& shape, const char* name = "") { return arena.alloc(shape, ctx.act_dtype(), name); }
  // Same, always f32 (outputs that stay f32 whatever the precision).
  Tensor alloc_f32(const Shape& shape, const char* name = "") { return arena.alloc(shape, DType::F32, name); }
};

class ArenaScope {
 public:
  explicit ArenaScope(HostArena& arena) : arena_(arena), mark_(arena.mark()) {}
  ~ArenaScope() { arena_.rewind(mark_); }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  HostArena& arena_;
  HostArena::Mark mark_;
};

}  // namespace dacpp::layers
