// RunState: everything a model's forward uses that is not a weight — the op context and activation arena
// (layers::Exec), the Runner's per-shape caches, and an optional sink for per-stage dumps (parity tests).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "layers/exec.h"
#include "models/pos_embed_cache.h"
#include "models/reference_view.h"
#include "ops/transfer.h"

namespace dacpp::models {

// Per-stage copies of intermediate tensors, by name ("feat0".."feat3", "rn1".."rn4", "depth", "sky").
// Host f32 copies (device activations are copied back): they outlive the forward's arena.
struct ForwardDumps {
  std::map<std::string, Tensor> tensors;
  void put(const std::string& name, const Tensor& t) { tensors[name] = t.clone(); }
};

struct RunState {
  layers::Exec& ex;
  PosEmbedCache& pos_cache;
  ForwardDumps* dumps = nullptr;  // null: no dumps
  // Arenas for work on lanes 1..n of ops::Lanes (lane k uses lane_arenas[k - 1]), reset with the forward's; null
  // or empty: no lanes (the CPU, or a caller without them).
  std::vector<HostArena>* lane_arenas = nullptr;
  // The transformer blocks of a one-image forward in this many row chunks (1..kMaxRowChunks), chunk i on lane i
  // (Dinov2::forward): a GPU may then fill one chunk's last partial wave of blocks with another's kernels. 1: whole.
  static constexpr int kMaxRowChunks = 4;
  int row_chunks = 1;
  // DA3 any-view only: how to pick the reference view (S >= 3), and whether to run the DualDPT ray branch.
  RefViewStrategy ref_view = RefViewStrategy::SaddleBalanced;
  bool want_rays = false;
  // DA3 any-view: replace the camera decoder's poses by the ray → pose solver's (pipeline/ray_pose.h, seeded with
  // ray_pose_seed; needs the ray head). The rays are computed for it even when want_rays is false.
  bool ray_pose = false;
  uint64_t ray_pose_seed = 0;

  void dump(const std::string& name, const Tensor& t) const {
    if (dumps != nullptr) dumps->put(name, ops::to_host_f32(ex.ctx, t));
  }
};

}  // namespace dacpp::models
