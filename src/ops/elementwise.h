// Elementwise ops on f32 tensors. y may alias x (in place).
//   unary(kind, x, y):  y = f(x), same shape. GELU is the exact erf form.
//   add(a, b, y), mul(a, b, y): numpy-style broadcasting of b against a (right-aligned dims, size-1 dims
//     broadcast); y has a's shape. (Only b broadcasts: a's shape is the result shape.)
//   add_scaled(x, a, gamma, y): y = x + a ⊙ gamma (gamma [C] broadcast over a's last dim; undefined: y = x + a),
//     the LayerScale residual update in one pass. x and y share a dtype and shape and may alias; a has x's shape
//     and may have another activation dtype (on CUDA: a bf16 / f16 branch added into an f32 residual stream, the
//     product and sum taken in f32).
//   embed_tokens(lead, table, patches, tokens): a ViT's input tokens for every image of a batch in one pass:
//     tokens[b, l] = lead[l] for the L leading rows (the class token with its position embedding), and
//     tokens[b, L + p] = table[p] + patches[b, p] (the position embedding, summed in f32). lead [L, E] f32 (L >= 0;
//     undefined for none), table [P, E] f32, patches [B, P, E] of the activation dtype, tokens [B, L + P, E] f32,
//     aliasing none of them.
// Errors: InvalidArgument on shape/dtype mismatch; Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

enum class Unary { Gelu, Silu, Relu, Exp, Sigmoid };

void unary(Context& ctx, Unary kind, const Tensor& x, Tensor& y);
void add(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y);
void mul(Context& ctx, const Tensor& a, const Tensor& b, Tensor& y);
void add_scaled(Context& ctx, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y);
void embed_tokens(Context& ctx, const Tensor& lead, const Tensor& table, const Tensor& patches, Tensor& tokens);

}  // namespace dacpp::ops
