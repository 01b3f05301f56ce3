// rope2d on CUDA, in place (contract: ops/rope.h). One thread per rotated pair: for row r of [B·H·N] rows, half
// hf (0: the token's row position, 1: its column) and j < D/4,
//   (t[j], t[j + D/4]) of that half ← (t1·cos − t2·sin, t2·cos + t1·sin),  angle = pos · base^(−2j/(D/2))
// computed in f32 (powf, sincosf without fast math) exactly as the CPU builds its tables.
#include <climits>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops_nn.h"
#include "backends/cuda/kernel_probe.h"
#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/mma_util.cuh"

namespace dacpp::cuda {
namespace {

using namespace mma;

template <typename T>
__global__ void __launch_bounds__(256)
    rope2d_kernel(T* __restrict__ x, const int32_t* __restrict__ pos, long long rows, int n, int dd, float base) {
  pdl_enter();
  const int quarter = dd / 4, half = dd / 2;
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * half) return;
  const long long r = idx / half;
  const int rem = static_cast<int>(idx - r * half);
  const int hf = rem / quarter, j = rem - hf * quarter;
  const int tok = static_cast<int>(r % n);
  const float e = static_cast<float>(2 * j) / static_cast<float>(half);
  const float inv = 1.0f / powf(base, e);
  const float angle = static_cast<float>(pos[2 * tok + hf]) * inv;
  float s, c;
  sincosf(angle, &s, &c);
  T* t = x + r * dd + hf * half;
  const float t1 = to_float(t[j]), t2 = to_float(t[j + quarter]);
  t[j] = from_float<T>(t1 * c - t2 * s);
  t[j + quarter] = from_float<T>(t2 * c + t1 * s);
}

template <typename T>
void launch(const CudaContext& c, Tensor& x, const Tensor& positions, float base) {
  const long long rows = x.dim(0) * x.dim(1) * x.dim(2);
  const int dd = static_cast<int>(x.dim(3));
  const long long threads = rows * (dd / 2);
  const long long blocks = (threads + 255) / 256;
  DACPP_CHECK(blocks < INT_MAX, ErrorCode::Unsupported, "rope2d (cuda): tensor ", shape_str(x.shape()),
              " exceeds the grid");
  launch_kernel(c, "rope2d_kernel", rope2d_kernel<T>, static_cast<unsigned>(blocks), 256, 0, static_cast<T*>(x.raw()),
                static_cast<const int32_t*>(positions.raw()), rows, static_cast<int>(x.dim(2)), dd, base);
}

}  // namespace

void rope2d(CudaContext& c, Tensor& x, const Tensor& positions, float base) {
  if (x.numel() == 0) return;
  c.make_current();
  switch (x.dtype()) {
    case DType::F32:
      return launch<float>(c, x, positions, base);
    case DType::BF16:
      return launch<__nv_bfloat16>(c, x, positions, base);
    case DType::F16:
      return launch<__half>(c, x, positions, base);
    default:
      break;
  }
  DACPP_THROW(ErrorCode::InvalidArgument, "rope2d (cuda): dtype ", dtype_name(x.dtype()), " is not supported");
}

std::vector<KernelInfo> rope_kernels() {
  return {
      {"rope2d_kernel<f32>", reinterpret_cast<const void*>(&rope2d_kernel<float>)},
      {"rope2d_kernel<bf16>", reinterpret_cast<const void*>(&rope2d_kernel<__nv_bfloat16>)},
      {"rope2d_kernel<f16>", reinterpret_cast<const void*>(&rope2d_kernel<__half>)},
  };
}

}  // namespace dacpp::cuda
