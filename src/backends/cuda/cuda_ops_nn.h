// CUDA implementations of the neural-network ops: attention, conv2d, conv_transpose2d and rope2d (one .cu each).
// Like cuda_ops.h this header includes no CUDA header, so src/ops/ and the stub build can use it; the stub
// (stub/cuda_nn_stub.cc) defines every function here to throw Unsupported.
//
// Called only by the validating dispatchers in src/ops/, which have already checked shapes, dtypes (activations and
// weights f32, bf16 or f16, one dtype per call; biases f32; positions i32) and residency: these functions trust
// their arguments. Work is enqueued on ctx.stream(); nothing synchronizes. Math and accumulation are f32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/cuda_ops.h"
#include "core/tensor.h"

namespace dacpp::cuda {

struct KernelInfo;

// q: [B, H, Nq, D], k, v: [B, H, Nk, D], out: [B, Nq, H, D]. bf16/f16 with D in {32, 64, 128} and 16-byte aligned
// pointers run a fused flash kernel on tensor cores (sm_80+); every other case (f32, other D <= 256) runs an exact
// f32 tiled kernel. Throws Unsupported for D > 256 (naming D).
void attention(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out);
// Rows [row0, row0 + out.dim(1)) of the self-attention (ops::attention_qkv_rows).
void attention_qkv(CudaContext& c, const Tensor& qkv, int64_t heads, float scale, int64_t row0, Tensor& out);

struct ConvGeometry {
  int stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};
// x: [N, C, H, W], w: [O, C, KH, KW] (same dtype as x), bias: [O] f32 or undefined, y: [N, O, OH, OW].
// Implicit GEMM (no workspace): tensor cores for bf16/f16, exact f32 FMA for f32. Act None or Relu.
void conv2d(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
            Epilogue act);
// y = conv2d(relu(conv2d(relu(x), w1, b1)), w2, b2): a residual conv unit's two 3×3 convs (stride 1, padding 1,
// F → F channels, biases f32 or undefined) with x, h, y [N, F, H, W]. Each conv runs the algorithm conv2d tunes for
// it; where both are the Hopper TMA kernel unsplit (bf16 / f16, whole images), the first conv's padded copy holds
// relu(x) and its output is stored as the second conv's padded copy, so neither the ReLU pass nor the second copy
// runs (h unused). Otherwise the ReLU into y, the first conv into h, the second into y. r (undefined: none), x's
// shape and dtype: then added to y by binary() (y = T(T(conv2 + b2) + r)).
void residual_conv_pair(CudaContext& c, const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                        const Tensor& b2, const Tensor& r, Tensor& h, Tensor& y);
// y = conv2d(resize_bilinear(x → y's H × W, align_corners), w, bias), 3×3, stride 1, padding 1: x [N, C, h, w],
// w [O, C, 3, 3], y [N, O, H, W]; the upsampled map is never stored (the Hopper TMA conv's padded copy is made from
// x directly). conv2d_upsampled_refusal: why these operands cannot run so ("" when they can: an sm_90 GPU with an
// sm_90a build, bf16 / f16, C and O multiples of 64); conv2d_upsampled throws Unsupported with that reason.
// Where these operands also suit taps first (below), the faster of the two for the shape is timed on first use.
std::string conv2d_upsampled_refusal(const CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& y);
void conv2d_upsampled(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act);
// The same conv taps first, as upsample_conv_head's second path: z = the 3×3 conv's 9 · O channel mixes of x at the
// source resolution (one cuBLASLt GEMM; w reordered once per weight into chunks of 32 output channels), then each
// output pixel's nine taps blended bilinearly from z, + bias, act, per chunk of 32 output channels. Any GPU;
// conv2d_upsampled_taps_refusal says why it cannot run these operands ("" when it can: bf16 / f16, C % 8 == 0,
// O % 32 == 0, act None or ReLU, (in - 1) / (out - 1) <= 10 / 17 per axis, one image's z within 256 MiB);
// conv2d_upsampled_taps throws Unsupported with that reason. The values differ from the TMA conv's by rounding
// only (z is rounded to x's dtype where the upsampled map was).
// pre_w / pre_b (optional; shapes checked by the caller): a 1×1 conv [C, C0, 1, 1] of x's dtype with bias [C] f32
// (or undefined) run on x [N, C0, h, w] before the upsample, folded into the GEMM's weights (made once per pair of
// weights): one GEMM of C0 → 9 · O channels instead of two, the 1×1 conv's output never stored. The refusal is the
// same with x's C0 channels.
std::string conv2d_upsampled_taps_refusal(const Tensor& x, const Tensor& w, const Tensor& y, Epilogue act);
void conv2d_upsampled_taps(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                           Epilogue act, const Tensor* pre_w = nullptr, const Tensor* pre_b = nullptr);
// conv2d_upsampled on the TMA conv only (tests, benchmarks); Unsupported where conv2d_upsampled_refusal says so.
void conv2d_upsampled_tma(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                          Epilogue act);
// x: [N, C, H, W], w: [C, O, K, K] (torch layout), bias: [O] f32 or undefined, y: [N, O, (H-1)s+K, (W-1)s+K].
void conv_transpose2d(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride);
// x: channels-last tokens [N, h·w, C]; kernel == stride as one GEMM on the tokens + the scatter.
// ops::im2col3x3_tokens (one thread per output element).
void im2col3x3_tokens(CudaContext& c, const Tensor& tokens, int64_t h, int64_t w, int ky0, int kyn, bool ones,
                      Tensor& y);
void conv_transpose2d_tokens(CudaContext& c, const Tensor& x, int64_t h, int64_t w, const Tensor& wt,
                             const Tensor& bias, Tensor& y, int stride);
// ops::patch_rows (one thread per output element, consecutive threads along a row: coalesced stores).
void patch_rows(CudaContext& c, const Tensor& x, int k, Tensor& y);
// x: [B, H, N, D] rotated in place (DA3 RoPE 2D, see ops/rope.h); positions: [N, 2] i32 (row, column) on the
// device, all >= 0 (checked by the dispatcher on the host copy or trusted).
void rope2d(CudaContext& c, Tensor& x, const Tensor& positions, float base);

// The DPT output stage fused (ops/upsample_conv_head.h): x [N, C, h, w], w3 [32, C, 3, 3] and w1 [1, 32, 1, 1] of
// x's dtype, b3 [32] / b1 [1] f32 or undefined, y [N, 1, H, W]. upsample_conv_head_refusal says why the fused
// kernel cannot run these operands ("" when it can: bf16 / f16, C % 32 == 0, 32 hidden channels);
// upsample_conv_head throws Unsupported with that reason.
std::string upsample_conv_head_refusal(const Tensor& x, const Tensor& w3, const Tensor& y);
// Two paths, timed on first use of a shape where both apply: the fused kernel (upsampled halo + 3×3 conv on
// mma.sync), or taps first (the 3×3 conv's channel mixes as one GEMM at the source resolution, then each output
// pixel's nine taps blended from it: where (in - 1) / (out - 1) <= 10 / 17 per axis).
// `final`: 0 none, 1 ReLU, 2 exp on the one output channel (ops::HeadFinal), before y's rounding.
void upsample_conv_head(CudaContext& c, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                        const Tensor& b1, Tensor& y, int final = 0);
enum class HeadPath { Fused, TapsFirst };
// upsample_conv_head on the path given (tests, benchmarks); Unsupported where that path does not apply.
void upsample_conv_head_path(CudaContext& c, HeadPath path, const Tensor& x, const Tensor& w3, const Tensor& b3,
                             const Tensor& w1, const Tensor& b1, Tensor& y, int final = 0);

// Kernel tables for the load-time probe (kernel_probe.h); nn_kernels() concatenates them.
std::vector<KernelInfo> attention_kernels();
std::vector<KernelInfo> conv2d_kernels();
std::vector<KernelInfo> conv_transpose2d_kernels();
std::vector<KernelInfo> rope_kernels();
std::vector<KernelInfo> upsample_conv_head_kernels();
std::vector<KernelInfo> nn_kernels();

}  // namespace dacpp::cuda
