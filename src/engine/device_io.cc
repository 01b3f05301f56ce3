#include "engine/device_io.h"

#include "backends/cuda/cuda_ops.h"
#include "ops/copy.h"
#include "ops/transfer.h"

namespace dacpp {

HostArena make_runner_arena(ops::Context& ctx) {
  if (ctx.device().is_cpu()) return HostArena();
  return cuda::make_arena(ctx.cuda());
}

Tensor input_to_device(ops::Context& ctx, HostArena& arena, const Tensor& host) {
  if (ctx.device().is_cpu()) return host;
  Tensor f32 = arena.alloc(host.shape(), DType::F32, "input.f32");
  ops::copy(ctx, host, f32);
  if (ctx.act_dtype() == DType::F32) return f32;
  Tensor act = arena.alloc(host.shape(), ctx.act_dtype(), "input");
  ops::cast(ctx, f32, act);
  return act;
}

Tensor output_to_host(ops::Context& ctx, const Tensor& t) { return ops::to_host_f32(ctx, t); }

}  // namespace dacpp
