#include "models/pos_embed_cache.h"

#include <cmath>

#include "layers/rope2d.h"
#include "models/dinov2_internal.h"
#include "models/uv_embed.h"
#include "ops/copy.h"
#include "ops/permute.h"
#include "ops/resize.h"
#include "ops/transfer.h"

namespace dacpp::models {

Tensor interpolate_pos_embed(ops::Context& ctx, const Tensor& patch_table, int64_t grid, int64_t gh, int64_t gw,
                             float offset) {
  // patch_table: [M·M, E] → [1, E, M, M] → bicubic → [1, E, gh, gw] → [gh·gw, E]
  DACPP_CHECK(grid > 0 && gh > 0 && gw > 0, ErrorCode::InvalidArgument, "pos-embed interpolation: grid ", grid,
              " to ", gh, "x", gw);
  DACPP_CHECK(patch_table.rank() == 2 && patch_table.dim(0) == grid * grid, ErrorCode::InvalidArgument,
              "pos-embed interpolation: table '", patch_table.name(), "' has shape ", shape_str(patch_table.shape()),
              ", expected [", grid * grid, ", E]");
  const int64_t e = patch_table.dim(1);
  Tensor chw = ops::empty(ctx, {1, e, grid, grid}, DType::F32, "pos_embed.chw");
  ops::permute(ctx, patch_table.reshape({1, grid, grid, e}), {0, 3, 1, 2}, chw);
  Tensor up = ops::empty(ctx, {1, e, gh, gw}, DType::F32, "pos_embed.resized");
  // torch passes 1/scale_factor (computed in double) as the source step when a scale factor is given. Upstream's
  // offset is the Python double 0.1; the file stores it as f32, so round it back to 6 decimals first.
  const double off = std::round(static_cast<double>(offset) * 1e6) / 1e6;
  const double sh = off > 0 ? 1.0 / ((static_cast<double>(gh) + off) / static_cast<double>(grid)) : 0.0;
  const double sw = off > 0 ? 1.0 / ((static_cast<double>(gw) + off) / static_cast<double>(grid)) : 0.0;
  ops::resize_bicubic(ctx, chw, up, /*align_corners=*/false, sh, sw);
  Tensor out = ops::empty(ctx, {gh * gw, e}, DType::F32, "pos_embed.interpolated");
  Tensor out4 = out.reshape({1, gh, gw, e});
  ops::permute(ctx, up, {0, 2, 3, 1}, out4);
  return out;
}

Tensor PosEmbedCache::get(ops::Context& ctx, const Tensor& patch_table, int64_t grid, int64_t gh, int64_t gw,
                          float offset) {
  if (gh == grid && gw == grid) return patch_table;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->table == patch_table.raw() && it->gh == gh && it->gw == gw && it->offset == offset) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().value;
    }
  }
  // Interpolated and kept in f32 (the table is f32 on ctx's device): it is added into the f32 residual stream.
  Tensor v = interpolate_pos_embed(ctx, patch_table, grid, gh, gw, offset);
  entries_.push_front(Entry{patch_table.raw(), gh, gw, offset, v});
  while (entries_.size() > capacity_) entries_.pop_back();
  return v;
}

Tensor PosEmbedCache::rope_positions(ops::Context& ctx, int64_t gh, int64_t gw, bool global, int64_t views) {
  for (auto it = positions_.begin(); it != positions_.end(); ++it) {
    if (it->gh == gh && it->gw == gw && it->views == views && it->global == global) {
      positions_.splice(positions_.begin(), positions_, it);
      return positions_.front().value;
    }
  }
  Tensor v = layers::upload_positions(ctx, detail::rope_positions(gh, gw, global, views));
  positions_.push_front(PosEntry{gh, gw, views, global, v});
  while (positions_.size() > 2 * capacity_) positions_.pop_back();
  return v;
}

Tensor PosEmbedCache::uv(ops::Context& ctx, int64_t c, int64_t h, int64_t w, double aspect, int64_t row0,
                         int64_t rows) {
  for (auto it = uv_.begin(); it != uv_.end(); ++it) {
    if (it->c == c && it->h == h && it->w == w && it->row0 == row0 && it->rows == rows && it->aspect == aspect) {
      uv_.splice(uv_.begin(), uv_, it);
      return uv_.front().value;
    }
  }
  Tensor host = uv_embedding_host(c, h, w, aspect, row0, rows);
  Tensor v = host;
  if (!ctx.device().is_cpu()) {
    v = ops::empty(ctx, host.shape(), DType::F32, "uv_embed");
    ops::copy(ctx, host, v);  // synchronous: host may go
  }
  uv_.push_front(UvEntry{c, h, w, row0, rows, aspect, v});
  size_t bytes = 0;
  for (const UvEntry& e : uv_) bytes += e.value.nbytes();
  while (uv_.size() > 1 && (uv_.size() > capacity_ || bytes > kUvMaxBytes)) {
    bytes -= uv_.back().value.nbytes();
    uv_.pop_back();
  }
  return v;
}

}  // namespace dacpp::models
