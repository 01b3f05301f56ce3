// Small camera-pose maths shared by the ray-pose solver, the nested metric alignment and the exporters.
//
// Conventions (spec/models.md §5): extrinsics are 3×4 world-to-camera [R | t] (OpenCV axes), row-major; intrinsics
// are 3×3 row-major in pixels of the processed (model-input) image. c2w = [Rᵀ | −Rᵀt], the inverse of a rigid
// transform as the official `affine_inverse` computes it (it is its own inverse).
#pragma once

#include <array>

#include "core/tensor.h"

namespace dacpp::pipeline {

using Mat3 = std::array<double, 9>;   // row-major
using Mat34 = std::array<double, 12>;  // row-major 3×4
using Vec3 = std::array<double, 3>;

Mat3 mat3_mul(const Mat3& a, const Mat3& b);
Mat3 mat3_transpose(const Mat3& a);
double mat3_det(const Mat3& a);
Vec3 mat3_apply(const Mat3& a, const Vec3& v);

// [R | t] from its parts, and the inverse rigid transform [Rᵀ | −Rᵀt] (w2c ↔ c2w).
Mat34 make_rigid(const Mat3& rotation, const Vec3& translation);
Mat34 invert_rigid(const Mat34& m);

// QL decomposition A = Q·L as the official `ql_decomposition` (ray_utils.py) defines it: Q orthogonal, L lower
// triangular with a positive diagonal (QR of A with its columns reversed). InvalidArgument when A is singular
// (a column of the reversed QR vanishes), naming `what`.
void ql_decompose(const Mat3& a, Mat3& q, Mat3& l, const char* what);

// Input check for the geometry functions: `t` must be a defined host f32 tensor of `rank` dims whose values are
// all finite. InvalidArgument naming `what`, the shape or the first bad index otherwise.
void require_finite_host_f32(const Tensor& t, int rank, const char* what);

// Tensor forms, per view, on host f32 tensors:
//   extrinsics [S, 3, 4] → [S, 3, 4] with each [R | t] replaced by [Rᵀ | −Rᵀt] (w2c ↔ c2w).
Tensor invert_extrinsics(const Tensor& extrinsics);
//   intrinsics [S, 3, 3] of a from_h×from_w image → the same cameras for a to_h×to_w image: row 0 (fx, cx)
//   scaled by to_w/from_w, row 1 (fy, cy) by to_h/from_h, as the official COLMAP export rescales to the
//   original image size. Sizes must be positive.
Tensor rescale_intrinsics(const Tensor& intrinsics, int from_h, int from_w, int to_h, int to_w);

}  // namespace dacpp::pipeline
