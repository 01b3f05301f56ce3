// copy (any residency pair), cast (f32 / bf16 / f16 on the device), device tensors and weight upload.
#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {
namespace {

constexpr int kBlock = 256;

template <typename S, typename D>
__global__ void cast_kernel(const S* __restrict__ src, D* __restrict__ dst, int64_t n) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = from_f32<D>(to_f32(src[i]));
}

template <typename S, typename D>
void launch_cast(CudaContext& c, const void* src, void* dst, int64_t n) {
  launch_kernel(c, "cast", cast_kernel<S, D>, grid_for(c, n, kBlock), kBlock, 0, static_cast<const S*>(src),
                static_cast<D*>(dst), n);
}

// dst = src converted; both device pointers of n elements. Same dtype is a device copy.
void cast_raw(CudaContext& c, DType sdt, const void* src, DType ddt, void* dst, int64_t n) {
  if (n == 0) return;
  if (sdt == ddt) {
    DACPP_CUDA_CHECK(cudaMemcpyAsync(dst, src, dtype_nbytes(sdt, n), cudaMemcpyDeviceToDevice, c.stream()),
                     "cast: device copy of ", n, " ", dtype_name(sdt), " values");
    return;
  }
  dispatch_float(sdt, "cast", [&](auto stag) {
    using S = decltype(stag);
    dispatch_float(ddt, "cast", [&](auto dtag) { launch_cast<S, decltype(dtag)>(c, src, dst, n); });
  });
}

// pitch_rows' kernel on the elements' bits (2 or 4 bytes: a zero pattern is 0 in f32, bf16 and f16 alike).
template <typename E>
__global__ void pitch_rows_kernel(const E* __restrict__ src, E* __restrict__ dst, int64_t rows, int len, int pitch) {
  pdl_enter();
  const int64_t total = rows * pitch;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / pitch;
    const int j = static_cast<int>(i - r * pitch);
    dst[i] = j < len ? src[r * len + j] : E{0};
  }
}

template <typename E>
void launch_pitch_rows(const CudaContext& c, const void* src, void* dst, int64_t rows, int64_t len, int64_t pitch) {
  launch_kernel(c, "pitch_rows", pitch_rows_kernel<E>, grid_for(c, rows * pitch, kBlock), kBlock, 0,
                static_cast<const E*>(src), static_cast<E*>(dst), rows, static_cast<int>(len), static_cast<int>(pitch));
}

}  // namespace

void pitch_rows(const CudaContext& c, DType dt, const void* src, void* dst, int64_t rows, int64_t len, int64_t pitch) {
  DACPP_CHECK(len >= 0 && pitch >= len && pitch <= 0x7fffffff, ErrorCode::Internal, "pitch_rows: rows of ", len,
              " into a pitch of ", pitch);
  if (rows == 0 || pitch == 0) return;
  if (dtype_nbytes(dt, 1) == 2) return launch_pitch_rows<uint16_t>(c, src, dst, rows, len, pitch);
  DACPP_CHECK(dtype_nbytes(dt, 1) == 4, ErrorCode::Internal, "pitch_rows: dtype ", dtype_name(dt));
  launch_pitch_rows<uint32_t>(c, src, dst, rows, len, pitch);
}

Tensor empty(CudaContext& ctx, const Shape& shape, DType dtype, std::string name) {
  const int64_t n = shape_numel(shape);
  const size_t bytes = dtype_nbytes(dtype, n);
  DACPP_CHECK(bytes > 0 || n == 0, ErrorCode::InvalidArgument, "cuda::empty: shape ", shape_str(shape),
              " is not a whole number of ", dtype_name(dtype), " blocks");
  const std::string what = name.empty() ? str_cat("tensor ", shape_str(shape)) : name;
  std::shared_ptr<void> mem = ctx.allocator().allocate_shared(bytes, what.c_str());
  void* p = mem.get();
  return Tensor::view(p, shape, dtype, Device::cuda(ctx.device_index()), std::move(mem), std::move(name));
}

namespace {
const char* direction(const Tensor& src, const Tensor& dst) {
  return src.device().is_cpu() ? "h2d" : dst.device().is_cpu() ? "d2h" : "d2d";
}
}  // namespace

void copy_async(CudaContext& c, const Tensor& src, Tensor& dst) {
  const size_t bytes = src.nbytes();
  if (bytes == 0) return;
  c.make_current();
  DACPP_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), bytes, cudaMemcpyDefault, c.stream()), "copy ",
                   direction(src, dst), " of ", src.name().empty() ? shape_str(src.shape()) : "'" + src.name() + "'",
                   " (", bytes, " bytes)");
}

void copy(CudaContext& c, const Tensor& src, Tensor& dst) {
  copy_async(c, src, dst);
  if (src.nbytes() > 0 && (src.device().is_cpu() || dst.device().is_cpu()))
    c.synchronize(str_cat("copy ", direction(src, dst)).c_str());
}

void cast(CudaContext& c, const Tensor& src, Tensor& dst) {
  c.make_current();
  cast_raw(c, src.dtype(), src.raw(), dst.dtype(), dst.raw(), src.numel());
}

Tensor upload(CudaContext& ctx, const Tensor& host, DType target) {
  const std::string name = host.name().empty() ? str_cat("tensor ", shape_str(host.shape())) : host.name();
  DACPP_CHECK(host.defined() && host.device().is_cpu(), ErrorCode::InvalidArgument, "cuda::upload: '", name,
              "' is ", host.defined() ? device_name(host.device()) : std::string("undefined"),
              ", expected a host tensor");
  auto is_float = [](DType d) { return d == DType::F32 || d == DType::BF16 || d == DType::F16; };
  DACPP_CHECK(is_float(host.dtype()) && is_float(target), ErrorCode::InvalidArgument, "cuda::upload: '", name,
              "' from ", dtype_name(host.dtype()), " to ", dtype_name(target),
              " is not supported (f32, bf16, f16 only)");
  ctx.make_current();
  Tensor out = empty(ctx, host.shape(), target, host.name());
  const int64_t n = host.numel();
  if (n == 0) return out;
  if (host.dtype() == target) {
    DACPP_CUDA_CHECK(cudaMemcpyAsync(out.raw(), host.raw(), host.nbytes(), cudaMemcpyHostToDevice, ctx.stream()),
                     "upload of '", name, "' (", host.nbytes(), " bytes)");
  } else {
    Tensor staging = empty(ctx, host.shape(), host.dtype(), name + " (staging)");
    DACPP_CUDA_CHECK(cudaMemcpyAsync(staging.raw(), host.raw(), host.nbytes(), cudaMemcpyHostToDevice,
                                     ctx.stream()),
                     "upload of '", name, "' (", host.nbytes(), " bytes)");
    cast_raw(ctx, host.dtype(), staging.raw(), target, out.raw(), n);
    ctx.synchronize(str_cat("upload of '", name, "'").c_str());  // before staging returns to the cache
    return out;
  }
  ctx.synchronize(str_cat("upload of '", name, "'").c_str());
  return out;
}

std::vector<KernelInfo> copy_kernels() {
  std::vector<KernelInfo> out;
  auto add = [&](const char* name, const void* f) { out.push_back({name, f}); };
  add("cast<f32,bf16>", reinterpret_cast<const void*>(&cast_kernel<float, __nv_bfloat16>));
  add("cast<f32,f16>", reinterpret_cast<const void*>(&cast_kernel<float, __half>));
  add("cast<bf16,f32>", reinterpret_cast<const void*>(&cast_kernel<__nv_bfloat16, float>));
  add("cast<f16,f32>", reinterpret_cast<const void*>(&cast_kernel<__half, float>));
  add("cast<bf16,f16>", reinterpret_cast<const void*>(&cast_kernel<__nv_bfloat16, __half>));
  add("cast<f16,bf16>", reinterpret_cast<const void*>(&cast_kernel<__half, __nv_bfloat16>));
  add("pitch_rows<16-bit>", reinterpret_cast<const void*>(&pitch_rows_kernel<uint16_t>));
  add("pitch_rows<32-bit>", reinterpret_cast<const void*>(&pitch_rows_kernel<uint32_t>));
  return out;
}

}  // namespace dacpp::cuda
