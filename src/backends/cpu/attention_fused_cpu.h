// Fused attention on AVX-512 CPUs, for f32 models and (with AVX512-BF16) models loaded in bf16.
//
// Per (image, head, block of query rows): the block's scores against every key into a per-thread buffer that stays
// in the core's L2, the softmax there, and the probabilities times V straight into the token-major output — no
// score matrix in memory, one pass instead of oneDNN's three primitives per chunk (which, in bf16, re-packed K and V
// for every chunk). K of each head is packed once per call into groups of 64 keys, one vector per key lane.
// bf16 (CpuContext::bf16_products()): q, k, v and the probabilities are rounded to bf16 and multiplied in pairs by
// VDPBF16PS (K as d / 2 pairs per key, V packed as key pairs); the scores, the softmax and both products'
// accumulation are f32, and the probabilities are rounded before normalising (the output is divided by the sum of
// the unrounded ones). f32: FMA throughout, V read in place.
// Each output row depends only on its own query, so a row range gives those rows of the whole, bit for bit.
#pragma once

#include <cstdint>

#include "backends/cpu/cpu_context.h"

namespace dacpp::cpu {

// One operand: row t of head h of image b is `d` f32 values at base + b·batch + h·head + t·token (elements).
struct AttnRows {
  const float* base;
  int64_t batch, head, token;
};

// Whether the fused kernel runs here for head dim d: the CPU has AVX-512 (F, BW, VL, DQ; and BF16 for bf16), oneDNN
// is allowed that instruction set (ONEDNN_MAX_CPU_ISA), and d is a multiple of 16 up to 128.
bool fused_attention_fits(int64_t d, bool bf16);

// out[b, t, h, :] = softmax(scale · q_t · kᵀ) · v for t < nq, every head; out is [batch, nq, heads, d] f32.
// Uses the Src (packed K and V) and Work (per-thread blocks) scratch slots. Call only where
// fused_attention_fits(d, bf16).
void fused_attention(CpuContext& c, const AttnRows& q, const AttnRows& k, const AttnRows& v, int64_t batch,
                     int64_t heads, int64_t nq, int64_t nk, int64_t d, float scale, bool bf16, float* out);

}  // namespace dacpp::cpu
