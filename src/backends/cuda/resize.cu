// resize_bilinear / resize_bilinear_rows / resize_bicubic on [N, C, H, W] (f32 / bf16 / f16 storage, f32 math),
// mirroring src/backends/cpu/resize_cpu.cc: the same source scale (computed on the host by the same formula), the
// same source index and tap rules (torch's area_pixel_compute_source_index; cubic A = -0.75 with border-clamped
// taps), and the same summation order (each horizontal tap's column is first blended vertically). Index math uses
// round-to-nearest intrinsics without FMA contraction so the taps match the CPU's exactly.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_common.cuh"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/kernel_probe.h"
#include "core/error.h"

namespace dacpp::cuda {
namespace {

struct ResizeGeom {
  int64_t in_h, in_w;
  int64_t out_h;     // rows of y
  int64_t out_w;
  int64_t row0;      // y's first row within the full resampled map
  float scale_h, scale_w;
  bool align_corners;
  // Bilinear only: added before the store's rounding: bias[plane % channels] (f32, or null) and, with accumulate,
  // y's own value.
  const float* bias;
  int64_t channels;
  int accumulate;
};

// Host: the source-per-destination scale (resize_cpu.cc's source_scale).
float source_scale(int64_t in, int64_t out, bool align_corners, double step) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  return step > 0 ? static_cast<float>(step) : static_cast<float>(in) / static_cast<float>(out);
}

__device__ __forceinline__ float source_index(float scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return __fmul_rn(scale, static_cast<float>(dst));
  const float src = __fsub_rn(__fmul_rn(scale, __fadd_rn(static_cast<float>(dst), 0.5f)), 0.5f);
  return (!cubic && src < 0.f) ? 0.f : src;
}

__device__ __forceinline__ void linear_taps(int64_t in, float scale, int64_t o, bool ac, int64_t idx[2],
                                            float wt[2]) {
  const float src = source_index(scale, o, ac, false);
  const int64_t i0 = min(static_cast<int64_t>(floorf(src)), in - 1);
  const float l1 = fminf(fmaxf(__fsub_rn(src, static_cast<float>(i0)), 0.f), 1.f);
  idx[0] = i0;
  idx[1] = i0 < in - 1 ? i0 + 1 : i0;
  wt[0] = __fsub_rn(1.f, l1);
  wt[1] = l1;
}

__device__ __forceinline__ float cubic_near(float d) {  // |d| <= 1
  constexpr float kA = -0.75f;
  return __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(__fmul_rn(kA + 2, d), kA + 3), d), d), 1.f);
}

__device__ __forceinline__ float cubic_far(float e) {  // 1 < |e| < 2
  constexpr float kA = -0.75f;
  const float t = __fmul_rn(__fadd_rn(__fmul_rn(__fsub_rn(__fmul_rn(kA, e), 5 * kA), e), 8 * kA), e);
  return __fsub_rn(t, 4 * kA);
}

__device__ __forceinline__ void cubic_taps(int64_t in, float scale, int64_t o, bool ac, int64_t idx[4],
                                           float wt[4]) {
  const float src = source_index(scale, o, ac, true);
  const int64_t i0 = static_cast<int64_t>(floorf(src));
  const float x = __fsub_rn(src, static_cast<float>(i0));
  wt[0] = cubic_far(__fadd_rn(x, 1.f));
  wt[1] = cubic_near(x);
  wt[2] = cubic_near(__fsub_rn(1.f, x));
  wt[3] = cubic_far(__fsub_rn(2.f, x));
#pragma unroll
  for (int j = 0; j < 4; ++j) idx[j] = min(max(i0 - 1 + j, int64_t{0}), in - 1);
}

// A thread owns V adjacent output columns: their horizontal taps are computed once (32-bit offsets within a plane),
// then it walks groups of R (plane, row) pairs by gridDim.y: all taps of the group's R rows are loaded first, then
// blended, so R rows' loads are in flight at once; outputs are stored as one V-element word when `vec_store`
// (out_w % V == 0 and y aligned). (0.5 ran one thread per output in ~200k short blocks: the 148²→296² upsample of
// DA2-L took 0.22 ms under ncu; 0.6-1.0 walked one row at a time, V = 2: DA2-L's five upsamples 0.27 ms under ncu
// in session 8, ~0.6 TB/s, each thread waiting out one row's loads before issuing the next row's.)
template <typename T, int V>
struct alignas(V * sizeof(T)) Lanes {
  T e[V];
};

// A block holds `span` threads across (blockIdx.x's share of the row) and blockDim.x / span row groups under
// each other, so narrow rows still fill whole warps (a 148-wide row is 37 threads of V = 4: one per 64-thread block
// left 27 idle, and DA2-L's 74² → 148² upsample of 256 planes ran as 16896 such blocks, 28.7 µs under ncu).
template <typename T, int NT, int V, int R>  // NT = 2 (bilinear) or 4 (bicubic) taps per axis
__global__ void resize_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t planes, ResizeGeom g, int vec_store,
                              int span) {
  pdl_enter();
  const int lane_x = threadIdx.x % span, lane_y = threadIdx.x / span, rows_per_block = blockDim.x / span;
  const int64_t ox0 = (static_cast<int64_t>(blockIdx.x) * span + lane_x) * V;
  if (ox0 >= g.out_w) return;
  int ix[V][NT];
  float wx[V][NT];
#pragma unroll
  for (int c = 0; c < V; ++c) {
    const int64_t ox = min(ox0 + c, g.out_w - 1);  // columns past the row are computed but not stored
    int64_t idx[NT];
    if constexpr (NT == 2) linear_taps(g.in_w, g.scale_w, ox, g.align_corners, idx, wx[c]);
    else cubic_taps(g.in_w, g.scale_w, ox, g.align_corners, idx, wx[c]);
#pragma unroll
    for (int j = 0; j < NT; ++j) ix[c][j] = static_cast<int>(idx[j]);
  }
  const int64_t rows = planes * g.out_h, in_plane = g.in_h * g.in_w;
  const int64_t step = static_cast<int64_t>(gridDim.y) * rows_per_block * R;
  for (int64_t pr0 = (static_cast<int64_t>(blockIdx.y) * rows_per_block + lane_y) * R; pr0 < rows; pr0 += step) {
    float in[R][NT][V][NT];  // [row][vertical tap][column][horizontal tap]
    float wy[R][NT];
    float extra[R][V];  // bilinear: the bias and, accumulating, y's value, loaded with the taps
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t pr = min(pr0 + r, rows - 1);  // rows past the end are loaded but not stored
      const int64_t plane = pr / g.out_h, row = pr - plane * g.out_h;
      int64_t iy[NT];
      if constexpr (NT == 2) linear_taps(g.in_h, g.scale_h, g.row0 + row, g.align_corners, iy, wy[r]);
      else cubic_taps(g.in_h, g.scale_h, g.row0 + row, g.align_corners, iy, wy[r]);
      const T* src = x + plane * in_plane;
#pragma unroll
      for (int k = 0; k < NT; ++k) {
        const T* line = src + static_cast<int>(iy[k]) * static_cast<int>(g.in_w);
#pragma unroll
        for (int c = 0; c < V; ++c)
#pragma unroll
          for (int j = 0; j < NT; ++j) in[r][k][c][j] = to_f32(__ldg(line + ix[c][j]));
      }
#pragma unroll
      for (int c = 0; c < V; ++c) extra[r][c] = 0.f;
      if constexpr (NT == 2) {
        if (g.bias != nullptr) {
          const float b = __ldg(g.bias + plane % g.channels);
#pragma unroll
          for (int c = 0; c < V; ++c) extra[r][c] = b;
        }
        if (g.accumulate) {
          const T* prev = y + pr * g.out_w + ox0;
          if (vec_store) {
            const Lanes<T, V> v = *reinterpret_cast<const Lanes<T, V>*>(prev);
#pragma unroll
            for (int c = 0; c < V; ++c) extra[r][c] += to_f32(v.e[c]);
          } else {
#pragma unroll
            for (int c = 0; c < V; ++c)
              if (ox0 + c < g.out_w) extra[r][c] += to_f32(prev[c]);
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (pr0 + r >= rows) break;
      T* dst = y + (pr0 + r) * g.out_w + ox0;
      Lanes<T, V> out;
#pragma unroll
      for (int c = 0; c < V; ++c) {
        float acc = 0.f;
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          float col = 0.f;
#pragma unroll
          for (int k = 0; k < NT; ++k) col = __fadd_rn(col, __fmul_rn(wy[r][k], in[r][k][c][j]));
          acc = __fadd_rn(acc, __fmul_rn(wx[c][j], col));
        }
        out.e[c] = from_f32<T>(NT == 2 ? acc + extra[r][c] : acc);
      }
      if (vec_store) {
        *reinterpret_cast<Lanes<T, V>*>(dst) = out;
      } else {
#pragma unroll
        for (int c = 0; c < V; ++c)
          if (ox0 + c < g.out_w) dst[c] = out.e[c];
      }
    }
  }
}

// Bilinear upsampling (out >= in on both axes) of whole output rows per block: the source rows the block's taps reach
// are staged in shared memory as f32 with coalesced loads, and the block's row and column taps are tabled there once;
// then each thread blends up to kTileItems runs of V adjacent outputs of a row (the bias and, accumulating, y's
// values loaded first, all at once). Same taps and operations as resize_kernel, which issues every tap as a global
// load of its own and waits for a row pair's loads per step: DA2-L's 74² → 148² upsample of 256 planes took 20 µs
// for 11 MB written, 38 µs with y accumulated.
constexpr int kTileThreads = 256, kTileItems = 4;
constexpr int kTileMaxWidth = 1024;  // output columns whose taps are tabled
constexpr int kTileMaxRows = 256;    // output rows per block whose taps are tabled

struct TileTap {
  int i0, i1;  // source indices (rows: relative to the first staged row)
  float w0, w1;
};

template <typename T, int V>
__global__ void __launch_bounds__(kTileThreads)
    upsample_tile_kernel(const T* __restrict__ x, T* __restrict__ y, ResizeGeom g, int rows_per_tile) {
  extern __shared__ float tile_src[];
  __shared__ TileTap col_taps[kTileMaxWidth];
  __shared__ TileTap row_taps[kTileMaxRows];
  const int tid = threadIdx.x;
  const int64_t plane = blockIdx.y;
  const int oy0 = static_cast<int>(blockIdx.x) * rows_per_tile;
  const int rows = min(oy0 + rows_per_tile, static_cast<int>(g.out_h)) - oy0;
  const int in_w = static_cast<int>(g.in_w), out_w = static_cast<int>(g.out_w), groups = out_w / V;
  int64_t first[2];
  float unused[2];
  linear_taps(g.in_h, g.scale_h, g.row0 + oy0, g.align_corners, first, unused);
  const int r_first = static_cast<int>(first[0]);
  for (int i = tid; i < out_w + rows; i += kTileThreads) {
    int64_t idx[2];
    float wt[2];
    if (i < out_w) {
      linear_taps(g.in_w, g.scale_w, i, g.align_corners, idx, wt);
      // Column i's taps at [i % V][i / V]: a warp's items (consecutive runs of V columns) read their c-th column's
      // taps from consecutive entries (stored at i itself, a run's 16-byte entries V apart put 4 lanes of a
      // quarter-warp on the same banks: Nsight Compute, session 36, 5-way conflicts on 67 % of shared loads).
      col_taps[(i % V) * groups + i / V] = TileTap{static_cast<int>(idx[0]), static_cast<int>(idx[1]), wt[0], wt[1]};
    } else {
      linear_taps(g.in_h, g.scale_h, g.row0 + oy0 + i - out_w, g.align_corners, idx, wt);
      row_taps[i - out_w] =
          TileTap{static_cast<int>(idx[0]) - r_first, static_cast<int>(idx[1]) - r_first, wt[0], wt[1]};
    }
  }
  int64_t last[2];
  linear_taps(g.in_h, g.scale_h, g.row0 + oy0 + rows - 1, g.align_corners, last, unused);
  const int n_src = (static_cast<int>(last[1]) - r_first + 1) * in_w, n_items = rows * groups;
  T* dst = y + (plane * g.out_h + oy0) * g.out_w;
  const float b = g.bias != nullptr ? __ldg(g.bias + plane % g.channels) : 0.f;
  pdl_enter();
  const T* src = x + (plane * g.in_h + r_first) * g.in_w;
  for (int i = tid; i < n_src; i += kTileThreads) tile_src[i] = to_f32(src[i]);
  float extra[kTileItems][V];
#pragma unroll
  for (int e = 0; e < kTileItems; ++e) {
    const int item = tid + e * kTileThreads;
#pragma unroll
    for (int c = 0; c < V; ++c) extra[e][c] = b;
    if (g.accumulate && item < n_items) {
      const int r = item / groups;
      const Lanes<T, V> prev = *reinterpret_cast<const Lanes<T, V>*>(dst + r * out_w + (item - r * groups) * V);
#pragma unroll
      for (int c = 0; c < V; ++c) extra[e][c] += to_f32(prev.e[c]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int e = 0; e < kTileItems; ++e) {
    const int item = tid + e * kTileThreads;
    if (item >= n_items) break;
    const int r = item / groups, run = item - r * groups, ox0 = run * V;
    const TileTap ry = row_taps[r];
    const float* line0 = tile_src + ry.i0 * in_w;
    const float* line1 = tile_src + ry.i1 * in_w;
    Lanes<T, V> out;
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const TileTap rx = col_taps[c * groups + run];
      // resize_kernel's order: each horizontal tap's column blended vertically first, from 0.
      const float col0 = __fadd_rn(__fadd_rn(0.f, __fmul_rn(ry.w0, line0[rx.i0])), __fmul_rn(ry.w1, line1[rx.i0]));
      const float col1 = __fadd_rn(__fadd_rn(0.f, __fmul_rn(ry.w0, line0[rx.i1])), __fmul_rn(ry.w1, line1[rx.i1]));
      const float acc = __fadd_rn(__fadd_rn(0.f, __fmul_rn(rx.w0, col0)), __fmul_rn(rx.w1, col1));
      out.e[c] = from_f32<T>(acc + extra[e][c]);
    }
    *reinterpret_cast<Lanes<T, V>*>(dst + r * out_w + ox0) = out;
  }
}

constexpr int kTileSmemBytes = 24 << 10;  // staged source rows (the tables take 20 KiB of static shared memory)

// upsample_tile_kernel's rows per block for this geometry, or 0 where it does not apply (downsampling, a row wider
// than kTileMaxWidth, the staged rows over kTileSmemBytes, more planes than a grid's y). v: columns per run.
// (In this geometry's terms: DA2-L's 74² → 148² takes 27 rows per block, 6 blocks per plane.)
int tile_rows(const ResizeGeom& g, int64_t planes, int v) {
  if (g.out_h < g.in_h || g.out_w < g.in_w || g.out_w > kTileMaxWidth || planes > 65535) return 0;
  const int rows =
      static_cast<int>(std::min<int64_t>({kTileThreads * kTileItems * v / g.out_w, g.out_h, int64_t{kTileMaxRows}}));
  if (rows < 1) return 0;
  // Source rows of `rows` consecutive output rows: at most ceil((rows - 1) · scale) + 2, one more for rounding.
  const int64_t src_rows = static_cast<int64_t>(std::ceil((rows - 1) * static_cast<double>(g.scale_h))) + 3;
  return src_rows * g.in_w * static_cast<int64_t>(sizeof(float)) <= kTileSmemBytes ? rows : 0;
}

// Bilinear: 4 columns × 2 rows per thread and step where the rows allow 4-element stores (DPT's 148 / 296-wide
// maps), else 2 columns × 4 rows; bicubic (16 taps per output): 2 × 2. 32 loads in flight per thread, ~80 registers.
template <int NT, int V>
void launch_v(CudaContext& c, const Tensor& x, Tensor& y, const ResizeGeom& g) {
  constexpr int R = NT == 2 && V == 2 ? 4 : 2;
  const int64_t planes = y.dim(0) * y.dim(1);
  const int64_t threads_per_row = (g.out_w + V - 1) / V;
  // As few blocks per row as 256 threads allow, evenly filled (a 518-wide row of V = 2: 2 × 130 threads, not
  // 256 + 3), and as many row groups under each other as fit in 256 threads.
  const int64_t gx = (threads_per_row + 255) / 256;
  const int span = static_cast<int>((threads_per_row + gx - 1) / gx);
  const int64_t groups = (planes * g.out_h + R - 1) / R;
  const int rows_per_block = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(256 / span, groups)));
  const int block = span * rows_per_block;
  // ~32 blocks of 256 threads per multiprocessor in all; each thread walks its share of the row groups.
  const int64_t want = (32 * c.sm_count() * 256 / block + gx - 1) / gx;
  const int64_t gy =
      std::max<int64_t>(1, std::min<int64_t>({(groups + rows_per_block - 1) / rows_per_block, 65535, want}));
  const int vec_store = g.out_w % V == 0 && reinterpret_cast<uintptr_t>(y.raw()) % dtype_nbytes(y.dtype(), V) == 0;
  dispatch_float(x.dtype(), NT == 2 ? "resize_bilinear" : "resize_bicubic", [&](auto tag) {
    using T = decltype(tag);
    launch_kernel(c, NT == 2 ? "resize_bilinear" : "resize_bicubic", resize_kernel<T, NT, V, R>,
                  dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), block, 0, static_cast<const T*>(x.raw()),
                  static_cast<T*>(y.raw()), planes, g, vec_store, span);
  });
}

template <int NT>
void launch(CudaContext& c, const Tensor& x, Tensor& y, const ResizeGeom& g) {
  DACPP_CHECK(g.in_h * g.in_w < INT32_MAX, ErrorCode::Unsupported, NT == 2 ? "resize_bilinear" : "resize_bicubic",
              " (cuda): an input plane of ", g.in_h, "x", g.in_w, " exceeds 2^31 elements");
  c.make_current();
  const int64_t planes = y.dim(0) * y.dim(1);
  const int v = g.out_w % 4 == 0 && reinterpret_cast<uintptr_t>(y.raw()) % dtype_nbytes(y.dtype(), 4) == 0 ? 4 : 1;
  if constexpr (NT == 2) {
    if (const int rows = tile_rows(g, planes, v); rows > 0) {
      const int64_t src_rows = static_cast<int64_t>(std::ceil((rows - 1) * static_cast<double>(g.scale_h))) + 3;
      const int smem = static_cast<int>(src_rows * g.in_w * static_cast<int64_t>(sizeof(float)));
      const dim3 grid(static_cast<unsigned>((g.out_h + rows - 1) / rows), static_cast<unsigned>(planes));
      dispatch_float(x.dtype(), "resize_bilinear", [&](auto tag) {
        using T = decltype(tag);
        launch_kernel(c, "resize_bilinear (tiled upsample)",
                      v == 4 ? upsample_tile_kernel<T, 4> : upsample_tile_kernel<T, 1>, grid, kTileThreads, smem,
                      static_cast<const T*>(x.raw()), static_cast<T*>(y.raw()), g, rows);
      });
      return;
    }
  }
  const bool wide = reinterpret_cast<uintptr_t>(y.raw()) % dtype_nbytes(y.dtype(), 4) == 0 && g.out_w % 4 == 0;
  if constexpr (NT == 2)
    if (wide) return launch_v<NT, 4>(c, x, y, g);
  launch_v<NT, 2>(c, x, y, g);
}

ResizeGeom geometry(const Tensor& x, const Tensor& y, int64_t full_h, int64_t row0, bool ac, double sh, double sw) {
  ResizeGeom g{};
  g.in_h = x.dim(2);
  g.in_w = x.dim(3);
  g.out_h = y.dim(2);
  g.out_w = y.dim(3);
  g.row0 = row0;
  g.align_corners = ac;
  g.bias = nullptr;
  g.channels = y.dim(1);
  g.accumulate = 0;
  g.scale_h = source_scale(g.in_h, full_h, ac, sh);
  g.scale_w = source_scale(g.in_w, g.out_w, ac, sw);
  return g;
}

}  // namespace

void resize_bilinear(CudaContext& c, const Tensor& x, Tensor& y, bool align_corners, const float* bias,
                     bool accumulate) {
  if (y.numel() == 0) return;
  ResizeGeom g = geometry(x, y, y.dim(2), 0, align_corners, 0, 0);
  g.bias = bias;
  g.accumulate = accumulate ? 1 : 0;
  launch<2>(c, x, y, g);
}

void resize_bilinear_rows(CudaContext& c, const Tensor& x, Tensor& y, int64_t row0, int64_t full_h,
                          bool align_corners) {
  if (y.numel() == 0) return;
  launch<2>(c, x, y, geometry(x, y, full_h, row0, align_corners, 0, 0));
}

void resize_bicubic(CudaContext& c, const Tensor& x, Tensor& y, bool align_corners, double scale_h, double scale_w) {
  if (y.numel() == 0) return;
  launch<4>(c, x, y, geometry(x, y, y.dim(2), 0, align_corners, scale_h, scale_w));
}

std::vector<KernelInfo> resize_kernels() {
  return {
      {"resize_bilinear<f32,2>", reinterpret_cast<const void*>(&resize_kernel<float, 2, 2, 4>)},
      {"resize_bilinear<bf16,2>", reinterpret_cast<const void*>(&resize_kernel<__nv_bfloat16, 2, 2, 4>)},
      {"resize_bilinear<f16,2>", reinterpret_cast<const void*>(&resize_kernel<__half, 2, 2, 4>)},
      {"resize_bilinear<f32,4>", reinterpret_cast<const void*>(&resize_kernel<float, 2, 4, 2>)},
      {"resize_bilinear<bf16,4>", reinterpret_cast<const void*>(&resize_kernel<__nv_bfloat16, 2, 4, 2>)},
      {"resize_bilinear<f16,4>", reinterpret_cast<const void*>(&resize_kernel<__half, 2, 4, 2>)},
      {"resize_bilinear_tiled<f32,4>", reinterpret_cast<const void*>(&upsample_tile_kernel<float, 4>)},
      {"resize_bilinear_tiled<bf16,4>", reinterpret_cast<const void*>(&upsample_tile_kernel<__nv_bfloat16, 4>)},
      {"resize_bilinear_tiled<f16,4>", reinterpret_cast<const void*>(&upsample_tile_kernel<__half, 4>)},
      {"resize_bilinear_tiled<f32,1>", reinterpret_cast<const void*>(&upsample_tile_kernel<float, 1>)},
      {"resize_bilinear_tiled<bf16,1>", reinterpret_cast<const void*>(&upsample_tile_kernel<__nv_bfloat16, 1>)},
      {"resize_bilinear_tiled<f16,1>", reinterpret_cast<const void*>(&upsample_tile_kernel<__half, 1>)},
      {"resize_bicubic<f32>", reinterpret_cast<const void*>(&resize_kernel<float, 4, 2, 2>)},
      {"resize_bicubic<bf16>", reinterpret_cast<const void*>(&resize_kernel<__nv_bfloat16, 4, 2, 2>)},
      {"resize_bicubic<f16>", reinterpret_cast<const void*>(&resize_kernel<__half, 4, 2, 2>)},
  };
}

}  // namespace dacpp::cuda
