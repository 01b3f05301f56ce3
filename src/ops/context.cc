#include "ops/context.h"

#include "backends/cpu/cpu_context.h"
#include "core/error.h"

namespace dacpp::ops {

Context::Context(Device device, int threads, size_t prim_cache_capacity) : device_(device), pool_(threads) {
  DACPP_CHECK(device.kind == DeviceKind::Cpu, ErrorCode::Unsupported, "ops::Context: device ",
              device_name(device), " requested, but dacpp was built without CUDA");
  cpu_ = std::make_unique<cpu::CpuContext>(pool_, prim_cache_capacity);
}

Context::~Context() = default;

cpu::CpuContext& Context::cpu() { return *cpu_; }

}  // namespace dacpp::ops
