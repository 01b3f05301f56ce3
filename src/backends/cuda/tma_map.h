// Tensor maps (the descriptors the Hopper tensor memory accelerator reads a global tensor through), built on the
// host with the driver's cuTensorMapEncodeTiled, reached through the runtime (cudaGetDriverEntryPointByVersion): the
// backend does not link libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace dacpp::cuda {

// A map of a 2-D tensor of 16-bit elements: `rows` rows of `cols` contiguous elements, `row_bytes` apart, starting
// at device address `base`; each load reads a box of box_cols × box_rows elements into 128-byte-swizzled shared
// memory (box_cols · 2 <= 128 bytes per box row) and zero-fills whatever falls outside the tensor.
// Throws InvalidArgument, naming `what` and the rule broken, for a layout the accelerator cannot describe (base not
// 16-byte aligned, row_bytes not a multiple of 16 or below cols · 2, a box dimension outside 1..256 or wider than
// the swizzle, a dimension of 0 or over 2^32); Backend when the driver lacks cuTensorMapEncodeTiled or refuses.
// Fault site "tma.encode" (after the layout checks).
CUtensorMap tma_map_2d(const void* base, uint64_t cols, uint64_t rows, uint64_t row_bytes, uint32_t box_cols,
                       uint32_t box_rows, const char* what);

// A map of a 4-D tensor of 16-bit elements, the same rules per dimension: dims[0] contiguous elements (one box row
// of box[0] elements, at most the 128-byte swizzle), dimension i >= 1 of dims[i] steps strides[i - 1] bytes apart
// (any order: a row stride may exceed a head stride, as in a fused qkv projection), each stride a multiple of 16
// bytes, at least one row (dims[0] elements) and below 2^40. Elements outside the tensor read as zero, so a box
// never reaches into a neighbouring head or batch.
CUtensorMap tma_map_4d(const void* base, const uint64_t (&dims)[4], const uint64_t (&strides)[3],
                       const uint32_t (&box)[4], const char* what);

}  // namespace dacpp::cuda
