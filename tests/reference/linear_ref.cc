#include <cmath>

#include "reference/reference.h"

namespace dacpp::ref {

namespace {

double activate(double v, ops::Activation act) {
  if (act == ops::Activation::Relu) return v > 0 ? v : 0;
  if (act == ops::Activation::Gelu) return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  return v;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias, ops::Activation act) {
  const int64_t n = w.dim(0), k = w.dim(1), m = x.numel() / k;
  Shape ys = x.shape();
  ys.back() = n;
  Tensor y = Tensor::empty(ys);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias.defined() ? bias.data<float>()[j] : 0.0;
      for (int64_t l = 0; l < k; ++l) acc += static_cast<double>(xp[i * k + l]) * wp[j * k + l];
      yp[i * n + j] = static_cast<float>(activate(acc, act));
    }
  }
  return y;
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  const int64_t c = x.dim(-1), rows = x.numel() / c;
  Tensor y = Tensor::empty(x.shape());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < c; ++i) mean += xp[r * c + i];
    mean /= c;
    for (int64_t i = 0; i < c; ++i) var += (xp[r * c + i] - mean) * (xp[r * c + i] - mean);
    var /= c;
    for (int64_t i = 0; i < c; ++i)
      yp[r * c + i] = static_cast<float>((xp[r * c + i] - mean) / std::sqrt(var + eps) * gamma.data<float>()[i] +
                                         beta.data<float>()[i]);
  }
  return y;
}

}  // namespace dacpp::ref
