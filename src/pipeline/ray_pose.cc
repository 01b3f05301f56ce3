#include "pipeline/ray_pose.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/error.h"
#include "pipeline/homography.h"
#include "pipeline/pose_math.h"

namespace dacpp::pipeline {

namespace {

constexpr const char* kOp = "ray_pose";

// Uniform integer in [0, n) by rejection, identical on every platform (unlike std::uniform_int_distribution).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

// The first k entries of a uniformly random permutation of [0, n) (partial Fisher-Yates).
std::vector<int32_t> random_prefix(std::mt19937_64& rng, int64_t n, int64_t k) {
  std::vector<int32_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[i + uniform_below(rng, n - i)]);
  perm.resize(static_cast<size_t>(k));
  return perm;
}

// One view's points: camera-plane src, direction-plane dst (interleaved xy), weights, origins.
struct ViewPoints {
  std::vector<double> src, dst, weight, origin;
  int64_t size() const { return static_cast<int64_t>(weight.size()); }
};

ViewPoints view_points(const float* ray, const float* conf, int64_t h, int64_t w, double z_threshold) {
  ViewPoints v;
  const int64_t n = h * w;
  v.src.resize(2 * n), v.dst.resize(2 * n), v.weight.resize(n), v.origin.resize(3 * n);
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      const int64_t k = i * w + j;
      const float* r = ray + 6 * k;
      // The official linspace(−1 + 1/w, 1 − 1/w, w) + 1 grid, shifted back by cx = cy = 1.
      v.src[2 * k] = (2.0 * j + 1.0) / w - 1.0;
      v.src[2 * k + 1] = (2.0 * i + 1.0) / h - 1.0;
      const double dz = r[2];
      const bool ok = std::fabs(dz) > z_threshold;  // the camera-plane z is 1
      v.dst[2 * k] = ok ? r[0] / dz : r[0];
      v.dst[2 * k + 1] = ok ? r[1] / dz : r[1];
      v.weight[k] = ok ? conf[k] : 0.0;
      for (int c = 0; c < 3; ++c) v.origin[3 * k + c] = r[3 + c];
    }
  }
  return v;
}

// Indices of the n_cand highest weights, descending (stable: ties keep the lower index first).
std::vector<int32_t> candidates(const std::vector<double>& weight, int64_t n_cand) {
  std::vector<int32_t> order(weight.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return weight[a] > weight[b]; });
  order.resize(static_cast<size_t>(n_cand));
  return order;
}

// Σ weight over points with reprojection error < threshold; fills mask when given.
double inlier_score(const Mat3& hm, const ViewPoints& v, double threshold, std::vector<uint8_t>* mask) {
  double score = 0;
  for (int64_t k = 0; k < v.size(); ++k) {
    const double x = v.src[2 * k], y = v.src[2 * k + 1];
    const double pz = hm[6] * x + hm[7] * y + hm[8];
    const double ex = (hm[0] * x + hm[1] * y + hm[2]) / pz - v.dst[2 * k];
    const double ey = (hm[3] * x + hm[4] * y + hm[5]) / pz - v.dst[2 * k + 1];
    const bool in = std::sqrt(ex * ex + ey * ey) < threshold;  // false for NaN
    if (in) score += v.weight[k];
    if (mask) (*mask)[k] = in;
  }
  return score;
}

std::vector<int32_t> sample_table(const RayPoseOptions& o, int64_t n_cand, std::mt19937_64& rng) {
  const int64_t rows = o.iterations, k = o.sample_size;
  if (o.sample_table.empty()) {
    std::vector<int32_t> table;
    table.reserve(static_cast<size_t>(rows * k));
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<int32_t> row = random_prefix(rng, n_cand, k);
      table.insert(table.end(), row.begin(), row.end());
    }
    return table;
  }
  DACPP_CHECK(static_cast<int64_t>(o.sample_table.size()) == rows * k, ErrorCode::InvalidArgument, kOp,
              ": sample_table has ", o.sample_table.size(), " entries, expected iterations*sample_size = ", rows,
              "*", k);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t a = 0; a < k; ++a) {
      const int32_t e = o.sample_table[r * k + a];
      DACPP_CHECK(e >= 0 && e < n_cand, ErrorCode::InvalidArgument, kOp, ": sample_table row ", r, " entry ", a,
                  " = ", e, " is outside the ", n_cand, " candidates");
      for (int64_t b = 0; b < a; ++b)
        DACPP_CHECK(o.sample_table[r * k + b] != e, ErrorCode::InvalidArgument, kOp, ": sample_table row ", r,
                    " repeats candidate ", e);
    }
  }
  return o.sample_table;
}

// The inlier set of the best-scoring table row, subsampled as the official refit does above max_refit_points.
std::vector<int32_t> best_inliers(const ViewPoints& v, const std::vector<int32_t>& cand,
                                  const std::vector<int32_t>& table, const RayPoseOptions& o,
                                  std::mt19937_64& rng) {
  const int64_t k = o.sample_size;
  std::vector<int32_t> idx(static_cast<size_t>(k));
  double best = -1;
  Mat3 best_h{};
  for (int64_t r = 0; r < o.iterations; ++r) {
    for (int64_t a = 0; a < k; ++a) idx[a] = cand[table[r * k + a]];
    const Mat3 hm = fit_homography_weighted(v.src, v.dst, v.weight, idx.data(), k);
    const double s = inlier_score(hm, v, o.reproj_threshold, nullptr);
    if (s > best) best = s, best_h = hm;
  }
  std::vector<uint8_t> mask(static_cast<size_t>(v.size()));
  inlier_score(best_h, v, o.reproj_threshold, &mask);
  std::vector<int32_t> in;
  for (int64_t i = 0; i < v.size(); ++i)
    if (mask[i]) in.push_back(static_cast<int32_t>(i));
  const int64_t n = static_cast<int64_t>(in.size());
  if (n <= o.max_refit_points) return in;
  std::stable_sort(in.begin(), in.end(), [&](int32_t a, int32_t b) { return v.weight[a] > v.weight[b]; });
  in.resize(static_cast<size_t>(std::max(static_cast<int64_t>(n * 0.95), o.max_refit_points)));
  const std::vector<int32_t> pick = random_prefix(rng, static_cast<int64_t>(in.size()), o.max_refit_points);
  std::vector<int32_t> out(pick.size());
  for (size_t i = 0; i < pick.size(); ++i) out[i] = in[pick[i]];
  return out;
}

// Solves one view into w2c extrinsics (12 floats) and intrinsics (9 floats).
void solve_view(const ViewPoints& v, const std::vector<int32_t>& table, const RayPoseOptions& o, int64_t n_cand,
                int image_h, int image_w, int64_t view, std::mt19937_64& rng, float* ext, float* intr) {
  double wsum = 0;
  for (double w : v.weight) wsum += w;
  DACPP_CHECK(wsum > 0, ErrorCode::InvalidArgument, kOp, ": view ", view,
              " has zero total ray confidence over rays with |dir_z| > ", o.z_threshold);
  const std::vector<int32_t> in = best_inliers(v, candidates(v.weight, n_cand), table, o, rng);
  DACPP_CHECK(in.size() >= 4, ErrorCode::InvalidArgument, kOp, ": view ", view, ": RANSAC found ", in.size(),
              " inlier rays (reprojection threshold ", o.reproj_threshold, "), at least 4 are needed");
  Mat3 hm = fit_homography_weighted(v.src, v.dst, v.weight, in.data(), static_cast<int64_t>(in.size()));
  for (double x : hm)
    DACPP_CHECK(std::isfinite(x), ErrorCode::InvalidArgument, kOp, ": view ", view,
                ": degenerate homography from ", in.size(), " inlier rays");
  if (mat3_det(hm) < 0)
    for (double& x : hm) x = -x;
  Mat3 q, l;
  ql_decompose(hm, q, l, "ray_pose homography");
  for (double& x : l) x /= l[8];
  Vec3 centre{0, 0, 0};
  for (int64_t k = 0; k < v.size(); ++k)
    for (int c = 0; c < 3; ++c) centre[c] += v.origin[3 * k + c] * v.weight[k];
  for (double& c : centre) c /= wsum;
  const Mat34 w2c = invert_rigid(make_rigid(q, centre));
  for (int i = 0; i < 12; ++i) ext[i] = static_cast<float>(w2c[i]);
  const double fx = 1.0 / l[0], fy = 1.0 / l[4], px = l[6] + 1.0, py = l[7] + 1.0;
  const double k9[9] = {fx / 2 * image_w, 0, px * image_w * 0.5, 0, fy / 2 * image_h, py * image_h * 0.5, 0, 0, 1};
  for (int i = 0; i < 9; ++i) intr[i] = static_cast<float>(k9[i]);
}

void validate(const Tensor& ray, const Tensor& conf, int image_h, int image_w, const RayPoseOptions& o) {
  require_finite_host_f32(ray, 4, "ray_pose: ray");
  require_finite_host_f32(conf, 3, "ray_pose: ray_conf");
  DACPP_CHECK(ray.dim(3) == 6, ErrorCode::InvalidArgument, kOp, ": ray shape ", shape_str(ray.shape()),
              ", expected [S, h, w, 6]");
  DACPP_CHECK(conf.dim(0) == ray.dim(0) && conf.dim(1) == ray.dim(1) && conf.dim(2) == ray.dim(2),
              ErrorCode::InvalidArgument, kOp, ": ray_conf shape ", shape_str(conf.shape()),
              " does not match ray shape ", shape_str(ray.shape()));
  DACPP_CHECK(ray.dim(0) >= 1, ErrorCode::InvalidArgument, kOp, ": no views (ray shape ", shape_str(ray.shape()),
              ")");
  DACPP_CHECK(image_h > 0 && image_w > 0, ErrorCode::InvalidArgument, kOp, ": image size ", image_h, "x",
              image_w, " must be positive");
  DACPP_CHECK(o.iterations >= 1 && o.sample_size >= 4 && o.candidate_ratio > 0 && o.candidate_ratio <= 1 &&
                  o.reproj_threshold > 0 && o.z_threshold >= 0 && o.max_refit_points >= 4,
              ErrorCode::InvalidArgument, kOp, ": bad options (iterations ", o.iterations, ", sample_size ",
              o.sample_size, ", candidate_ratio ", o.candidate_ratio, ", reproj_threshold ", o.reproj_threshold,
              ", z_threshold ", o.z_threshold, ", max_refit_points ", o.max_refit_points, ")");
  const int64_t n = ray.dim(1) * ray.dim(2);
  DACPP_CHECK(n >= o.sample_size, ErrorCode::InvalidArgument, kOp, ": ray map ", ray.dim(1), "x", ray.dim(2),
              " has ", n, " rays per view, fewer than the RANSAC sample size ", o.sample_size);
  const float* c = conf.data<float>();
  for (int64_t i = 0; i < conf.numel(); ++i)
    DACPP_CHECK(c[i] >= 0, ErrorCode::InvalidArgument, kOp, ": ray_conf value ", c[i], " at flat index ", i,
                " is negative");
}

}  // namespace

RayPoseResult ray_pose(const Tensor& ray, const Tensor& ray_conf, int image_height, int image_width,
                       const RayPoseOptions& options) {
  validate(ray, ray_conf, image_height, image_width, options);
  const int64_t views = ray.dim(0), h = ray.dim(1), w = ray.dim(2), n = h * w;
  const int64_t n_cand =
      std::min(n, std::max<int64_t>(options.sample_size, static_cast<int64_t>(n * options.candidate_ratio)));
  std::mt19937_64 rng(options.seed);
  const std::vector<int32_t> table = sample_table(options, n_cand, rng);
  RayPoseResult res{Tensor::empty({views, 3, 4}, DType::F32, "extrinsics"),
                    Tensor::empty({views, 3, 3}, DType::F32, "intrinsics")};
  for (int64_t s = 0; s < views; ++s) {
    const ViewPoints v = view_points(ray.data<float>() + s * n * 6, ray_conf.data<float>() + s * n, h, w,
                                     options.z_threshold);
    solve_view(v, table, options, n_cand, image_height, image_width, s, rng, res.extrinsics.data<float>() + s * 12,
               res.intrinsics.data<float>() + s * 9);
  }
  return res;
}

}  // namespace dacpp::pipeline
