// Fused bf16 attention for CPUs with AVX512-BF16 (a model loaded in bf16; CpuContext::bf16_products()).
//
// Per (image, head, block of query rows): the block's scores against every key into a per-thread buffer that stays
// in the core's L2, the softmax there, and the probabilities times V straight into the token-major output — no
// score matrix in memory, one pass instead of oneDNN's three primitives per chunk with K and V re-packed by each.
// K and V of each head are rounded to bf16 and packed once per call, in the pair-interleaved layout that
// VDPBF16PS multiplies (two bf16 products summed into an f32 lane). Numerics as the oneDNN path: q, k, v and the
// probabilities bf16; the scores, the softmax and both products' accumulation f32 (the probabilities are rounded
// before normalising, and the output is divided by the sum of the unrounded ones).
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

// Whether the fused kernel runs here for head dim d: the CPU has AVX512-BF16 (and the OS keeps its state), oneDNN
// is allowed that instruction set (ONEDNN_MAX_CPU_ISA), and d is a multiple of 16 up to 128.
bool fused_bf16_attention_fits(int64_t d);

// out[b, t, h, :] = softmax(scale · q_t · kᵀ) · v for t < nq, every head; out is [batch, nq, heads, d] f32.
// Uses the Src (packed K and V) and Work (per-thread blocks) scratch slots. Call only where
// fused_bf16_attention_fits(d).
void fused_bf16_attention(CpuContext& c, const AttnRows& q, const AttnRows& k, const AttnRows& v, int64_t batch,
                          int64_t heads, int64_t nq, int64_t nk, int64_t d, float scale, float* out);

}  // namespace dacpp::cpu
