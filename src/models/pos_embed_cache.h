// Position-embedding interpolation of DINOv2 (identical in DA2 and DA3, `interpolate_pos_encoding`), and the
// bounded per-Runner cache of its results (design.md §3: caches are owned by a Runner, never global). The same
// cache keeps the per-grid RoPE position tensors of DA3 backbones (built on the host once, then resident on the
// Runner's device).
//
// The stored table covers an M×M patch grid (M = 37). For a gh×gw grid other than exactly M×M, the patch part is
// resized with bicubic (A = −0.75), align_corners=False, no antialias, and a *scale factor* of
// ((gh + offset)/M, (gw + offset)/M): source coordinates are (dst + 0.5)·M/(g + offset) − 0.5, not M/g.
// With offset 0 upstream passes size=(gh, gw) instead, i.e. the plain M/g step.
#pragma once

#include <cstdint>
#include <list>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::models {

// patch_table: [M·M, E] (the pos_embed rows after the cls row) → a new owned [gh·gw, E] tensor.
// Throws InvalidArgument on a bad grid or table shape.
Tensor interpolate_pos_embed(ops::Context& ctx, const Tensor& patch_table, int64_t grid, int64_t gh, int64_t gw,
                             float offset);

class PosEmbedCache {
 public:
  explicit PosEmbedCache(size_t capacity = 8) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The [gh·gw, E] patch table for grid gh×gw, f32 whatever the activation dtype (it is added into the f32
  // residual stream): `patch_table` (f32, on ctx's device) itself when gh == gw == grid, else the interpolated
  // table, computed once and kept (least recently used evicted beyond capacity).
  Tensor get(ops::Context& ctx, const Tensor& patch_table, int64_t grid, int64_t gh, int64_t gw, float offset);

  // RoPE positions [views·(1 + gh·gw), 2] i32 on ctx's device (models::detail::rope_positions: local or global
  // blocks), built on the host and uploaded once per (gh, gw, global, views), kept like the tables (LRU, at most
  // 2·capacity entries: a local and a global tensor per grid).
  Tensor rope_positions(ops::Context& ctx, int64_t gh, int64_t gw, bool global, int64_t views);

  // DA3's UV embedding table [c, rows, w] f32 on ctx's device (uv_embed.h), computed on the host and copied once
  // per geometry, kept like the tables (LRU, at most `capacity` entries and kUvMaxBytes in all; the newest always
  // stays).
  Tensor uv(ops::Context& ctx, int64_t c, int64_t h, int64_t w, double aspect, int64_t row0, int64_t rows);
  static constexpr size_t kUvMaxBytes = size_t{256} << 20;

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  void clear() {
    entries_.clear();
    positions_.clear();
    uv_.clear();
  }

 private:
  struct Entry {
    const void* table;  // identity of the source weights (a Runner may hold several backbones)
    int64_t gh, gw;
    float offset;
    Tensor value;
  };
  struct PosEntry {
    int64_t gh, gw, views;
    bool global;
    Tensor value;
  };
  struct UvEntry {
    int64_t c, h, w, row0, rows;
    double aspect;
    Tensor value;
  };
  size_t capacity_;
  std::list<Entry> entries_;        // most recently used first
  std::list<UvEntry> uv_;           // most recently used first
  std::list<PosEntry> positions_;  // most recently used first
};

}  // namespace dacpp::models
