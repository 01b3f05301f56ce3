#include "layers/rope2d.h"

#include <algorithm>
#include <cmath>

namespace dacpp::layers {
namespace {

// cos/sin tables [max_pos, d] for one half of width d, as torch builds them (f32 throughout).
void build_tables(float base, int64_t d, int64_t max_pos, std::vector<float>& cos_t, std::vector<float>& sin_t) {
  const int64_t nf = d / 2;
  std::vector<float> inv(static_cast<size_t>(nf));
  for (int64_t j = 0; j < nf; ++j) {
    const float e = static_cast<float>(2 * j) / static_cast<float>(d);
    inv[static_cast<size_t>(j)] = 1.0f / std::pow(base, e);
  }
  cos_t.assign(static_cast<size_t>(max_pos * d), 0.f);
  sin_t.assign(static_cast<size_t>(max_pos * d), 0.f);
  for (int64_t p = 0; p < max_pos; ++p) {
    for (int64_t j = 0; j < d; ++j) {
      const float a = static_cast<float>(p) * inv[static_cast<size_t>(j % nf)];
      cos_t[static_cast<size_t>(p * d + j)] = std::cos(a);
      sin_t[static_cast<size_t>(p * d + j)] = std::sin(a);
    }
  }
}

// Rotates one half t[0..d) of one token in place at position p.
void rotate(float* t, int64_t d, const float* c, const float* s) {
  const int64_t h = d / 2;
  for (int64_t j = 0; j < h; ++j) {
    const float t1 = t[j], t2 = t[j + h];
    t[j] = t1 * c[j] - t2 * s[j];
    t[j + h] = t2 * c[j + h] + t1 * s[j + h];
  }
}

}  // namespace

void Rope2d::apply(Exec& ex, Tensor& x, const std::vector<int32_t>& pos_yx) const {
  // x: [B, H, N, D]
  DACPP_CHECK(x.rank() == 4, ErrorCode::InvalidArgument, "rope2d: '", x.name(), "' has shape ",
              shape_str(x.shape()), ", expected [B, H, N, D]");
  const int64_t bh = x.dim(0) * x.dim(1), n = x.dim(2), dd = x.dim(3);
  DACPP_CHECK(dd % 4 == 0, ErrorCode::InvalidArgument, "rope2d: head dim ", dd, " of '", x.name(),
              "' is not a multiple of 4");
  DACPP_CHECK(static_cast<int64_t>(pos_yx.size()) == 2 * n, ErrorCode::InvalidArgument, "rope2d: ",
              pos_yx.size(), " position values for ", n, " tokens of '", x.name(), "'");
  int32_t max_pos = 0;
  for (int32_t p : pos_yx) {
    DACPP_CHECK(p >= 0, ErrorCode::InvalidArgument, "rope2d: negative position ", p);
    max_pos = std::max(max_pos, p);
  }
  const int64_t d = dd / 2;
  std::vector<float> cos_t, sin_t;
  build_tables(base_, d, int64_t{max_pos} + 1, cos_t, sin_t);
  float* data = x.data<float>();
  ex.ctx.pool().parallel_for(bh * n, /*grain=*/64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t tok = r % n;
      float* t = data + r * dd;
      const int64_t py = pos_yx[static_cast<size_t>(2 * tok)], px = pos_yx[static_cast<size_t>(2 * tok + 1)];
      rotate(t, d, &cos_t[static_cast<size_t>(py * d)], &sin_t[static_cast<size_t>(py * d)]);
      rotate(t + d, d, &cos_t[static_cast<size_t>(px * d)], &sin_t[static_cast<size_t>(px * d)]);
    }
  });
}

}  // namespace dacpp::layers
