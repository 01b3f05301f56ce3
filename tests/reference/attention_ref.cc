#include <cmath>
#include <vector>

#include "reference/reference.h"

namespace dacpp::ref {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale) {
  const int64_t b = q.dim(0), h = q.dim(1), nq = q.dim(2), d = q.dim(3), nk = k.dim(2);
  Tensor out = Tensor::empty({b, nq, h, d});
  const float* qp = q.data<float>();
  const float* kp = k.data<float>();
  const float* vp = v.data<float>();
  float* op = out.data<float>();
  std::vector<double> s(nk);
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t hi = 0; hi < h; ++hi) {
      const float* qh = qp + (bi * h + hi) * nq * d;
      const float* kh = kp + (bi * h + hi) * nk * d;
      const float* vh = vp + (bi * h + hi) * nk * d;
      for (int64_t i = 0; i < nq; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < nk; ++j) {
          double dot = 0;
          for (int64_t l = 0; l < d; ++l) dot += static_cast<double>(qh[i * d + l]) * kh[j * d + l];
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        for (int64_t j = 0; j < nk; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t l = 0; l < d; ++l) {
          double acc = 0;
          for (int64_t j = 0; j < nk; ++j) acc += s[j] / sum * vh[j * d + l];
          op[((bi * nq + i) * h + hi) * d + l] = static_cast<float>(acc);
        }
      }
    }
  }
  return out;
}

}  // namespace dacpp::ref
