// attention: out = softmax(q · kᵀ · scale) · v, per batch and head.
//   q:   [B, H, Nq, D] f32      k, v: [B, H, Nk, D] f32
//   out: [B, Nq, H, D] f32 (token-major, so it reshapes to [B, Nq, H·D] for the output projection)
//   scale: usually 1/sqrt(D). D is 64 for every DA model; other D are accepted.
// On the CPU, a context set to bf16 products (cpu::CpuContext::set_bf16_products: a model loaded in bf16) runs
// q·kᵀ and the probabilities times v on bf16 operands with f32 accumulation; the scores and softmax stay f32.
// Errors: InvalidArgument on shape/dtype mismatch; Backend when not all on ctx's device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

void attention(Context& ctx, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out);

// attention_qkv: self-attention straight from a fused qkv projection, without splitting it first.
//   qkv: [B, N, 3·H·D] — per token the H heads of q, then of k, then of v (each head's D values contiguous)
//   out: [B, N, H, D];  heads = H.  The same as attention() on q, k, v = qkv viewed as [B, N, 3, H, D] and
//   permuted to [3, B, H, N, D] (the CUDA kernel reads them in place).
// Errors: InvalidArgument on shape/dtype mismatch or a width not divisible by 3·heads; Backend as attention().
void attention_qkv(Context& ctx, const Tensor& qkv, int64_t heads, float scale, Tensor& out);

// attention_qkv_rows: rows [row0, row0 + Nq) of attention_qkv's output — those tokens' queries against all N
// tokens' keys and values, so a sequence can be attended in row chunks (e.g. on separate ops::Lanes).
//   qkv: [B, N, 3·H·D] as attention_qkv;  out: [B, Nq, H, D] with row0 >= 0 and row0 + Nq <= N.
// Each output row is the same as attention_qkv's, bit for bit, where a backend attends only the chunk's queries (the
// CPU, which takes them out dense first; CUDA's tensor-core kernels, which read them in place); other CUDA dtypes and
// head dims attend every row and copy the chunk out.
// Errors: as attention_qkv, and InvalidArgument for a row range outside [0, N).
void attention_qkv_rows(Context& ctx, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out);

}  // namespace dacpp::ops
