#include "ops/lanes.h"

#include <algorithm>

#include "core/error.h"

namespace dacpp::ops {

Lanes::Lanes(Context& ctx, int wanted, bool lane0_first) : ctx_(ctx) {
  DACPP_CHECK(wanted >= 1, ErrorCode::Internal, "lanes: ", wanted, " wanted");
  if (ctx.device().is_cpu() || wanted == 1 || !cuda::lanes_enabled(ctx.cuda())) return;
  const int count = std::min(wanted, cuda::max_lanes());
  try {
    cuda::fork_lanes(ctx.cuda(), count, lane0_first);
  } catch (...) {
    cuda::end_lanes(ctx.cuda());
    throw;
  }
  count_ = count;
}

Lanes::~Lanes() {
  if (count_ > 1) cuda::end_lanes(ctx_.cuda());
}

Lanes::On Lanes::on(int lane) {
  if (count_ > 1) cuda::set_lane(ctx_.cuda(), lane % count_);
  return On(this);
}

Lanes::On::~On() {
  if (lanes_->count_ > 1) cuda::set_lane(lanes_->ctx_.cuda(), 0);  // lane 0 always exists: no throw
}

void Lanes::join(int lane) {
  if (count_ > 1 && lane % count_ != 0) cuda::join_lane(ctx_.cuda(), lane % count_);
}

}  // namespace dacpp::ops
