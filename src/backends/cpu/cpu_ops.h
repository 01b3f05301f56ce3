// CPU implementations of the ops (one *_cpu.cc per op). Called only by the validating dispatchers in src/ops/,
// which have already checked dtypes, shapes and residency: these functions trust their arguments.
// Contracts (shapes, layouts) are those of the matching src/ops/<op>.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_context.h"
#include "core/tensor.h"

namespace dacpp::cpu {

// Fused epilogue of linear / conv2d (mirrors ops::Activation; backends sit below ops in the ladder).
enum class Epilogue { None, Relu, Gelu };
// Mirrors ops::Unary.
enum class UnaryKind { Gelu, Silu, Relu, Exp, Sigmoid };
enum class BinaryKind { Add, Mul };

// x: [M, K] (flattened), w: [N, K], bias: [N] or undefined, y: [M, N].
void linear(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act);
// y += x · wᵀ + bias (y f32 [M, N]): linear with the result added to y's values.
void linear_add(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y);

// A linear weight [N, K] laid out once, at load, the way oneDNN's matmul reads it here (blocked, e.g. 16 × 64
// blocks, and bf16 in pairs along K), instead of in every call: 10-15 % off the products at DA2-L's shapes on a
// 2-core AVX-512 BF16 machine. `impl` holds the layout and the bytes (linear_cpu.cc).
struct PackedWeight {
  int64_t n = 0, k = 0;
  DType dtype = DType::F32;
  std::string name;
  std::shared_ptr<const void> impl;
};
// w (host f32 or bf16, [N, K]) packed for linear_packed with products in `product` (f32, or bf16: an f32 w is
// rounded to nearest even in the same pass, denormals read as zero as oneDNN's bf16 kernels do); nullopt where
// oneDNN's matmul reads the plain layout itself. Throws InvalidModel naming the tensor where an f32 value rounds
// past bf16's range, Backend (oneDNN) or OutOfMemory.
std::optional<PackedWeight> pack_linear_weight(const Tensor& w, DType product);
// linear() on a packed weight; x f32 [M, K] (flattened). A matmul that wants another layout for this M gets the
// packed weight reordered into it (correct, as slow as the plain weight).
// `add`: the result added to y's values, as linear_add.
void linear_packed(CpuContext& c, const Tensor& x, const PackedWeight& w, const Tensor& bias, Tensor& y, Epilogue act,
                   bool add = false);

// x, y: [R, C] (flattened); y may alias x.
void layer_norm(CpuContext& c, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y);

// q: [B, H, Nq, D], k, v: [B, H, Nk, D], out: [B, Nq, H, D].
void attention(CpuContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out);
// Rows [row0, row0 + out.dim(1)) of the self-attention (ops::attention_qkv_rows).
void attention_qkv(CpuContext& c, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out);
// oneDNN's implementations of attention's two products for h heads of nq queries against nk keys at head dim d, as
// its first chunk would run them ("qk / pv", e.g. "brg:avx512_core_amx_bf16 / brg:avx512_core_amx_bf16").
std::string attention_impls(CpuContext& c, int64_t h, int64_t nq, int64_t nk, int64_t d, bool bf16);

struct ConvGeometry {
  int stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};
void conv2d(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
            Epilogue act);
void conv_transpose2d(CpuContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride);
// x: channels-last tokens [N, h·w, C] (oneDNN reads them as an nhwc source).
// ops::im2col3x3_tokens.
void im2col3x3_tokens(CpuContext& c, const Tensor& tokens, int64_t h, int64_t w, int ky0, int kyn, bool ones,
                      Tensor& y);
void conv_transpose2d_tokens(CpuContext& c, const Tensor& x, int64_t h, int64_t w, const Tensor& wt, const Tensor& bias,
                             Tensor& y, int stride);
// ops::patch_rows.
void patch_rows(CpuContext& c, const Tensor& x, int k, Tensor& y);

void resize_bilinear(CpuContext& c, const Tensor& x, Tensor& y, bool align_corners);
// y = rows [row0, row0 + y.dim(2)) of resize_bilinear(x) to height full_h (width y.dim(3)).
void resize_bilinear_rows(CpuContext& c, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners);
// Rows [row0, row0 + rows) of resize_bilinear(x) to full_h × ow for one image x [ch, h, w], written channels-last:
// y [rows, ow, ch], f32 or (bf16) rounded to bf16. The values are resize_bilinear_rows's, plus, where given,
// add_cols[ox, k] + add_rows[oy, k] (add_cols [ow, ch], add_rows [full_h, ch], channels innermost; both or
// neither) before rounding.
void resize_bilinear_rows_nhwc(CpuContext& c, const float* x, int64_t ch, int64_t h, int64_t w, int64_t row0,
                               int64_t rows, int64_t full_h, int64_t ow, bool align_corners, void* y, bool bf16,
                               const float* add_cols = nullptr, const float* add_rows = nullptr);
void resize_bicubic(CpuContext& c, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w);

void unary(CpuContext& c, UnaryKind kind, const Tensor& x, Tensor& y);

// ops::upsample_conv_head (final: 0 none, 1 ReLU, 2 exp, as ops::HeadFinal; add_cols [C, W] / add_rows [C, H] or
// both null). Never stores the H × W maps: per image, bands of output rows are upsampled channels-last (the add
// applied there), run through the 3×3 conv (oneDNN, nhwc in and out: no reorders) and reduced to the output
// channels by the 1×1 conv here. The 1×1 conv's sums are f32 (a bf16 w1 widened exactly).
void upsample_conv_head(CpuContext& c, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                        const Tensor& b1, Tensor& y, int final, const float* add_cols, const float* add_rows);
// y = a (op) broadcast(b); b's shape is right-aligned against a's and already validated.
void binary(CpuContext& c, BinaryKind kind, const Tensor& a, const Tensor& b, Tensor& y);
// y = x + a ⊙ gamma (gamma [C] over the last dim, or undefined); contract ops/elementwise.h.
void add_scaled(CpuContext& c, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y);
// ops::embed_tokens (lead undefined: no leading rows); contract ops/elementwise.h.
void embed_tokens(CpuContext& c, const Tensor& lead, const Tensor& table, const Tensor& patches, Tensor& tokens);

void permute(CpuContext& c, const Tensor& x, const std::vector<int>& perm, Tensor& y);

// x: [B, H, N, D] rotated in place, positions: [N, 2] i32 (row, column); contract ops/rope.h.
void rope2d(CpuContext& c, Tensor& x, const Tensor& positions, float base);

// What this CPU does with bf16 weights (a model loaded in bf16), from oneDNN's own dispatch.
struct Bf16Support {
  std::string refusal;  // empty when oneDNN runs bf16 matmuls and convs here; else why not (its message, the ISA)
  bool native = false;  // AVX-512 BF16 or AMX instructions (else oneDNN emulates bf16 on AVX-512, slower than f32)
  std::string isa;      // the instruction set oneDNN dispatches to, e.g. "avx512_core_bf16"
};
// Probes once per process (a small bf16 matmul and conv primitive are created, never run). Never throws.
const Bf16Support& bf16_support();

}  // namespace dacpp::cpu
