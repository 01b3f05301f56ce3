// Validation helpers shared by the op dispatchers. Each throws before anything is dereferenced, with a message
// naming the op, the tensor (its role and Tensor::name()), and the offending shape/dtype/device.
#pragma once

#include <string>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops::detail {

// "w 'blocks.0.mlp.fc1.weight'" or just "w" for an unnamed tensor.
std::string label(const char* role, const Tensor& t);

// Dtype rule (design.md §3): on the CPU every activation is f32, and a linear / conv weight is f32 or bf16 (a model
// loaded in bf16: the product runs on bf16 operands with f32 accumulation). On CUDA the activations of one call share
// one dtype, f32, bf16 or f16 (linear / conv weights too); bias, layer-norm gamma / beta and other parameters stay f32.

// t is defined (InvalidArgument) and resident on ctx.device() (Backend, naming the tensor and both devices).
void check_resident(const Context& ctx, const char* op, const char* role, const Tensor& t);
// t is defined (InvalidArgument), resident on ctx.device() (Backend) and f32 (InvalidArgument).
void check_input(const Context& ctx, const char* op, const char* role, const Tensor& t);
// True when `dt` may be an activation dtype on `device` (cpu: f32; cuda: f32, bf16, f16).
bool act_dtype_allowed(const Device& device, DType dt);
// t is resident and of an activation dtype allowed on ctx's device; returns that dtype (the call's dtype).
DType check_act(const Context& ctx, const char* op, const char* role, const Tensor& t);
// t is resident and has dtype `want` (InvalidArgument naming it and both dtypes otherwise).
void check_dtype(const Context& ctx, const char* op, const char* role, const Tensor& t, DType want);
// A linear / conv weight of a call whose activations are `act`: on CUDA of dtype `act`, on the CPU f32 or bf16.
void check_weight(const Context& ctx, const char* op, const char* role, const Tensor& t, DType act);
// The shared prologue of the resize ops: x and y resident, one activation dtype, rank 4, same batch and
// channels, non-empty source when the output is non-empty, no aliasing. Returns the dtype.
DType check_resize_pair(const Context& ctx, const char* op, const Tensor& x, const Tensor& y);

void check_rank(const char* op, const char* role, const Tensor& t, int rank);
// t is [N, h·w, C] tokens of an h × w grid (h, w >= 1; InvalidArgument naming t and the grid otherwise); rank checked
// by the caller.
void check_token_grid(const char* op, const char* role, const Tensor& t, int64_t h, int64_t w);
void check_min_rank(const char* op, const char* role, const Tensor& t, int rank);
void check_shape(const char* op, const char* role, const Tensor& t, const Shape& want);
// Non-empty a and b do not start at the same address.
void check_no_alias(const char* op, const char* role_a, const Tensor& a, const char* role_b, const Tensor& b);

}  // namespace dacpp::ops::detail
