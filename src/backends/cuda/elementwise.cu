// unary and binary (add / mul with broadcasting of b against a) on f32 / bf16 / f16; f32 math throughout.
// Same-shape and row-broadcast ([..., C] op [C]) cases use 16-byte vector loads when aligned; any other
// broadcast goes through a collapsed-dims index walk (b's offset affine within each collapsed dim).
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/kernel_probe.h"

namespace dacpp::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kMaxDims = 8;

template <int K>
__device__ __forceinline__ float apply_unary(float x) {
  if constexpr (K == static_cast<int>(UnaryKind::Gelu)) return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  else if constexpr (K == static_cast<int>(UnaryKind::Silu)) return x / (1.f + expf(-x));
  else if constexpr (K == static_cast<int>(UnaryKind::Relu)) return x > 0.f ? x : 0.f;
  else if constexpr (K == static_cast<int>(UnaryKind::Exp)) return expf(x);
  else return 1.f / (1.f + expf(-x));
}

template <int K>
__device__ __forceinline__ float apply_binary(float a, float b) {
  if constexpr (K == static_cast<int>(BinaryKind::Add)) return a + b;
  else return a * b;
}

template <typename T, int K>
__global__ void unary_kernel(const T* x, T* y, int64_t n) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    y[i] = from_f32<T>(apply_unary<K>(to_f32(x[i])));
}

// n counts 16-byte vectors.
template <typename T, int K>
__global__ void unary_vec_kernel(const Vec16<T>* x, Vec16<T>* y, int64_t n) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    Vec16<T> v = x[i];
#pragma unroll
    for (int j = 0; j < Vec16<T>::kN; ++j) v.v[j] = from_f32<T>(apply_unary<K>(to_f32(v.v[j])));
    y[i] = v;
  }
}

// b indexed by i % bn (bn == n: same shape; bn == C: a row broadcast over the last dim). b is of a's dtype, or f32
// (a parameter such as LayerScale kept f32 next to bf16 / f16 activations).
template <typename T, int K, typename TB = T>
__global__ void binary_mod_kernel(const T* a, const TB* b, T* y, int64_t n, int64_t bn) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    y[i] = from_f32<T>(apply_binary<K>(to_f32(a[i]), to_f32(b[i % bn])));
}

// Vector form of binary_mod_kernel: n and bn count 16-byte vectors.
template <typename T, int K>
__global__ void binary_mod_vec_kernel(const Vec16<T>* a, const Vec16<T>* b, Vec16<T>* y,
                                      int64_t n, int64_t bn) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    Vec16<T> va = a[i];
    const Vec16<T> vb = b[i % bn];
#pragma unroll
    for (int j = 0; j < Vec16<T>::kN; ++j) va.v[j] = from_f32<T>(apply_binary<K>(to_f32(va.v[j]), to_f32(vb.v[j])));
    y[i] = va;
  }
}

struct BcastDims {
  int ndim;
  int64_t size[kMaxDims];     // collapsed dims of a, innermost last
  int64_t bstride[kMaxDims];  // b's element stride along each (0 where b broadcasts)
};

template <typename T, int K, typename TB = T>
__global__ void binary_general_kernel(const T* a, const TB* b, T* y, int64_t n, BcastDims g) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rem = i, boff = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t c = rem % g.size[d];
      rem /= g.size[d];
      boff += c * g.bstride[d];
    }
    y[i] = from_f32<T>(apply_binary<K>(to_f32(a[i]), to_f32(b[boff])));
  }
}

// a's dims (size-1 dims dropped) with b's stride along each, merged while b's offset stays affine.
BcastDims collapse(const Shape& a, const Shape& b) {
  const int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
  std::vector<int64_t> bs(ra, 0);
  int64_t stride = 1;
  for (int d = ra - 1, db = rb - 1; d >= 0 && db >= 0; --d, --db) {
    bs[d] = b[db] == 1 ? 0 : stride;
    stride *= b[db];
  }
  std::vector<int64_t> size, bstride;
  for (int d = 0; d < ra; ++d) {
    if (a[d] == 1) continue;
    if (!size.empty() && bstride.back() == bs[d] * a[d]) {
      size.back() *= a[d];
      bstride.back() = bs[d];
    } else {
      size.push_back(a[d]);
      bstride.push_back(bs[d]);
    }
  }
  if (size.empty()) {
    size.push_back(1);
    bstride.push_back(0);
  }
  DACPP_CHECK(size.size() <= kMaxDims, ErrorCode::Unsupported, "add/mul: broadcast of b ", shape_str(b),
              " against a ", shape_str(a), " needs ", size.size(), " index dims (CUDA supports ", kMaxDims, ")");
  BcastDims g{};
  g.ndim = static_cast<int>(size.size());
  for (int d = 0; d < g.ndim; ++d) {
    g.size[d] = size[d];
    g.bstride[d] = bstride[d];
  }
  return g;
}

template <typename T, int K>
void launch_unary(CudaContext& c, const Tensor& x, Tensor& y) {
  const int64_t n = x.numel();
  constexpr int kN = Vec16<T>::kN;
  if (n % kN == 0 && aligned_to(x.raw(), 16) && aligned_to(y.raw(), 16)) {
    launch_kernel(c, "unary_vec", unary_vec_kernel<T, K>, grid_for(c, n / kN, kBlock), kBlock, 0,
                  static_cast<const Vec16<T>*>(x.raw()), static_cast<Vec16<T>*>(y.raw()), n / kN);
  } else {
    launch_kernel(c, "unary", unary_kernel<T, K>, grid_for(c, n, kBlock), kBlock, 0, static_cast<const T*>(x.raw()),
                  static_cast<T*>(y.raw()), n);
  }
}

// b's numel when b matches a's trailing dims exactly (after dropping b's leading 1s), else 0.
int64_t trailing_match(const Shape& a, const Shape& b) {
  int rb = static_cast<int>(b.size());
  int lead = 0;
  while (lead < rb && b[lead] == 1) ++lead;
  const int ra = static_cast<int>(a.size());
  if (rb - lead > ra) return 0;
  int64_t n = 1;
  for (int i = lead; i < rb; ++i) {
    if (b[i] != a[ra - (rb - i)]) return 0;
    n *= b[i];
  }
  return n;
}

// y = x + a · gamma[i % cols] (gamma null: y = x + a), f32 math, one rounding to T.
template <typename T, typename TA>
__global__ void add_scaled_kernel(const T* x, const TA* __restrict__ a, const float* __restrict__ gamma, T* y,
                                  int64_t n, int64_t cols) {
  pdl_enter();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const float av = to_f32(a[i]);
    y[i] = from_f32<T>(to_f32(x[i]) + (gamma ? av * gamma[i % cols] : av));
  }
}

// Vector form: 8 elements per step (two 16-byte loads of an f32 stream, one of a bf16 / f16 branch); n, cols
// multiples of 8, pointers 16-byte aligned.
template <typename T, typename TA>
__global__ void add_scaled_vec8_kernel(const T* x, const TA* __restrict__ a, const float* __restrict__ gamma, T* y,
                                       int64_t n8, int64_t cols) {
  pdl_enter();
  struct alignas(16) X8 {
    T v[8];
  };
  struct alignas(16) A8 {
    TA v[8];
  };
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n8; i += int64_t{gridDim.x} * blockDim.x) {
    X8 xv = reinterpret_cast<const X8*>(x)[i];
    const A8 av = reinterpret_cast<const A8*>(a)[i];
    const int64_t c0 = (i * 8) % cols;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float t = to_f32(av.v[j]);
      xv.v[j] = from_f32<T>(to_f32(xv.v[j]) + (gamma ? t * gamma[c0 + j] : t));
    }
    reinterpret_cast<X8*>(y)[i] = xv;
  }
}

template <typename T, int K, typename TB>
void launch_binary_mixed(CudaContext& c, const Tensor& a, const Tensor& b, Tensor& y) {
  const int64_t n = a.numel();
  const T* ap = static_cast<const T*>(a.raw());
  const TB* bp = static_cast<const TB*>(b.raw());
  T* yp = static_cast<T*>(y.raw());
  const int64_t bn = trailing_match(a.shape(), b.shape());
  if (bn > 0) {
    constexpr int kN = Vec16<T>::kN;
    if constexpr (std::is_same_v<T, float> && !std::is_same_v<TB, float> && K == static_cast<int>(BinaryKind::Add)) {
      // An f32 stream plus a bf16 / f16 operand of its shape (e.g. the pos-embed table and the patch tokens): the
      // residual add's 8-wide kernel, without a scale.
      if (bn == n && n % 8 == 0 && aligned_to(ap, 16) && aligned_to(bp, 16) && aligned_to(yp, 16)) {
        launch_kernel(c, "add_vec8", add_scaled_vec8_kernel<float, TB>, grid_for(c, n / 8, kBlock), kBlock, 0, ap, bp,
                      static_cast<const float*>(nullptr), yp, n / 8, int64_t{8});
        return;
      }
    }
    if constexpr (std::is_same_v<T, TB>) {
      if (bn % kN == 0 && aligned_to(ap, 16) && aligned_to(bp, 16) && aligned_to(yp, 16)) {
        launch_kernel(c, "binary_mod_vec", binary_mod_vec_kernel<T, K>, grid_for(c, n / kN, kBlock), kBlock, 0,
                      reinterpret_cast<const Vec16<T>*>(ap), reinterpret_cast<const Vec16<T>*>(bp),
                      reinterpret_cast<Vec16<T>*>(yp), n / kN, bn / kN);
        return;
      }
    }
    launch_kernel(c, "binary_mod", binary_mod_kernel<T, K, TB>, grid_for(c, n, kBlock), kBlock, 0, ap, bp, yp, n, bn);
    return;
  }
  const BcastDims g = collapse(a.shape(), b.shape());
  launch_kernel(c, "binary_general", binary_general_kernel<T, K, TB>, grid_for(c, n, kBlock), kBlock, 0, ap, bp, yp, n,
                g);
}

template <typename T, int K>
void launch_binary(CudaContext& c, const Tensor& a, const Tensor& b, Tensor& y) {
  if (b.dtype() == DType::F32) return launch_binary_mixed<T, K, float>(c, a, b, y);
  if constexpr (std::is_same_v<T, float>) {  // an f32 stream with a bf16 / f16 operand
    if (b.dtype() == DType::BF16) return launch_binary_mixed<T, K, __nv_bfloat16>(c, a, b, y);
    return launch_binary_mixed<T, K, __half>(c, a, b, y);
  }
  return launch_binary_mixed<T, K, T>(c, a, b, y);
}

template <typename T, typename TA>
void launch_add_scaled(CudaContext& c, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y) {
  const int64_t n = x.numel(), cols = gamma.defined() ? gamma.numel() : 8;
  if (n % 8 == 0 && cols % 8 == 0 && aligned_to(x.raw(), 16) && aligned_to(a.raw(), 16) && aligned_to(y.raw(), 16)) {
    launch_kernel(c, "add_scaled_vec8", add_scaled_vec8_kernel<T, TA>, grid_for(c, n / 8, kBlock), kBlock, 0,
                  static_cast<const T*>(x.raw()), static_cast<const TA*>(a.raw()),
                  gamma.defined() ? static_cast<const float*>(gamma.raw()) : nullptr, static_cast<T*>(y.raw()), n / 8,
                  cols);
    return;
  }
  launch_kernel(c, "add_scaled", add_scaled_kernel<T, TA>, grid_for(c, n, kBlock), kBlock, 0,
                static_cast<const T*>(x.raw()), static_cast<const TA*>(a.raw()),
                gamma.defined() ? static_cast<const float*>(gamma.raw()) : nullptr, static_cast<T*>(y.raw()), n, cols);
}

// ops::embed_tokens: V consecutive columns of one token per thread (V = 4 where E is a multiple of 4 and the bases
// are 16-byte aligned: float4 loads of lead / table and stores of tokens).
template <typename T, int V>
__global__ void embed_tokens_kernel(const float* __restrict__ lead, const float* __restrict__ table,
                                    const T* __restrict__ patches, float* __restrict__ tokens, int64_t lead_rows,
                                    int64_t p, int64_t e, int64_t total) {
  pdl_enter();
  using Vec = std::conditional_t<V == 4, float4, float>;
  const int64_t n = lead_rows + p;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i * V / e, col = i * V - r * e, img = r / n, row = r - img * n;
    if (row < lead_rows) {
      reinterpret_cast<Vec*>(tokens)[i] = *reinterpret_cast<const Vec*>(lead + row * e + col);
      continue;
    }
    Vec v = *reinterpret_cast<const Vec*>(table + (row - lead_rows) * e + col);
    const T* src = patches + (img * p + row - lead_rows) * e + col;
    if constexpr (V == 4) {
      v.x += to_f32(src[0]);
      v.y += to_f32(src[1]);
      v.z += to_f32(src[2]);
      v.w += to_f32(src[3]);
    } else {
      v += to_f32(src[0]);
    }
    reinterpret_cast<Vec*>(tokens)[i] = v;
  }
}

template <typename T>
void append_kernels(std::vector<KernelInfo>& out, const char* tname) {
  auto add = [&](const char* what, const void* f) { out.push_back({str_cat(what, "<", tname, ">"), f}); };
  add("unary_gelu", reinterpret_cast<const void*>(&unary_kernel<T, 0>));
  add("unary_vec_gelu", reinterpret_cast<const void*>(&unary_vec_kernel<T, 0>));
  add("binary_mod_add", reinterpret_cast<const void*>(&binary_mod_kernel<T, 0>));
  add("binary_mod_vec_add", reinterpret_cast<const void*>(&binary_mod_vec_kernel<T, 0>));
  add("binary_general_add", reinterpret_cast<const void*>(&binary_general_kernel<T, 0>));
  add("binary_mod_add_f32b", reinterpret_cast<const void*>(&binary_mod_kernel<T, 0, float>));
  add("binary_general_add_f32b", reinterpret_cast<const void*>(&binary_general_kernel<T, 0, float>));
  add("embed_tokens_vec4", reinterpret_cast<const void*>(&embed_tokens_kernel<T, 4>));
  add("embed_tokens", reinterpret_cast<const void*>(&embed_tokens_kernel<T, 1>));
}

}  // namespace

void unary(CudaContext& c, UnaryKind kind, const Tensor& x, Tensor& y) {
  if (x.numel() == 0) return;
  c.make_current();
  dispatch_float(x.dtype(), "unary", [&](auto tag) {
    using T = decltype(tag);
    switch (kind) {
      case UnaryKind::Gelu: return launch_unary<T, static_cast<int>(UnaryKind::Gelu)>(c, x, y);
      case UnaryKind::Silu: return launch_unary<T, static_cast<int>(UnaryKind::Silu)>(c, x, y);
      case UnaryKind::Relu: return launch_unary<T, static_cast<int>(UnaryKind::Relu)>(c, x, y);
      case UnaryKind::Exp: return launch_unary<T, static_cast<int>(UnaryKind::Exp)>(c, x, y);
      case UnaryKind::Sigmoid: return launch_unary<T, static_cast<int>(UnaryKind::Sigmoid)>(c, x, y);
    }
    DACPP_THROW(ErrorCode::Internal, "unary: unknown kind ", static_cast<int>(kind));
  });
}

void binary(CudaContext& c, BinaryKind kind, const Tensor& a, const Tensor& b, Tensor& y) {
  if (a.numel() == 0) return;
  c.make_current();
  dispatch_float(a.dtype(), "binary", [&](auto tag) {
    using T = decltype(tag);
    if (kind == BinaryKind::Add) launch_binary<T, static_cast<int>(BinaryKind::Add)>(c, a, b, y);
    else launch_binary<T, static_cast<int>(BinaryKind::Mul)>(c, a, b, y);
  });
}

void add_scaled(CudaContext& c, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y) {
  if (x.numel() == 0) return;
  c.make_current();
  dispatch_float(x.dtype(), "add_scaled", [&](auto tag) {
    using T = decltype(tag);
    dispatch_float(a.dtype(), "add_scaled", [&](auto atag) {
      using TA = decltype(atag);
      if constexpr (std::is_same_v<T, TA> || std::is_same_v<T, float>) launch_add_scaled<T, TA>(c, x, a, gamma, y);
      else DACPP_THROW(ErrorCode::Unsupported, "add_scaled (cuda): ", dtype_name(a.dtype()), " branch into a ",
                       dtype_name(x.dtype()), " stream");
    });
  });
}

void embed_tokens(CudaContext& c, const Tensor& lead, const Tensor& table, const Tensor& patches, Tensor& tokens) {
  const int64_t total = tokens.numel();
  if (total == 0) return;
  c.make_current();
  const int64_t p = patches.dim(1), e = patches.dim(2), l = lead.defined() ? lead.dim(0) : 0;
  const float* lp = lead.defined() ? static_cast<const float*>(lead.raw()) : nullptr;
  const float* tp = static_cast<const float*>(table.raw());
  float* yp = static_cast<float*>(tokens.raw());
  const bool vec = e % 4 == 0 && (lp == nullptr || aligned_to(lp, 16)) && aligned_to(tp, 16) && aligned_to(yp, 16);
  dispatch_float(patches.dtype(), "embed_tokens", [&](auto tag) {
    using T = decltype(tag);
    const T* pp = static_cast<const T*>(patches.raw());
    if (vec)
      launch_kernel(c, "embed_tokens", embed_tokens_kernel<T, 4>, grid_for(c, total / 4, kBlock), kBlock, 0, lp, tp,
                    pp, yp, l, p, e, total / 4);
    else
      launch_kernel(c, "embed_tokens", embed_tokens_kernel<T, 1>, grid_for(c, total, kBlock), kBlock, 0, lp, tp, pp,
                    yp, l, p, e, total);
  });
}

std::vector<KernelInfo> elementwise_kernels() {
  std::vector<KernelInfo> out;
  append_kernels<float>(out, "f32");
  out.push_back({"add_scaled<f32,f32>", reinterpret_cast<const void*>(&add_scaled_kernel<float, float>)});
  out.push_back({"add_scaled_vec8<f32,f32>", reinterpret_cast<const void*>(&add_scaled_vec8_kernel<float, float>)});
  out.push_back({"add_scaled_vec8<f32,bf16>",
                 reinterpret_cast<const void*>(&add_scaled_vec8_kernel<float, __nv_bfloat16>)});
  out.push_back({"add_scaled_vec8<f32,f16>", reinterpret_cast<const void*>(&add_scaled_vec8_kernel<float, __half>)});
  out.push_back({"add_scaled_vec8<bf16,bf16>",
                 reinterpret_cast<const void*>(&add_scaled_vec8_kernel<__nv_bfloat16, __nv_bfloat16>)});
  out.push_back({"add_scaled_vec8<f16,f16>", reinterpret_cast<const void*>(&add_scaled_vec8_kernel<__half, __half>)});
  out.push_back({"add_scaled<f32,bf16>", reinterpret_cast<const void*>(&add_scaled_kernel<float, __nv_bfloat16>)});
  out.push_back({"add_scaled<f32,f16>", reinterpret_cast<const void*>(&add_scaled_kernel<float, __half>)});
  out.push_back({"add_scaled<bf16,bf16>", reinterpret_cast<const void*>(&add_scaled_kernel<__nv_bfloat16, __nv_bfloat16>)});
  out.push_back({"add_scaled<f16,f16>", reinterpret_cast<const void*>(&add_scaled_kernel<__half, __half>)});
  out.push_back({"binary_mod_add<f32,bf16b>", reinterpret_cast<const void*>(&binary_mod_kernel<float, 0, __nv_bfloat16>)});
  out.push_back({"binary_mod_add<f32,f16b>", reinterpret_cast<const void*>(&binary_mod_kernel<float, 0, __half>)});
  append_kernels<__nv_bfloat16>(out, "bf16");
  append_kernels<__half>(out, "f16");
  return out;
}

}  // namespace dacpp::cuda
