#include "pipeline/pose_math.h"

#include <cmath>

#include "core/error.h"

namespace dacpp::pipeline {

Mat3 mat3_mul(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      c[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
  return c;
}

Mat3 mat3_transpose(const Mat3& a) {
  return {a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]};
}

double mat3_det(const Mat3& a) {
  return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
         a[2] * (a[3] * a[7] - a[4] * a[6]);
}

Vec3 mat3_apply(const Mat3& a, const Vec3& v) {
  return {a[0] * v[0] + a[1] * v[1] + a[2] * v[2], a[3] * v[0] + a[4] * v[1] + a[5] * v[2],
          a[6] * v[0] + a[7] * v[1] + a[8] * v[2]};
}

Mat34 make_rigid(const Mat3& r, const Vec3& t) {
  return {r[0], r[1], r[2], t[0], r[3], r[4], r[5], t[1], r[6], r[7], r[8], t[2]};
}

Mat34 invert_rigid(const Mat34& m) {
  const Mat3 rt = {m[0], m[4], m[8], m[1], m[5], m[9], m[2], m[6], m[10]};
  const Vec3 t = mat3_apply(rt, {m[3], m[7], m[11]});
  return make_rigid(rt, {-t[0], -t[1], -t[2]});
}

void ql_decompose(const Mat3& a, Mat3& q, Mat3& l, const char* what) {
  // QR (modified Gram-Schmidt, positive diagonal) of A·P, P reversing the columns: A·P = Q̃·R̃, so
  // A = (Q̃·P)·(P·R̃·P) with P·R̃·P lower triangular. The official code flips signs to make diag(L) positive,
  // which is what Gram-Schmidt yields directly.
  double qt[3][3];  // qt[k] = k-th column of Q̃, i.e. built from column 2-k of A
  double r[3][3] = {};
  for (int k = 0; k < 3; ++k) {
    double v[3] = {a[0 * 3 + 2 - k], a[1 * 3 + 2 - k], a[2 * 3 + 2 - k]};
    for (int j = 0; j < k; ++j) {
      r[j][k] = qt[j][0] * v[0] + qt[j][1] * v[1] + qt[j][2] * v[2];
      for (int i = 0; i < 3; ++i) v[i] -= r[j][k] * qt[j][i];
    }
    const double norm = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double scale = std::fabs(a[2 - k]) + std::fabs(a[5 - k]) + std::fabs(a[8 - k]);
    DACPP_CHECK(norm > 1e-12 * (scale > 0 ? scale : 1.0) && std::isfinite(norm), ErrorCode::InvalidArgument,
                what, ": QL decomposition of a singular 3x3 matrix (column ", 2 - k, " is dependent)");
    r[k][k] = norm;
    for (int i = 0; i < 3; ++i) qt[k][i] = v[i] / norm;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      q[i * 3 + j] = qt[2 - j][i];
      l[i * 3 + j] = r[2 - i][2 - j];
    }
}

void require_finite_host_f32(const Tensor& t, int rank, const char* what) {
  DACPP_CHECK(t.defined(), ErrorCode::InvalidArgument, what, ": tensor is not set");
  DACPP_CHECK(t.device().is_cpu(), ErrorCode::InvalidArgument, what, ": must be a host tensor");
  DACPP_CHECK(t.dtype() == DType::F32, ErrorCode::InvalidArgument, what, ": dtype ", dtype_name(t.dtype()),
              ", expected f32");
  DACPP_CHECK(t.rank() == rank, ErrorCode::InvalidArgument, what, ": shape ", shape_str(t.shape()), " has rank ",
              t.rank(), ", expected ", rank);
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    DACPP_CHECK(std::isfinite(p[i]), ErrorCode::InvalidArgument, what, ": non-finite value ", p[i],
                " at flat index ", i, " of shape ", shape_str(t.shape()));
}

Tensor invert_extrinsics(const Tensor& extrinsics) {
  require_finite_host_f32(extrinsics, 3, "invert_extrinsics: extrinsics");
  DACPP_CHECK(extrinsics.dim(1) == 3 && extrinsics.dim(2) == 4, ErrorCode::InvalidArgument,
              "invert_extrinsics: extrinsics shape ", shape_str(extrinsics.shape()), ", expected [S, 3, 4]");
  Tensor out = Tensor::empty(extrinsics.shape(), DType::F32, "extrinsics");
  const float* in = extrinsics.data<float>();
  float* o = out.data<float>();
  for (int64_t s = 0; s < extrinsics.dim(0); ++s) {
    Mat34 m;
    for (int i = 0; i < 12; ++i) m[i] = in[s * 12 + i];
    const Mat34 inv = invert_rigid(m);
    for (int i = 0; i < 12; ++i) o[s * 12 + i] = static_cast<float>(inv[i]);
  }
  return out;
}

Tensor rescale_intrinsics(const Tensor& intrinsics, int from_h, int from_w, int to_h, int to_w) {
  require_finite_host_f32(intrinsics, 3, "rescale_intrinsics: intrinsics");
  DACPP_CHECK(intrinsics.dim(1) == 3 && intrinsics.dim(2) == 3, ErrorCode::InvalidArgument,
              "rescale_intrinsics: intrinsics shape ", shape_str(intrinsics.shape()), ", expected [S, 3, 3]");
  DACPP_CHECK(from_h > 0 && from_w > 0 && to_h > 0 && to_w > 0, ErrorCode::InvalidArgument,
              "rescale_intrinsics: sizes must be positive, got ", from_h, "x", from_w, " -> ", to_h, "x", to_w);
  Tensor out = intrinsics.clone();
  float* k = out.data<float>();
  const double sx = static_cast<double>(to_w) / from_w, sy = static_cast<double>(to_h) / from_h;
  for (int64_t s = 0; s < intrinsics.dim(0); ++s) {
    for (int j = 0; j < 3; ++j) {
      k[s * 9 + j] = static_cast<float>(k[s * 9 + j] * sx);
      k[s * 9 + 3 + j] = static_cast<float>(k[s * 9 + 3 + j] * sy);
    }
  }
  return out;
}

}  // namespace dacpp::pipeline
