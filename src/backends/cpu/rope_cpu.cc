// rope2d on the CPU (contract: ops/rope.h). Per token, the cos/sin of its row and column angles are computed once
// (table [N, D], f32 as torch builds them: inv_j = 1 / base^(2j/d), angle = p · inv_j), then every (batch, head)
// row of that token is rotated in place.
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_ops.h"

namespace dacpp::cpu {
namespace {

// Rotates one half t[0..d) in place: (t1, t2) <- (t1·c − t2·s, t2·c + t1·s) over j < d/2.
void rotate(float* t, int64_t d, const float* c, const float* s) {
  const int64_t h = d / 2;
  for (int64_t j = 0; j < h; ++j) {
    const float t1 = t[j], t2 = t[j + h];
    t[j] = t1 * c[j] - t2 * s[j];
    t[j + h] = t2 * c[j] + t1 * s[j];
  }
}

}  // namespace

void rope2d(CpuContext& c, Tensor& x, const Tensor& positions, float base) {
  const int64_t bh = x.dim(0) * x.dim(1), n = x.dim(2), dd = x.dim(3), d = dd / 2, nf = d / 2;
  const int32_t* pos = positions.data<int32_t>();
  for (int64_t i = 0; i < 2 * n; ++i)
    DACPP_CHECK(pos[i] >= 0, ErrorCode::InvalidArgument, "rope2d: positions[", i / 2, ", ", i % 2, "] = ", pos[i],
                " is negative");
  if (x.numel() == 0) return;
  std::vector<float> inv(static_cast<size_t>(nf));
  for (int64_t j = 0; j < nf; ++j)
    inv[static_cast<size_t>(j)] = 1.0f / std::pow(base, static_cast<float>(2 * j) / static_cast<float>(d));
  // cos_t / sin_t [N, 2, nf]: the row half, then the column half of each token.
  std::vector<float> cos_t(static_cast<size_t>(n * 2 * nf)), sin_t(cos_t.size());
  for (int64_t i = 0; i < 2 * n; ++i) {
    for (int64_t j = 0; j < nf; ++j) {
      const float a = static_cast<float>(pos[i]) * inv[static_cast<size_t>(j)];
      cos_t[static_cast<size_t>(i * nf + j)] = std::cos(a);
      sin_t[static_cast<size_t>(i * nf + j)] = std::sin(a);
    }
  }
  float* data = x.data<float>();
  c.pool().parallel_for(bh * n, /*grain=*/64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t tok = r % n;
      float* t = data + r * dd;
      rotate(t, d, &cos_t[static_cast<size_t>(2 * tok * nf)], &sin_t[static_cast<size_t>(2 * tok * nf)]);
      rotate(t + d, d, &cos_t[static_cast<size_t>((2 * tok + 1) * nf)],
             &sin_t[static_cast<size_t>((2 * tok + 1) * nf)]);
    }
  });
}

}  // namespace dacpp::cpu
