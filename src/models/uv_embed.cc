#include "models/uv_embed.h"

#include <cmath>
#include <vector>

#include "ops/elementwise.h"

namespace dacpp::models {
namespace {

constexpr float kOmega0 = 100.f;
constexpr float kRatio = 0.1f;

// torch.linspace(start, end, steps) in f32: the first half counts up from start, the second down from end.
float linspace_at(float start, float end, int64_t steps, int64_t i) {
  if (steps == 1) return start;
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int64_t halfway = steps / 2;
  return i < halfway ? start + step * static_cast<float>(i) : end - step * static_cast<float>(steps - i - 1);
}

// One axis' coordinates: linspace(−span·(n−1)/n, +span·(n−1)/n, n), the bounds computed in double (Python floats).
std::vector<float> axis_coords(int64_t n, double span, int64_t first, int64_t count) {
  const double edge = span * static_cast<double>(n - 1) / static_cast<double>(n);
  std::vector<float> r(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    r[static_cast<size_t>(i)] = linspace_at(static_cast<float>(-edge), static_cast<float>(edge), n, first + i);
  return r;
}

}  // namespace

Tensor uv_embedding_host(int64_t c, int64_t h, int64_t w, double aspect, int64_t row0, int64_t rows) {
  DACPP_CHECK(c > 0 && c % 4 == 0 && h > 0 && w > 0 && row0 >= 0 && rows > 0 && row0 + rows <= h,
              ErrorCode::InvalidArgument, "uv embedding: ", c, " channels (need a multiple of 4), rows [", row0, ", ",
              row0 + rows, ") of a ", h, "x", w, " map");
  const double diag = std::sqrt(aspect * aspect + 1.0);
  const std::vector<float> u = axis_coords(w, aspect / diag, 0, w);
  const std::vector<float> v = axis_coords(h, 1.0 / diag, row0, rows);
  const int64_t q = c / 4;
  std::vector<float> omega(static_cast<size_t>(q));
  for (int64_t j = 0; j < q; ++j)
    omega[static_cast<size_t>(j)] = 1.0f / std::pow(kOmega0, static_cast<float>(j) / static_cast<float>(q));
  Tensor host = Tensor::empty({c, rows, w}, DType::F32, "uv_embed");
  float* d = host.data<float>();
  const int64_t plane = rows * w;
  for (int64_t j = 0; j < q; ++j) {
    const float om = omega[static_cast<size_t>(j)];
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t x = 0; x < w; ++x) {
        const float au = u[static_cast<size_t>(x)] * om, av = v[static_cast<size_t>(r)] * om;
        const int64_t at = r * w + x;
        d[j * plane + at] = std::sin(au) * kRatio;
        d[(q + j) * plane + at] = std::cos(au) * kRatio;
        d[(2 * q + j) * plane + at] = std::sin(av) * kRatio;
        d[(3 * q + j) * plane + at] = std::cos(av) * kRatio;
      }
  }
  return host;
}

void add_uv_embedding(RunState& rs, Tensor& x, int64_t h, double aspect, int64_t row0) {
  // x: [N, c, rows, w]
  DACPP_CHECK(x.rank() == 4, ErrorCode::Internal, "uv embedding: map '", x.name(), "' has shape ",
              shape_str(x.shape()), ", expected [N, C, h, w]");
  const Tensor pe = rs.pos_cache.uv(rs.ex.ctx, x.dim(1), h, x.dim(3), aspect, row0, x.dim(2));
  ops::add(rs.ex.ctx, x, pe, x);
}

}  // namespace dacpp::models
