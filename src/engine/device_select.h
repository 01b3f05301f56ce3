// Parsing the device and precision a model is loaded with, shared by the CLI (--device/--precision), the server
// (LoadModel options device:/precision:) and the C API.
#pragma once

#include <string>

#include "core/device.h"
#include "core/dtype.h"

namespace dacpp {

// "cpu", "cuda" (= cuda:0), "cuda:N", or "auto": the first GPU when this build has CUDA and a GPU answers, else the
// CPU. Throws InvalidArgument naming the value otherwise.
Device parse_device(const std::string& s);
// "bf16", "f16" (or "fp16"), "f32" (or "fp32"). Throws InvalidArgument naming the value otherwise.
DType parse_precision(const std::string& s);

// What the CPU backend runs on here, as oneDNN sees it (for reports: dacpp bench): the instruction set it dispatches
// to (e.g. "avx512_core_amx"), whether it has bf16 kernels (precision bf16 loads) and whether they are native.
struct CpuInfo {
  std::string isa;
  bool bf16 = false, bf16_native = false;
};
CpuInfo cpu_info();

}  // namespace dacpp
