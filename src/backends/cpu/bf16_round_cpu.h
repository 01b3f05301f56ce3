// Rounding f32 activations to bf16 for the products a model loaded in bf16 runs on bf16 operands (round to nearest,
// ties to even). Where the CPU has AVX512-BF16 (and oneDNN may use it) VCVTNE2PS2BF16 rounds 32 values an
// instruction; like oneDNN's own bf16 kernels it reads f32 denormals as zero. Elsewhere a scalar loop
// (formats/half.h's f32_to_bf16) does it. Split over the context's threads.
#pragma once

#include <cstdint>

#include "backends/cpu/cpu_context.h"

namespace dacpp::cpu {

// Whether round_to_bf16 uses VCVTNE2PS2BF16 here (tests pick their expectations for denormals by it).
bool bf16_rounding_native();

// y[i] = bf16(x[i]) for i < n.
void round_to_bf16(CpuContext& c, const float* x, uint16_t* y, int64_t n);
// The same on the calling thread alone (inside an op's own parallel loop).
void round_to_bf16_serial(const float* x, uint16_t* y, int64_t n);

}  // namespace dacpp::cpu
