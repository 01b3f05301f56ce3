// Weighted DLT homography, as the official `find_homography_least_squares_weighted_torch` (ray_utils.py) fits it.
//
// For points (x, y) → (u, v) with weights w, each point contributes the two rows
//   √w·[−x, −y, −1, 0, 0, 0, x·u, y·u, u]  and  √w·[0, 0, 0, −x, −y, −1, x·v, y·v, v]
// to A (2N×9); H is the right singular vector of A for its smallest singular value, reshaped row-major to 3×3 and
// divided by H[2][2]. We take the eigenvector of AᵀA (accumulated and diagonalised in double, cyclic Jacobi) for
// its smallest eigenvalue, the same vector up to sign, which the division removes.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/pose_math.h"

namespace dacpp::pipeline {

// Points are interleaved: src_xy[2i], src_xy[2i+1]. Uses the points listed in idx[0..count) (duplicates count
// twice). The result is not finite when H[2][2] is 0 or the system is degenerate; callers check.
Mat3 fit_homography_weighted(const std::vector<double>& src_xy, const std::vector<double>& dst_xy,
                             const std::vector<double>& weights, const int32_t* idx, int64_t count);

// The eigenvector of the symmetric 9×9 matrix m (row-major) for its smallest eigenvalue (unit length).
std::array<double, 9> smallest_eigenvector_sym9(const std::array<double, 81>& m);

}  // namespace dacpp::pipeline
