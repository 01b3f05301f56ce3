// to_host_f32: an owning host f32 copy of any activation (f32 / bf16 / f16) on ctx's device; a host f32 tensor is
// returned as is. Synchronous. Errors: Backend when t is on another device; InvalidArgument for a non-float dtype.
#pragma once

#include <string>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

Tensor to_host_f32(Context& ctx, const Tensor& t);

// A new uninitialised owning tensor on ctx's device (host memory on the CPU, the caching allocator on CUDA).
Tensor empty(Context& ctx, const Shape& shape, DType dtype, const std::string& name = {});

// t (f32 / bf16 / f16 on ctx's device) in `dtype`: t itself when it already is, else a new owning copy.
Tensor to_dtype(Context& ctx, const Tensor& t, DType dtype);

// to_dtype(ctx, t, ctx.act_dtype()).
Tensor to_act_dtype(Context& ctx, const Tensor& t);

}  // namespace dacpp::ops
