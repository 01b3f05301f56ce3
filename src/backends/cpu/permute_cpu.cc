// permute: y = x.permute(perm).contiguous(). y's dims are merged where x is contiguous across them, then each
// y row (last merged dim) gathers from x with one stride. Parallel over y rows.
#include <vector>

#include "backends/cpu/cpu_ops.h"

namespace dacpp::cpu {

void permute(CpuContext& c, const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  if (y.numel() == 0) return;
  const int rank = x.rank();
  std::vector<int64_t> xs(rank, 1);
  for (int d = rank - 2; d >= 0; --d) xs[d] = xs[d + 1] * x.dim(d + 1);
  std::vector<int64_t> size, stride;  // y's merged dims and x's stride along each
  for (int i = 0; i < rank; ++i) {
    const int64_t n = x.dim(perm[i]), s = xs[perm[i]];
    if (n == 1) continue;
    if (!size.empty() && stride.back() == s * n) {
      size.back() *= n;
      stride.back() = s;
      continue;
    }
    size.push_back(n);
    stride.push_back(s);
  }
  if (size.empty()) {
    size.push_back(1);
    stride.push_back(1);
  }
  const int outer = static_cast<int>(size.size()) - 1;
  const int64_t inner = size.back(), inner_s = stride.back(), rows = y.numel() / inner;
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  c.pool().parallel_for(rows, std::max<int64_t>(1, 4096 / inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t off = 0, rem = r;
      for (int d = outer - 1; d >= 0; --d) {
        off += (rem % size[d]) * stride[d];
        rem /= size[d];
      }
      const float* src = xp + off;
      float* dst = yp + r * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * inner_s];
    }
  });
}

}  // namespace dacpp::cpu
