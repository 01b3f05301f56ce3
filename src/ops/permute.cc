#include "ops/permute.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "ops/op_checks.h"
#include "ops/op_profile.h"

namespace dacpp::ops {

void permute(Context& ctx, const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  using namespace detail;
  constexpr const char* op = "permute";
  const DType dt = check_act(ctx, op, "x", x);
  check_dtype(ctx, op, "y", y, dt);
  const int rank = x.rank();
  DACPP_CHECK(rank <= 6 && static_cast<int>(perm.size()) == rank, ErrorCode::InvalidArgument, op, ": perm of ",
              perm.size(), " entries for ", label("x", x), " of shape ", shape_str(x.shape()), " (rank <= 6)");
  std::vector<bool> seen(rank, false);
  Shape ys(rank);
  for (int i = 0; i < rank; ++i) {
    const int p = perm[i];
    DACPP_CHECK(p >= 0 && p < rank && !seen[p], ErrorCode::InvalidArgument, op, ": perm entry ", i, " = ", p,
                " is out of range or repeated for rank ", rank);
    seen[p] = true;
    ys[i] = x.dim(p);
  }
  check_shape(op, "y", y, ys);
  check_no_alias(op, "y", y, "x", x);
  const OpScope scope(ctx, op, {&x, &y});
  switch (ctx.device().kind) {
    case DeviceKind::Cpu:
      return cpu::permute(ctx.cpu(), x, perm, y);
    case DeviceKind::Cuda:
      return cuda::permute(ctx.cuda(), x, perm, y);
  }
  DACPP_THROW(ErrorCode::Unsupported, op, ": no implementation for device ", device_name(ctx.device()));
}

}  // namespace dacpp::ops
