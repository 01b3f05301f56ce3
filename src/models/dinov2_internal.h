// Helpers shared by the single-view (dinov2.cc) and any-view (dinov2_views.cc) backbone forwards.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace dacpp::models::detail {

// Rows [row, row + shape[0]) of a row-major tensor whose last dim matches, as a view (no copy, any device).
inline Tensor rows_view(const Tensor& t, int64_t row, const Shape& shape) {
  return t.offset_view(row * t.dim(-1), shape);
}

// RoPE positions (row, column) of one view's 1 + gh·gw tokens: slot 0 at (0, 0); a patch (r, c) at (r + 1, c + 1)
// in local blocks, at (1, 1) in global blocks (upstream `pos_nodiff`), repeated `views` times.
inline std::vector<int32_t> rope_positions(int64_t gh, int64_t gw, bool global, int64_t views = 1) {
  const int64_t n = 1 + gh * gw;
  std::vector<int32_t> p(static_cast<size_t>(2 * n * views), 0);
  for (int64_t v = 0; v < views; ++v)
    for (int64_t r = 0; r < gh; ++r)
      for (int64_t c = 0; c < gw; ++c) {
        const size_t i = static_cast<size_t>(2 * (v * n + 1 + r * gw + c));
        p[i] = global ? 1 : static_cast<int32_t>(r + 1);
        p[i + 1] = global ? 1 : static_cast<int32_t>(c + 1);
      }
  return p;
}

}  // namespace dacpp::models::detail
