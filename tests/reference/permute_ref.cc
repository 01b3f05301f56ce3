#include "reference/reference.h"

namespace dacpp::ref {

Tensor permute(const Tensor& x, const std::vector<int>& perm) {
  const int r = x.rank();
  Shape ys(r);
  for (int i = 0; i < r; ++i) ys[i] = x.dim(perm[i]);
  Tensor y = Tensor::empty(ys);
  std::vector<int64_t> xs(r, 1), coord(r);
  for (int d = r - 2; d >= 0; --d) xs[d] = xs[d + 1] * x.dim(d + 1);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rem = i, off = 0;
    for (int d = r - 1; d >= 0; --d) {
      off += (rem % ys[d]) * xs[perm[d]];
      rem /= ys[d];
    }
    y.data<float>()[i] = x.data<float>()[off];
  }
  return y;
}

}  // namespace dacpp::ref
