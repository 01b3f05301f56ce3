#include "pipeline/homography.h"

#include <cmath>

namespace dacpp::pipeline {

namespace {

// One Jacobi rotation zeroing a[p][q]; v accumulates the eigenvectors as columns.
void jacobi_rotate(std::array<double, 81>& a, std::array<double, 81>& v, int p, int q) {
  const double apq = a[p * 9 + q];
  const double theta = (a[q * 9 + q] - a[p * 9 + p]) / (2.0 * apq);
  const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
  const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
  for (int k = 0; k < 9; ++k) {  // columns p, q
    const double akp = a[k * 9 + p], akq = a[k * 9 + q];
    a[k * 9 + p] = c * akp - s * akq;
    a[k * 9 + q] = s * akp + c * akq;
  }
  for (int k = 0; k < 9; ++k) {  // rows p, q
    const double apk = a[p * 9 + k], aqk = a[q * 9 + k];
    a[p * 9 + k] = c * apk - s * aqk;
    a[q * 9 + k] = s * apk + c * aqk;
  }
  a[p * 9 + q] = a[q * 9 + p] = 0.0;  // zero by construction; drop the rounding residue
  for (int k = 0; k < 9; ++k) {
    const double vkp = v[k * 9 + p], vkq = v[k * 9 + q];
    v[k * 9 + p] = c * vkp - s * vkq;
    v[k * 9 + q] = s * vkp + c * vkq;
  }
}

// a[p][q] is below rounding next to both diagonal entries: rotating would change nothing.
bool negligible(const std::array<double, 81>& a, int p, int q) {
  const double g = 100.0 * std::fabs(a[p * 9 + q]);
  return std::fabs(a[p * 9 + p]) + g == std::fabs(a[p * 9 + p]) &&
         std::fabs(a[q * 9 + q]) + g == std::fabs(a[q * 9 + q]);
}

}  // namespace

std::array<double, 9> smallest_eigenvector_sym9(const std::array<double, 81>& m) {
  std::array<double, 81> a = m, v{};
  for (int i = 0; i < 9; ++i) v[i * 9 + i] = 1.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0;
    for (int p = 0; p < 9; ++p)
      for (int q = p + 1; q < 9; ++q) off += std::fabs(a[p * 9 + q]);
    if (!(off > 0.0)) break;  // diagonal, or NaN
    for (int p = 0; p < 9; ++p)
      for (int q = p + 1; q < 9; ++q) {
        if (a[p * 9 + q] == 0.0) continue;
        if (negligible(a, p, q)) a[p * 9 + q] = a[q * 9 + p] = 0.0;
        else jacobi_rotate(a, v, p, q);
      }
  }
  int best = 0;
  for (int i = 1; i < 9; ++i)
    if (a[i * 9 + i] < a[best * 9 + best]) best = i;
  std::array<double, 9> out;
  for (int k = 0; k < 9; ++k) out[k] = v[k * 9 + best];
  return out;
}

Mat3 fit_homography_weighted(const std::vector<double>& src_xy, const std::vector<double>& dst_xy,
                             const std::vector<double>& weights, const int32_t* idx, int64_t count) {
  std::array<double, 81> ata{};
  for (int64_t n = 0; n < count; ++n) {
    const int32_t i = idx[n];
    const double x = src_xy[2 * i], y = src_xy[2 * i + 1], u = dst_xy[2 * i], v = dst_xy[2 * i + 1];
    const double w = weights[i];  // (√w)² of the official rows
    const double r1[9] = {-x, -y, -1, 0, 0, 0, x * u, y * u, u};
    const double r2[9] = {0, 0, 0, -x, -y, -1, x * v, y * v, v};
    for (int p = 0; p < 9; ++p)
      for (int q = p; q < 9; ++q) ata[p * 9 + q] += w * (r1[p] * r1[q] + r2[p] * r2[q]);
  }
  for (int p = 0; p < 9; ++p)
    for (int q = 0; q < p; ++q) ata[p * 9 + q] = ata[q * 9 + p];
  const std::array<double, 9> h = smallest_eigenvector_sym9(ata);
  Mat3 out;
  for (int k = 0; k < 9; ++k) out[k] = h[k] / h[8];
  return out;
}

}  // namespace dacpp::pipeline
