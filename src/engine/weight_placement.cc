#include "engine/weight_placement.h"

#include <atomic>

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "formats/half.h"

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

HostBf16Placement::HostBf16Placement() {
  DACPP_FAULT_POINT("cpu.bf16", ErrorCode::Unsupported, "precision bf16 on the CPU: oneDNN has no bf16 kernels");
  const cpu::Bf16Support& s = cpu::bf16_support();
  DACPP_CHECK(s.refusal.empty(), ErrorCode::Unsupported, "precision bf16 on the CPU: ", s.refusal,
              "; load with precision f32");
  if (!s.native)
    log::warn("precision bf16 on the CPU: this CPU (", s.isa,
              ") has no bf16 instructions; oneDNN emulates them, which is slower than f32");
}

Tensor HostBf16Placement::place(const Tensor& host, bool keep_f32) const {
  if (keep_f32 || host.rank() < 2) return host;
  const int64_t n = host.numel();
  Tensor t = Tensor::empty(host.shape(), DType::BF16, host.name());
  const float* src = host.data<float>();
  auto* dst = static_cast<uint16_t*>(t.raw());
  std::atomic<bool> overflow{false};
  ThreadPool pool;
  pool.parallel_for(n, int64_t{1} << 18, [&](int64_t b, int64_t e) {
    uint32_t inf = 0;  // branch-free, so the loop vectorises
    for (int64_t i = b; i < e; ++i) {
      dst[i] = f32_to_bf16(src[i]);
      inf |= static_cast<uint32_t>(bf16_exponent_all_ones(dst[i]));
    }
    if (inf != 0) overflow.store(true, std::memory_order_relaxed);
  });
  if (overflow.load()) throw_bf16_overflow(host.name(), src, n);
  bytes_ += t.nbytes();
  return t;
}

}  // namespace dacpp
