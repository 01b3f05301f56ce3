#include <cmath>

#include "reference/reference.h"

namespace dacpp::ref {
namespace {

double apply(ops::Unary kind, double v) {
  switch (kind) {
    case ops::Unary::Gelu: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case ops::Unary::Silu: return v / (1 + std::exp(-v));
    case ops::Unary::Relu: return v > 0 ? v : 0;
    case ops::Unary::Exp: return std::exp(v);
    case ops::Unary::Sigmoid: return 1 / (1 + std::exp(-v));
  }
  return 0;
}

// Index of b's element for a's flat index i under right-aligned broadcasting.
int64_t broadcast_index(const Shape& a, const Shape& b, int64_t i) {
  int64_t bi = 0, bstride = 1;
  for (int d = static_cast<int>(a.size()) - 1; d >= 0; --d) {
    const int64_t coord = i % a[d];
    i /= a[d];
    const int db = d - static_cast<int>(a.size() - b.size());
    if (db < 0) continue;
    if (b[db] != 1) bi += coord * bstride;
    bstride *= b[db];
  }
  return bi;
}

template <typename F>
Tensor binary(const Tensor& a, const Tensor& b, F f) {
  Tensor y = Tensor::empty(a.shape());
  for (int64_t i = 0; i < a.numel(); ++i)
    y.data<float>()[i] =
        static_cast<float>(f(double{a.data<float>()[i]}, double{b.data<float>()[broadcast_index(a.shape(), b.shape(), i)]}));
  return y;
}

}  // namespace

Tensor unary(ops::Unary kind, const Tensor& x) {
  Tensor y = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = static_cast<float>(apply(kind, x.data<float>()[i]));
  return y;
}

Tensor add(const Tensor& a, const Tensor& b) {
  return binary(a, b, [](double u, double v) { return u + v; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary(a, b, [](double u, double v) { return u * v; });
}

}  // namespace dacpp::ref
