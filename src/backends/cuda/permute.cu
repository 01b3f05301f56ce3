// permute: y = x.permute(perm).contiguous(), rank <= 6, any 2- or 4-byte dtype (bytes are moved, not converted).
// Each thread computes one output element's coordinates and gathers from x. When the last dim stays last, the
// innermost run is moved in the widest unit (16, 8 or 4 bytes) that its byte length and both pointers allow.
// Indices use 32-bit arithmetic when the tensor has fewer than 2^31 units.
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kMaxRank = 6;

struct PermuteGeom {
  int rank;
  int64_t out_dim[kMaxRank];    // y's dims (in units), innermost last
  int64_t in_stride[kMaxRank];  // x's stride (in units) along y's dim d, i.e. x's stride of dim perm[d]
};

template <typename U, typename I>
__global__ void permute_kernel(const U* __restrict__ x, U* __restrict__ y, I n, PermuteGeom g) {
  pdl_enter();
  for (I i = blockIdx.x * I(blockDim.x) + threadIdx.x; i < n; i += I(gridDim.x) * I(blockDim.x)) {
    I rem = i, off = 0;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d >= g.rank) continue;
      const I dim = static_cast<I>(g.out_dim[d]);
      off += (rem % dim) * static_cast<I>(g.in_stride[d]);
      rem /= dim;
    }
    y[i] = x[off];
  }
}

template <typename U>
void launch_unit(CudaContext& c, const Tensor& x, Tensor& y, const PermuteGeom& g, int64_t n) {
  const U* xp = static_cast<const U*>(x.raw());
  U* yp = static_cast<U*>(y.raw());
  if (n < (int64_t{1} << 31)) {
    launch_kernel(c, "permute", permute_kernel<U, uint32_t>, grid_for(c, n, kBlock), kBlock, 0, xp, yp,
                  static_cast<uint32_t>(n), g);
  } else {
    launch_kernel(c, "permute", permute_kernel<U, int64_t>, grid_for(c, n, kBlock), kBlock, 0, xp, yp, n, g);
  }
}

}  // namespace

void permute(CudaContext& c, const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  if (x.numel() == 0) return;
  const int rank = x.rank();
  DACPP_CHECK(rank <= kMaxRank, ErrorCode::Internal, "permute: rank ", rank, " reached the CUDA backend");
  const size_t esize = dtype_nbytes(x.dtype(), 1);
  DACPP_CHECK(esize == 2 || esize == 4, ErrorCode::Internal, "permute: dtype ", dtype_name(x.dtype()),
              " reached the CUDA backend");
  // Unit width: the innermost run moves in one piece when the last dim stays last.
  size_t unit = esize;
  if (rank == 0 || perm.back() == rank - 1) {
    const size_t run = static_cast<size_t>(rank == 0 ? 1 : x.dim(-1)) * esize;
    for (size_t u : {size_t{16}, size_t{8}, size_t{4}}) {
      if (u > esize && run % u == 0 && aligned_to(x.raw(), u) && aligned_to(y.raw(), u)) {
        unit = u;
        break;
      }
    }
  }
  const int64_t per_unit = static_cast<int64_t>(unit / esize);
  std::vector<int64_t> in_stride(rank, 1), in_dim(x.shape().begin(), x.shape().end());
  if (rank > 0) in_dim[rank - 1] /= per_unit;  // per_unit > 1 only when the last dim stays last
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * in_dim[d + 1];
  PermuteGeom g{};
  g.rank = rank;
  for (int d = 0; d < rank; ++d) {
    g.out_dim[d] = in_dim[perm[d]];
    g.in_stride[d] = in_stride[perm[d]];
  }
  const int64_t n = x.numel() / per_unit;
  c.make_current();
  switch (unit) {
    case 2: return launch_unit<uint16_t>(c, x, y, g, n);
    case 4: return launch_unit<uint32_t>(c, x, y, g, n);
    case 8: return launch_unit<uint2>(c, x, y, g, n);
    default: return launch_unit<uint4>(c, x, y, g, n);
  }
}

std::vector<KernelInfo> permute_kernels() {
  return {
      {"permute<u16,i32>", reinterpret_cast<const void*>(&permute_kernel<uint16_t, uint32_t>)},
      {"permute<u32,i32>", reinterpret_cast<const void*>(&permute_kernel<uint32_t, uint32_t>)},
      {"permute<u64,i32>", reinterpret_cast<const void*>(&permute_kernel<uint2, uint32_t>)},
      {"permute<u128,i32>", reinterpret_cast<const void*>(&permute_kernel<uint4, uint32_t>)},
      {"permute<u16,i64>", reinterpret_cast<const void*>(&permute_kernel<uint16_t, int64_t>)},
      {"permute<u32,i64>", reinterpret_cast<const void*>(&permute_kernel<uint32_t, int64_t>)},
      {"permute<u64,i64>", reinterpret_cast<const void*>(&permute_kernel<uint2, int64_t>)},
      {"permute<u128,i64>", reinterpret_cast<const void*>(&permute_kernel<uint4, int64_t>)},
  };
}

}  // namespace dacpp::cuda
