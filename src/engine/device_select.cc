#include "engine/device_select.h"

#include "backends/cpu/cpu_ops.h"
#include "backends/cuda/cuda_ops.h"
#include "core/error.h"
#include "core/log.h"

namespace dacpp {
namespace {

bool gpu_answers() {
  if (!cuda::built_with_cuda()) return false;
  try {
    cuda::create_context(0);
    return true;
  } catch (const Error& e) {
    log::info("device auto: no usable GPU (", e.what(), "); using the CPU");
    return false;
  }
}

}  // namespace

Device parse_device(const std::string& s) {
  if (s == "cpu") return Device::cpu();
  if (s == "auto") return gpu_answers() ? Device::cuda(0) : Device::cpu();
  if (s == "cuda") return Device::cuda(0);
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.size() <= 7 &&
      s.find_first_not_of("0123456789", 5) == std::string::npos)
    return Device::cuda(std::stoi(s.substr(5)));
  DACPP_THROW(ErrorCode::InvalidArgument, "device '", s, "': expected cpu, cuda, cuda:N or auto");
}

DType parse_precision(const std::string& s) {
  if (s == "bf16") return DType::BF16;
  if (s == "f16" || s == "fp16") return DType::F16;
  if (s == "f32" || s == "fp32") return DType::F32;
  DACPP_THROW(ErrorCode::InvalidArgument, "precision '", s, "': expected bf16, f16 or f32");
}

CpuInfo cpu_info() {
  const cpu::Bf16Support& s = cpu::bf16_support();
  return CpuInfo{s.isa, s.refusal.empty(), s.native};
}

}  // namespace dacpp
