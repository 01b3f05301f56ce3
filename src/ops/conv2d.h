// conv2d (cross-correlation, as torch.nn.Conv2d, groups = 1, dilation = 1):
//   x:    [N, C, H, W] f32     w: [O, C, KH, KW] f32     bias: [O] f32 or undefined
//   y:    [N, O, OH, OW] f32, OH = (H + 2·pad_h − KH) / stride_h + 1 (likewise OW); may not alias x
//   act:  fused epilogue (None or Relu)
// conv_transpose2d (as torch.nn.ConvTranspose2d, padding 0, output_padding 0):
//   x:    [N, C, H, W]         w: [C, O, K, K] (torch ConvTranspose layout)        bias: [O] or undefined
//   y:    [N, O, (H−1)·stride + K, (W−1)·stride + K]
// conv_transpose2d_tokens: the same on channels-last tokens x [N, H·W, C] (the map's pixels in row order, channels
//   innermost: an encoder's layout), H and W given; y as conv_transpose2d's. Saves the permute to planes, and on a
//   GPU the GEMM reads the channels contiguously whatever H·W (NCHW planes of an odd H·W leave cuBLASLt only its
//   unaligned kernels).
// conv2d_upsampled (3×3, stride 1, padding 1 only):
//   x:    [N, C, h, w]         w: [O, C, 3, 3]        bias: [O] f32 or undefined       y: [N, O, OH, OW]
//   y = conv2d(resize_bilinear(x → OH × OW, align_corners = true), w, bias, pad 1), act
//   CUDA never stores the upsampled map (Hopper, bf16 / f16, C and O multiples of 64: conv2d_upsampled_fused says
//   whether these operands qualify; others are Unsupported with the reason); the CPU resizes, then convolves.
// conv2d_upsampled with a 1×1 conv first (`pre`, e.g. a DPT refinenet's out_conv before the head's first conv):
//   x: [N, C0, h, w]   pre.w: [C, C0, 1, 1]   pre.bias: [C] f32 or undefined   w: [O, C, 3, 3]
//   y = conv2d_upsampled(conv2d(x, pre.w, pre.bias), w, bias), act
//   CUDA folds the 1×1 conv into taps first's GEMM (one GEMM instead of two, the 1×1 conv's output never stored;
//   conv2d_upsampled_folds says whether these operands qualify, others are Unsupported with the reason); the CPU
//   runs the ops in turn.
// residual_conv_pair (a residual conv unit's two convs, 3×3, stride 1, padding 1, F → F channels):
//   x, h, y: [N, F, H, W]   w1, w2: [F, F, 3, 3]   b1, b2: [F] f32 or undefined   r: [N, F, H, W] or undefined
//   y = conv2d(relu(conv2d(relu(x), w1, b1)), w2, b2) [+ r]; h holds the first conv's output where the backend stores
//   it (the CPU always; CUDA not where the Hopper TMA conv chains the two through its padded copy, cuda_ops_nn.h).
//   r (a residual unit passes x) is added as ops::add would add it after the second conv, in the activation dtype.
//   y may not alias x, h or r, nor h x.
// im2col3x3_tokens (the input of a GEMM that runs a 3×3, pad-1 conv, or some of its kernel rows, on a token grid):
//   tokens: [N, H·W, C] channels-last, H and W given      y: [N·H·W, kyn·3·Cp], kernel rows [ky0, ky0 + kyn)
//   y[(n·H + i)·W + j, ((ky − ky0)·3 + kx)·Cp + c] = tokens[n, (i + ky − 1)·W + j + kx − 1, c] for c < C where that
//   pixel lies inside the H × W grid, else 0. With `ones`, channel C is 1 where the pixel lies inside the grid and 0
//   outside (a bias carried as an input channel stays exact at the border); channels past that are 0.
// Dtypes: on CUDA x, w (every weight) and y share the activation dtype. On the CPU x and y are f32 and a weight is f32
//   or bf16; a bf16 weight runs its conv on bf16 operands (x rounded to nearest even) with f32 accumulation and bias.
// Errors: InvalidArgument on shape/dtype/parameter mismatch naming the tensors; Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

struct Conv2dParams {
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;
};

void conv2d(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
            const Conv2dParams& p = {}, Activation act = Activation::None);

void conv_transpose2d(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, int stride);
void conv_transpose2d_tokens(Context& ctx, const Tensor& x, int64_t h, int64_t w, const Tensor& weight,
                             const Tensor& bias, Tensor& y, int stride);

void conv2d_upsampled(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                      Activation act = Activation::None);
bool conv2d_upsampled_fused(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& y);

void residual_conv_pair(Context& ctx, const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                        const Tensor& b2, Tensor& h, Tensor& y, const Tensor& r = Tensor());

void im2col3x3_tokens(Context& ctx, const Tensor& tokens, int64_t h, int64_t w, int ky0, int kyn, bool ones, Tensor& y);

// patch_rows (the input of the GEMM that runs a conv whose kernel equals its stride, unpadded: a ViT's patch
// embedding): x [N, C, H, W] with H and W multiples of k, y [N, (H/k)·(W/k), Kp] with Kp >= C·k·k,
//   y[n, i·(W/k) + j, (c·k + ky)·k + kx] = x[n, c, i·k + ky, j·k + kx], and 0 in the columns past C·k·k
// (rows padded to a Kp the GEMM reads aligned, against a weight padded the same way: layers::Conv2d).
void patch_rows(Context& ctx, const Tensor& x, int k, Tensor& y);

struct Pointwise {
  Tensor w, bias;
};
void conv2d_upsampled(Context& ctx, const Tensor& x, const Pointwise& pre, const Tensor& w, const Tensor& bias,
                      Tensor& y, Activation act = Activation::None);
bool conv2d_upsampled_folds(Context& ctx, const Tensor& x, const Pointwise& pre, const Tensor& w, const Tensor& y);

}  // namespace dacpp::ops
