// Validation helpers shared by the op dispatchers. Each throws before anything is dereferenced, with a message
// naming the op, the tensor (its role and Tensor::name()), and the offending shape/dtype/device.
#pragma once

#include <string>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops::detail {

// "w 'blocks.0.mlp.fc1.weight'" or just "w" for an unnamed tensor.
std::string label(const char* role, const Tensor& t);

// t is defined (InvalidArgument), resident on ctx.device() (Backend) and f32 (InvalidArgument).
void check_input(const Context& ctx, const char* op, const char* role, const Tensor& t);

void check_rank(const char* op, const char* role, const Tensor& t, int rank);
void check_min_rank(const char* op, const char* role, const Tensor& t, int rank);
void check_shape(const char* op, const char* role, const Tensor& t, const Shape& want);
// Non-empty a and b do not start at the same address.
void check_no_alias(const char* op, const char* role_a, const Tensor& a, const char* role_b, const Tensor& b);

}  // namespace dacpp::ops::detail
