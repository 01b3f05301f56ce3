// permute: y = x.permute(perm).contiguous()   (rank ≤ 6; y preallocated with the permuted shape)
// Errors: InvalidArgument on a bad perm or shape; Backend off-device.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void permute(Context& ctx, const Tensor& x, const std::vector<int>& perm, Tensor& y);

}  // namespace dacpp::ops
