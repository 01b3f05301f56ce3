#include "backends/cuda/tma_map.h"

#include <cuda_runtime.h>

#include <string>

#include "core/error.h"
#include "core/fault.h"

namespace dacpp::cuda {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct Encoder {
  EncodeTiled fn = nullptr;
  std::string why;  // when fn is null
};

// Looked up once per process (12.0: the version that introduced the entry point and its signature).
const Encoder& encoder() {
  static const Encoder e = [] {
    Encoder out;
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (err != cudaSuccess) {
      out.why = str_cat(cudaGetErrorName(err), ": ", cudaGetErrorString(err));
      cudaGetLastError();
    } else if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
      out.why = found == cudaDriverEntryPointVersionNotSufficent ? "the driver is older than CUDA 12.0"
                                                                 : "the driver has no such entry point";
    } else {
      out.fn = reinterpret_cast<EncodeTiled>(fn);
    }
    return out;
  }();
  return e;
}

// The checks and the encode shared by tma_map_2d and tma_map_4d (`rank` dimensions, rank - 1 strides).
CUtensorMap encode(const void* base, cuuint32_t rank, const uint64_t* dims, const uint64_t* strides,
                   const uint32_t* box, const char* what) {
  constexpr uint64_t kElem = 2, kMaxDim = uint64_t{1} << 32, kMaxStride = uint64_t{1} << 40;
  const auto layout = [&] {
    std::string out = "dims";
    for (cuuint32_t i = 0; i < rank; ++i) out += str_cat(i ? " × " : " ", dims[i]);
    out += ", strides";
    for (cuuint32_t i = 0; i + 1 < rank; ++i) out += str_cat(" ", strides[i]);
    out += " bytes; box";
    for (cuuint32_t i = 0; i < rank; ++i) out += str_cat(i ? " × " : " ", box[i]);
    return out;
  };
  const auto refuse = [&](const std::string& rule) {
    DACPP_THROW(ErrorCode::InvalidArgument, "tensor map for ", what, ": ", rule, " (", layout(), ")");
  };
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) refuse("the base address is not 16-byte aligned");
  for (cuuint32_t i = 0; i < rank; ++i)
    if (dims[i] == 0 || dims[i] > kMaxDim) refuse("a dimension is 0 or above 2^32");
  for (cuuint32_t i = 0; i + 1 < rank; ++i)
    if (strides[i] % 16 != 0 || strides[i] < dims[0] * kElem || strides[i] >= kMaxStride)
      refuse(str_cat(rank == 2 ? std::string("the row stride") : str_cat("the stride of dimension ", i + 1),
                     " must be a multiple of 16 bytes, hold a row, and stay below 2^40"));
  for (cuuint32_t i = 0; i < rank; ++i)
    if (box[i] == 0 || box[i] > 256) refuse("a box dimension is outside 1..256");
  if (box[0] * kElem % 16 != 0 || box[0] * kElem > 128)
    refuse("a box row must be a multiple of 16 bytes and at most the 128-byte swizzle");
  DACPP_FAULT_POINT("tma.encode", ErrorCode::Backend, "tensor map for ", what, ": cuTensorMapEncodeTiled failed");
  const Encoder& e = encoder();
  DACPP_CHECK(e.fn != nullptr, ErrorCode::Backend, "tensor map for ", what, ": cuTensorMapEncodeTiled unavailable (",
              e.why, ")");
  CUtensorMap map{};
  cuuint64_t d[4], s[3];
  cuuint32_t bx[4], element_strides[4];
  for (cuuint32_t i = 0; i < rank; ++i) {
    d[i] = dims[i];
    bx[i] = box[i];
    element_strides[i] = 1;
    if (i + 1 < rank) s[i] = strides[i];
  }
  const CUresult r = e.fn(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, rank, const_cast<void*>(base), d, s, bx,
                          element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  DACPP_CHECK(r == CUDA_SUCCESS, ErrorCode::Backend, "tensor map for ", what, ": cuTensorMapEncodeTiled returned ",
              static_cast<int>(r), " (", layout(), ")");
  return map;
}

}  // namespace

CUtensorMap tma_map_2d(const void* base, uint64_t cols, uint64_t rows, uint64_t row_bytes, uint32_t box_cols,
                       uint32_t box_rows, const char* what) {
  const uint64_t dims[2] = {cols, rows}, strides[1] = {row_bytes};
  const uint32_t box[2] = {box_cols, box_rows};
  return encode(base, 2, dims, strides, box, what);
}

CUtensorMap tma_map_4d(const void* base, const uint64_t (&dims)[4], const uint64_t (&strides)[3],
                       const uint32_t (&box)[4], const char* what) {
  return encode(base, 4, dims, strides, box, what);
}

}  // namespace dacpp::cuda
