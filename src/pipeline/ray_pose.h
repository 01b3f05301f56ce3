// DA3's ray → pose solver (`--ray-pose`), as the official `utils/ray_utils.py::get_extrinsic_from_camray` and
// `DepthAnything3Net._process_ray_pose_estimation` compute it (spec/models.md §4.7). No model dependency.
//
// Per view, on the h×w ray map of the DualDPT aux head (channels 0–2: world ray direction, not normalised;
// 3–5: ray origin = camera centre) with its confidence w (ray_conf, exp+1 > 1):
//  1. Camera-plane points p = ((2j+1)/w − 1, (2i+1)/h − 1) (an image 2 units wide, fx = fy = 1, cx = cy = 1).
//     Directions d with |d_z| > z_threshold become (d_x/d_z, d_y/d_z); the others keep (d_x, d_y) and get w = 0.
//  2. RANSAC: candidates = the max(8, ⌊0.3·N⌋) highest-weight points (ties: lower index first); one table of
//     `iterations` rows of `sample_size` distinct candidate positions, shared by all views; per row a weighted
//     DLT homography (homography.h); score = Σ w over points whose reprojection error is < reproj_threshold
//     (a NaN error is an outlier); the first row with the highest score wins.
//  3. Refit on all its inliers (≥ 4 needed); above max_refit_points, a random max_refit_points subset of the
//     max(⌊0.95·n⌋, max_refit_points) highest-weight inliers. H ← −H when det H < 0.
//  4. H = Q·L (QL, pose_math.h), L /= L[2][2]; rotation = Q, focal = (1/L00, 1/L11), pp = (L20 + 1, L21 + 1),
//     both in the 2-unit frame. Centre T = Σ w·origin / Σ w (with the step-1 zeroed weights).
//  5. extrinsics = inverse of [Q | T] (world-to-camera 3×4); intrinsics fx = focal_x/2·W, fy = focal_y/2·H,
//     cx = pp_x·W/2, cy = pp_y·H/2 with H×W the model-input image size (not the ray-map size).
// Note (checked against the official code): step 4 reads an upper-triangular K⁻¹ as lower-triangular, so the
// solver recovers R and f exactly only for a centred principal point; for an off-centre one it returns what the
// official formula gives, which differs from the true camera. We reproduce the official result.
//
// Randomness: the official draws its table and refit subset from torch's global RNG. Here both come from a
// std::mt19937_64 seeded with `seed` (same input and seed → same output, on every platform), or the table can be
// given explicitly (`sample_table`, e.g. the one the official run used; the refit subset is then still seeded).
//
// Computation is in double; inputs and outputs are f32. Errors (InvalidArgument, naming the tensor, view and
// numbers): tensors not host f32, wrong shapes, non-finite values, negative confidence, fewer than 8 rays per
// view, a non-positive image size, a malformed sample table, a view with zero total weight, fewer than 4
// inliers, or a degenerate (singular / non-finite) homography.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace dacpp::pipeline {

struct RayPoseOptions {
  uint64_t seed = 0;
  int iterations = 100;            // official n_iter
  int sample_size = 8;             // official num_sample_for_ransac
  double candidate_ratio = 0.3;    // official sample_ratio
  double reproj_threshold = 0.2;   // in the normalised direction plane
  double z_threshold = 1e-4;
  int64_t max_refit_points = 8000;  // official max_inlier_num
  // Optional explicit table, row-major [iterations × sample_size], positions into the candidate list (each row
  // distinct, each < the candidate count). Empty: drawn from `seed`.
  std::vector<int32_t> sample_table;
};

struct RayPoseResult {
  Tensor extrinsics;  // [S, 3, 4] f32, world-to-camera
  Tensor intrinsics;  // [S, 3, 3] f32, pixels of the image_height × image_width model input
};

// ray: [S, h, w, 6] f32 host; ray_conf: [S, h, w] f32 host (≥ 0).
RayPoseResult ray_pose(const Tensor& ray, const Tensor& ray_conf, int image_height, int image_width,
                       const RayPoseOptions& options = {});

}  // namespace dacpp::pipeline
