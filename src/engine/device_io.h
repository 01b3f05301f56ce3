// Moving a forward's inputs and outputs between the host and a Runner's device (design.md §4.4: every transfer is
// explicit). On the CPU these are no-ops that return their argument.
#pragma once

#include "core/arena.h"
#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp {

// The activation arena for a context: host blocks on the CPU, device blocks from the CUDA caching allocator.
HostArena make_runner_arena(ops::Context& ctx);
// An arena for a side lane's activations (ops::Lanes; the DPT head's reassemble stages): on ctx's device, in 8 MiB
// blocks (a lane holds a few maps, not a forward).
HostArena make_lane_arena(ops::Context& ctx);

// host: f32 on the host → the same values on ctx's device in ctx.act_dtype(), from `arena` (the host tensor itself
// on the CPU).
Tensor input_to_device(ops::Context& ctx, HostArena& arena, const Tensor& host);

// t: any activation on ctx's device → an owning f32 host copy; a host f32 tensor is returned as is (not copied).
Tensor output_to_host(ops::Context& ctx, const Tensor& t);

}  // namespace dacpp
