#include "ops/context.h"

#include "backends/cpu/cpu_context.h"
#include "core/error.h"

namespace dacpp::ops {

namespace {

DType checked_act_dtype(const Device& device, DType dt) {
  if (device.kind == DeviceKind::Cpu) {
    DACPP_CHECK(dt == DType::F32, ErrorCode::InvalidArgument, "ops::Context: activation dtype ", dtype_name(dt),
                " is not supported on cpu (f32 only)");
  } else {
    DACPP_CHECK(dt == DType::F32 || dt == DType::BF16 || dt == DType::F16, ErrorCode::InvalidArgument,
                "ops::Context: activation dtype ", dtype_name(dt), " is not supported on ", device_name(device),
                " (f32, bf16 or f16)");
  }
  return dt;
}

}  // namespace

Context::Context(Device device, int threads, size_t prim_cache_capacity, DType act_dtype)
    : device_(device), act_dtype_(checked_act_dtype(device, act_dtype)), pool_(threads) {
  if (device.kind == DeviceKind::Cuda) cuda_ = cuda::create_context(device.index);
  cpu_ = std::make_unique<cpu::CpuContext>(pool_, prim_cache_capacity);
}

Context::~Context() = default;

cpu::CpuContext& Context::cpu() { return *cpu_; }

cuda::CudaContext& Context::cuda() {
  DACPP_CHECK(cuda_ != nullptr, ErrorCode::Backend, "ops::Context on ", device_name(device_),
              " has no CUDA state (the op needs a CUDA context)");
  return *cuda_;
}

}  // namespace dacpp::ops
