// Runner: the per-worker state for one Model — op context (threads, oneDNN primitive cache), activation arena,
// and per-shape caches (pos-embed interpolation, bounded LRU). One Runner is used by one thread at a time; run
// several Runners over one shared Model for concurrency. Caches die with the Runner (no global state).
#pragma once

#include <memory>

#include "core/arena.h"
#include "engine/depth_result.h"
#include "engine/model.h"
#include "io/image.h"
#include "models/pos_embed_cache.h"
#include "models/run_state.h"
#include "ops/context.h"

namespace dacpp {

struct RunnerOptions {
  int threads = 0;                // <= 0: all hardware threads
  size_t pos_cache_capacity = 8;  // interpolated pos-embed tables kept (one per input grid)
};

struct RunOptions {
  int size = 0;                  // processing target side; 0 = the model's img.resize_target
  bool resize_to_input = false;  // DA3: resize outputs back to the image size (DA2 always does, as upstream)
  float focal_px = 0;            // DA3 metric: focal length in pixels of the *input image*; 0 = none
};

// Raw network outputs of Runner::forward, as owning host tensors.
struct ForwardResult {
  Tensor depth;  // [B, H, W]
  Tensor sky;    // [B, H, W] or undefined
  models::ForwardDumps dumps;  // per-stage copies when requested ("feat0..3", "rn1..4", "path1", "depth", "sky")
};

class Runner {
 public:
  explicit Runner(std::shared_ptr<const Model> model, const RunnerOptions& options = {});

  // Preprocess (the model's official policy), forward, postprocess. Errors: InvalidArgument for bad options or
  // an unusable image; the op errors of the forward.
  DepthResult run(const io::Image& image, const RunOptions& options = {});

  // input: [B, 3, H, W] f32 host, normalised, H and W multiples of the patch size.
  ForwardResult forward(const Tensor& input, bool dump_stages = false);

  const Model& model() const { return *model_; }
  size_t pos_cache_size() const { return pos_cache_.size(); }
  size_t arena_peak_bytes() const { return arena_.peak_bytes(); }

 private:
  models::ModelOutputs forward_raw(const Tensor& input, models::ForwardDumps* dumps);

  std::shared_ptr<const Model> model_;
  ops::Context ctx_;
  HostArena arena_;
  models::PosEmbedCache pos_cache_;
};

}  // namespace dacpp
