// add / mul with broadcasting (own loops, parallel over rows).
// Broadcasting collapses a's dims into runs over which b's offset is affine, leaving an inner run whose
// b-stride is 1 (same-shape tail) or 0 (broadcast scalar per row).
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_ops.h"

namespace dacpp::cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// a's dims (size > 1 only) paired with b's element stride along them (0 where b broadcasts), merged where the
// b offset stays affine. Innermost last.
struct Collapsed {
  std::vector<int64_t> size, bstride;
};

Collapsed collapse(const Shape& a, const Shape& b) {
  const int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
  std::vector<int64_t> bs(ra, 0);
  int64_t stride = 1;
  for (int d = ra - 1; d >= 0; --d) {
    const int db = d - (ra - rb);
    if (db < 0) break;
    bs[d] = b[db] == 1 ? 0 : stride;
    stride *= b[db];
  }
  Collapsed out;
  for (int d = 0; d < ra; ++d) {
    if (a[d] == 1) continue;
    if (!out.size.empty() && out.bstride.back() == bs[d] * a[d]) {
      out.size.back() *= a[d];
      out.bstride.back() = bs[d];
      continue;
    }
    out.size.push_back(a[d]);
    out.bstride.push_back(bs[d]);
  }
  if (out.size.empty()) {
    out.size.push_back(1);
    out.bstride.push_back(0);
  }
  return out;
}

template <typename F>
void map_binary(CpuContext& c, const Tensor& a, const Tensor& b, Tensor& y, F f) {
  const Collapsed g = collapse(a.shape(), b.shape());
  const int outer_dims = static_cast<int>(g.size.size()) - 1;
  const int64_t inner = g.size.back(), inner_bs = g.bstride.back();
  const int64_t rows = a.numel() / inner;
  const float* ap = static_cast<const float*>(a.raw());
  const float* bp = static_cast<const float*>(b.raw());
  float* yp = static_cast<float*>(y.raw());
  c.pool().parallel_for(rows, std::max<int64_t>(1, kGrain / inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t boff = 0, rem = r;
      for (int d = outer_dims - 1; d >= 0; --d) {
        boff += (rem % g.size[d]) * g.bstride[d];
        rem /= g.size[d];
      }
      const float* ar = ap + r * inner;
      const float* br = bp + boff;
      float* yr = yp + r * inner;
      if (inner_bs == 0) {
        const float bv = br[0];
        for (int64_t i = 0; i < inner; ++i) yr[i] = f(ar[i], bv);
      } else {
        for (int64_t i = 0; i < inner; ++i) yr[i] = f(ar[i], br[i]);
      }
    }
  });
}

}  // namespace

void binary(CpuContext& c, BinaryKind kind, const Tensor& a, const Tensor& b, Tensor& y) {
  if (a.numel() == 0) return;
  if (kind == BinaryKind::Add) return map_binary(c, a, b, y, [](float u, float v) { return u + v; });
  map_binary(c, a, b, y, [](float u, float v) { return u * v; });
}

void add_scaled(CpuContext& c, const Tensor& x, const Tensor& a, const Tensor& gamma, Tensor& y) {
  if (x.numel() == 0) return;
  const int64_t cols = gamma.defined() ? gamma.numel() : x.numel();
  const int64_t rows = x.numel() / cols;
  const float* xp = static_cast<const float*>(x.raw());
  const float* ap = static_cast<const float*>(a.raw());
  const float* gp = gamma.defined() ? static_cast<const float*>(gamma.raw()) : nullptr;
  float* yp = static_cast<float*>(y.raw());
  c.pool().parallel_for(rows, std::max<int64_t>(1, kGrain / cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = xp + r * cols;
      const float* ar = ap + r * cols;
      float* yr = yp + r * cols;
      if (gp) {
        for (int64_t i = 0; i < cols; ++i) yr[i] = xr[i] + ar[i] * gp[i];
      } else {
        for (int64_t i = 0; i < cols; ++i) yr[i] = xr[i] + ar[i];
      }
    }
  });
}

void embed_tokens(CpuContext& c, const Tensor& lead, const Tensor& table, const Tensor& patches, Tensor& tokens) {
  if (tokens.numel() == 0) return;
  const int64_t p = patches.dim(1), e = patches.dim(2), l = lead.defined() ? lead.dim(0) : 0, n = l + p;
  const float* lp = lead.defined() ? static_cast<const float*>(lead.raw()) : nullptr;
  const float* tp = static_cast<const float*>(table.raw());
  const float* pp = static_cast<const float*>(patches.raw());
  float* yp = static_cast<float*>(tokens.raw());
  c.pool().parallel_for(tokens.dim(0) * n, std::max<int64_t>(1, kGrain / e), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t img = r / n, row = r % n;
      float* yr = yp + r * e;
      if (row < l) {
        std::copy_n(lp + row * e, e, yr);
        continue;
      }
      const float* tr = tp + (row - l) * e;
      const float* pr = pp + (img * p + row - l) * e;
      for (int64_t i = 0; i < e; ++i) yr[i] = tr[i] + pr[i];
    }
  });
}

}  // namespace dacpp::cpu
