// The UV position embedding that DA3's DualDPT adds to its feature maps (model/utils/head_utils.py,
// create_uv_grid + position_grid_to_embed, ×0.1; spec/models.md §4.4).
//
// For a map of h'×w' and image aspect r = W/H: u runs on linspace(−s_x·(w'−1)/w', +s_x·(w'−1)/w', w') with
// s_x = r/√(r²+1), v likewise over h' with s_y = 1/√(r²+1). Channel layout for C channels (C % 4 == 0), q = C/4,
// ω_j = 100^(−j/q): [sin(u·ω) | cos(u·ω) | sin(v·ω) | cos(v·ω)], each q wide, all f32 as torch computes them.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "models/run_state.h"

namespace dacpp::models {

// Rows [row0, row0 + rows) of the embedding of a c × h × w map, ×0.1, as a new owning host f32 tensor
// [c, rows, w]. Throws InvalidArgument when c % 4 != 0 or the rows fall outside [0, h).
Tensor uv_embedding_host(int64_t c, int64_t h, int64_t w, double aspect, int64_t row0, int64_t rows);

// x: [N, c, rows, w] (any activation dtype), rows [row0, row0 + rows) of an h-row map: x += embedding (f32, in
// place). The table comes from the Runner's cache (PosEmbedCache::uv): built and copied to the device once per
// geometry, so a forward does no host work or host-to-device copy for it (and stays capturable as a CUDA graph).
void add_uv_embedding(RunState& rs, Tensor& x, int64_t h, double aspect, int64_t row0 = 0);

}  // namespace dacpp::models
