// upsample_conv_head: the last stage of a DPT head (DA2 / DA3 depth and sky outputs, DualDPT's depth and
// confidence) as one op:
//   x:  [N, C, h, w]          w3: [M, C, 3, 3]   b3: [M] f32 or undefined
//   w1: [O, M, 1, 1]          b1: [O] f32 or undefined
//   y:  [N, O, H, W] = final(conv1x1(relu(conv3x3_pad1(up + add, w3, b3)), w1, b1)),
//   up = resize_bilinear(x → H × W, align_corners = true)
//   add (optional, the CPU only; DualDPT's UV embedding): add[c, i, j] = add.cols[c, j] + add.rows[c, i], cols
//   [C, W] and rows [C, H] f32 (where one of the two is zero for a channel, up + add is exactly up + the other)
// with `final` the head's activation where it is ReLU or exp (applied to the f32 sum before y's rounding: no
// separate pass over the map), otherwise none (the logits; the caller applies its activation). x, w3, w1 and y
// share the activation dtype.
// CUDA never stores the H × W maps (bf16 / f16, C % 32 == 0, M = 32, O = 1, no add: upsample_conv_head_fused says
// whether these operands qualify): one fused kernel, or — where upsampling by ~1.7× or more, and timed faster on first
// use — the 3×3 conv's channel mixes as a GEMM at h × w followed by a kernel blending each output pixel's nine taps
// (the resize and the conv commute: both linear). The CPU, for any operands, never stores them either: bands of rows
// upsampled channels-last, the 3×3 conv on oneDNN in that layout, the 1×1 conv as a dot product per pixel
// (cpu_ops.h). On the CPU x and y are f32 and the weights f32 or bf16; a bf16 w3 runs the 3×3 conv on bf16
// operands (the upsampled map rounded to nearest even), and the 1×1 conv sums in f32 either way.
// Errors: InvalidArgument on shape / dtype mismatch naming the tensors; Unsupported on CUDA for operands the fused
// kernel does not take (with the reason); Backend off-device.
#pragma once

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

enum class HeadFinal { None, Relu, Exp };

struct UpsampledAdd {
  Tensor cols, rows;
};

void upsample_conv_head(Context& ctx, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                        const Tensor& b1, Tensor& y, HeadFinal final = HeadFinal::None,
                        const UpsampledAdd* add = nullptr);

// True when ctx runs upsample_conv_head on these operands without storing the H × W maps: the CPU always, CUDA for
// the shapes above (one fused kernel; one output channel, no add).
bool upsample_conv_head_fused(Context& ctx, const Tensor& x, const Tensor& w3, const Tensor& y);

}  // namespace dacpp::ops
