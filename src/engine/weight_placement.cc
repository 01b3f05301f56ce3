#include "engine/weight_placement.h"

#include "backends/cuda/cuda_ops.h"
#include "core/error.h"

namespace dacpp {

DevicePlacement::DevicePlacement(Device device, DType precision) : device_(device), precision_(precision) {
  DACPP_CHECK(precision == DType::F32 || precision == DType::BF16 || precision == DType::F16,
              ErrorCode::InvalidArgument, "model precision ", dtype_name(precision),
              " is not one of f32, bf16, f16");
  DACPP_CHECK(device.kind == DeviceKind::Cuda, ErrorCode::Unsupported, "weights can only be placed on a CUDA device, not ",
              device_name(device));
  ctx_ = std::make_unique<ops::Context>(device, 1, 1, precision);
  // design.md §4.3: a kernel without an image for this GPU is a load-time Backend error, not a crash at use.
  cuda::probe_all_kernels(ctx_->cuda());
}

DevicePlacement::~DevicePlacement() = default;

Tensor DevicePlacement::place(const Tensor& host, bool keep_f32) const {
  const DType target = keep_f32 || host.rank() < 2 ? DType::F32 : precision_;
  Tensor t = cuda::upload(ctx_->cuda(), host, target);
  bytes_ += t.nbytes();
  return t;
}

}  // namespace dacpp
