// Host-only declarations of conv2d variants that bypass the shape dispatch of cuda::conv2d (cuda_ops_nn.h), for
// benchmarks and kernel-equivalence tests. No CUDA syntax: includable from .cc files.
#pragma once

#include "backends/cuda/cuda_ops_nn.h"

namespace dacpp::cuda {

// cuda::conv2d restricted to the implicit-GEMM kernels (never the direct 3×3 kernel); same contract.
void conv2d_generic(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                    const ConvGeometry& g, Epilogue act);

// cuda::conv2d forced to im2col + cuBLASLt (the path of 1×1 and strided convs), for any geometry; same contract.
void conv2d_im2col_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                        const ConvGeometry& g, Epilogue act);

// A 1×1 stride-1 unpadded conv forced to the GEMM on a copy of x with rows padded to a multiple of 8 pixels (the
// tuner's choice for odd pixel counts); InvalidArgument for any other conv.
void conv2d_gemm_pitched(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                         const ConvGeometry& g, Epilogue act);

// cuda::conv2d forced to the row-shifted GEMMs (kx taps gathered, one accumulating GEMM per ky); same contract.
// Throws InvalidArgument unless the vertical stride is 1 and the kernel is taller than one row.
void conv2d_row_gemm(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                     const ConvGeometry& g, Epilogue act);

// The direct 3×3 stride-1 pad-1 kernel forced to one variant: warps_m 1 (32 output channels per block) or 2 (64),
// tile_rows 8 or 16, its 16-channel chunks split `splits` ways (1; 2 or 4: f32 partial sums, then one pass adds them
// with the bias and ReLU). Throws InvalidArgument when the kernel does not apply (f32, C % 16 != 0, other geometry,
// fewer chunks than splits).
void conv2d_direct3x3(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                      int warps_m, int tile_rows, int splits = 1);

// The Hopper wgmma implicit GEMM (3×3, stride 1, pad 1, bf16 / f16, C and O multiples of 64) with 1 (64 output
// channels per block) or 2 (128; O % 128 == 0) warpgroups, its operands loaded by cp.async from three shifted
// copies of x (CpAsync) or by the tensor memory accelerator from one padded copy (Tma; TmaRows: one pixel tile per
// kernel row, shared by its three taps; TmaRowsWide, 2 warpgroups only: the same on 176-pixel tiles); TmaSplitK (1 or
// 2 warpgroups): the TMA kernel with each tile's K steps split over several blocks (at least 2) and the f32 partials
// summed after.
// stride 2 (3×3, pad 1): Tma and TmaSplitK only, on the phase copy of x. Throws Unsupported where
// !conv2d_wgmma3x3_available (not an sm_90 GPU or no sm_90a image in the build), InvalidArgument for another
// geometry, stride, feed or tiling.
enum class WgmmaFeed { CpAsync, Tma, TmaSplitK, TmaRows, TmaRowsWide };
void conv2d_wgmma3x3(CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Epilogue act,
                     int warpgroups, WgmmaFeed feed = WgmmaFeed::CpAsync, int stride = 1);
bool conv2d_wgmma3x3_available(const CudaContext& c);

// How many per-shape choices the context's autotuner holds (conv2d tunes each new shape once; bounded).
size_t conv2d_tuned_count(const CudaContext& c);
// Whether conv2d's tuning has recorded a choice for this call's shape (tests).
bool conv2d_shape_tuned(const CudaContext& c, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                        const ConvGeometry& g, Epilogue act);

}  // namespace dacpp::cuda
