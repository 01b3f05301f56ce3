// Host-only declaration of the flash-attention variants that bypass cuda::attention's per-shape choice, for
// benchmarks and kernel-equivalence tests. No CUDA syntax: includable from .cc files.
#pragma once

#include "backends/cuda/cuda_ops_nn.h"

namespace dacpp::cuda {

// cuda::attention forced to the tensor-core kernel with `m_tiles` 16-row m-tiles per warp and `warps` warps per
// block: 1×4 (64 rows), 1×2 (32 rows), 1×1 (16 rows), 2×4 (128 rows) or 2×2 (64 rows). Throws InvalidArgument when
// the tensor-core kernel does not apply (f32, D not 32/64/128, unaligned) or the variant does not exist for D
// (m_tiles 2 needs D <= 64). `splits` (1..4) blocks share each row block's key tiles (split-KV, then a combine
// pass); fewer when there are fewer key tiles.
void attention_variant(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& out,
                       int m_tiles, int warps, int splits = 1);

// Whether attention_wgmma_variant runs on c (CudaContext::hopper_mma()).
bool attention_wgmma_available(const CudaContext& c);

// The Hopper kernels (D = 64, sm_90a): flash_attention_wgmma (cp.async, the warpgroups of a block in step),
// flash_attention_tma (tensor-memory-accelerator loads, the warpgroups free-running), and the latter with each
// warpgroup overlapping its own tiles, with its default ring of stages or a lean one of two (with one warpgroup,
// three blocks per multiprocessor), or the default ring with the warpgroups started out of step or issuing their
// MMAs in turns (FA3's ping-pong; with one warpgroup, either is the same as TmaOverlapped).
enum class HopperAttention { Wgmma, Tma, TmaOverlapped, TmaOverlappedLean, TmaOverlappedStaggered, TmaOverlappedTurns };

// cuda::attention forced to a Hopper kernel with `warpgroups` (1..3) of 64 query rows per
// block and K / V tiles of `key_tile` (64, 128) keys, split-KV as above. Throws Unsupported where
// !CudaContext::hopper_mma() (not an sm_90 GPU, or no sm_90a image in the build), InvalidArgument when the
// tensor-core kernels do not apply, D != 64 or the tiling does not exist.
void attention_wgmma_variant(CudaContext& c, const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                             Tensor& out, int warpgroups, int key_tile, int splits = 1,
                             HopperAttention kernel = HopperAttention::Wgmma);

// cuda::attention_qkv (q, k, v read in place from the fused projection [B, N, 3·H·D]) forced to a Hopper kernel as
// attention_wgmma_variant, with the same errors.
void attention_qkv_wgmma_variant(CudaContext& c, const Tensor& qkv, int64_t heads, float scale, Tensor& out,
                                 int warpgroups, int key_tile, int splits, HopperAttention kernel);

}  // namespace dacpp::cuda
