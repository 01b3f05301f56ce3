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

}  // namespace

CUtensorMap tma_map_2d(const void* base, uint64_t cols, uint64_t rows, uint64_t row_bytes, uint32_t box_cols,
                       uint32_t box_rows, const char* what) {
  constexpr uint64_t kElem = 2, kMaxDim = uint64_t{1} << 32, kMaxStride = uint64_t{1} << 40;
  const auto refuse = [&](const std::string& rule) {
    DACPP_THROW(ErrorCode::InvalidArgument, "tensor map for ", what, ": ", rule, " (", rows, " rows × ", cols,
                " elements, ", row_bytes, " bytes apart; box ", box_rows, " × ", box_cols, ")");
  };
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) refuse("the base address is not 16-byte aligned");
  if (cols == 0 || rows == 0 || cols > kMaxDim || rows > kMaxDim) refuse("a dimension is 0 or above 2^32");
  if (row_bytes % 16 != 0 || row_bytes < cols * kElem || row_bytes >= kMaxStride)
    refuse("the row stride must be a multiple of 16 bytes, hold a row, and stay below 2^40");
  if (box_cols == 0 || box_rows == 0 || box_cols > 256 || box_rows > 256) refuse("a box dimension is outside 1..256");
  if (box_cols * kElem % 16 != 0 || box_cols * kElem > 128)
    refuse("a box row must be a multiple of 16 bytes and at most the 128-byte swizzle");
  DACPP_FAULT_POINT("tma.encode", ErrorCode::Backend, "tensor map for ", what, ": cuTensorMapEncodeTiled failed");
  const Encoder& e = encoder();
  DACPP_CHECK(e.fn != nullptr, ErrorCode::Backend, "tensor map for ", what, ": cuTensorMapEncodeTiled unavailable (",
              e.why, ")");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = e.fn(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(base), dims, strides, box,
                          element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  DACPP_CHECK(r == CUDA_SUCCESS, ErrorCode::Backend, "tensor map for ", what, ": cuTensorMapEncodeTiled returned ",
              static_cast<int>(r), " (", rows, " rows × ", cols, " elements, box ", box_rows, " × ", box_cols, ")");
  return map;
}

}  // namespace dacpp::cuda
