// Runner: the per-worker state for one Model — op context (threads, oneDNN primitive cache), activation arena,
// and per-shape caches (pos-embed interpolation, bounded LRU). One Runner is used by one thread at a time; run
// several Runners over one shared Model for concurrency. Caches die with the Runner (no global state).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/arena.h"
#include "engine/depth_result.h"
#include "engine/limits.h"
#include "engine/graph_cache.h"
#include "engine/model.h"
#include "io/image.h"
#include "models/pos_embed_cache.h"
#include "models/reference_view.h"
#include "models/run_state.h"
#include "ops/context.h"

namespace dacpp {

struct RunnerOptions {
  int threads = 0;                // <= 0: all hardware threads
  size_t pos_cache_capacity = 8;  // interpolated pos-embed tables kept (one per input grid)
  size_t prim_cache_capacity = 512;  // oneDNN plans kept (LRU, per input shape and op)
  Limits limits;                  // resource bounds checked before each run (engine/limits.h)
  bool cuda_graphs = true;        // CUDA: capture each input geometry's forward as a graph (engine/graph_cache.h)
  size_t graph_cache_capacity = 4;  // CUDA graphs kept (LRU, one per input geometry)
  // A one-image forward's transformer blocks in this many row chunks (1-4) on parallel GPU lanes, so that one
  // chunk's kernels fill the multiprocessors another's leave idle (models::RunState::row_chunks). 1: whole rows.
  // The outputs agree up to rounding (a chunk's GEMMs may run other kernels than the whole rows').
  int row_chunks = 1;
};

struct RunOptions {
  int size = 0;                  // processing target side; 0 = the model's img.resize_target
  bool resize_to_input = false;  // DA3: resize outputs back to the image size (DA2 always does, as upstream)
  float focal_px = 0;            // DA3 metric: focal length in pixels of the *input image*; 0 = none
  // DA3 any-view: how the reference view (the world frame) is chosen when there are >= 3 views, and whether to
  // run the ray branch (DepthResult::rays; needs a model converted with the aux head; depth and conf are the same
  // either way).
  models::RefViewStrategy ref_view_strategy = models::RefViewStrategy::SaddleBalanced;
  bool want_rays = false;
  // DA3 any-view: poses from the ray map (pipeline::ray_pose: RANSAC homography, estimated principal point)
  // instead of the camera decoder (the official use_ray_pose=True). Needs the ray head (Unsupported otherwise).
  // The RANSAC draws come from ray_pose_seed: same input and seed, same poses.
  bool ray_pose = false;
  uint64_t ray_pose_seed = 42;
};

// Raw network outputs of Runner::forward, as owning host tensors.
struct ForwardResult {
  Tensor depth;  // [B, H, W]
  Tensor sky;    // [B, H, W] or undefined
  // DA3 any-view (B = the views of one scene), else undefined:
  Tensor conf;        // [S, H, W]
  Tensor rays;        // [S, h, w, 6] when options.want_rays
  Tensor ray_conf;    // [S, h, w]
  Tensor extrinsics;  // [S, 3, 4] world-to-camera
  Tensor intrinsics;  // [S, 3, 3]
  int64_t ref_view = 0;
  models::ForwardDumps dumps;  // per-stage copies when requested ("feat0..3", "rn1..4", "path1", "depth", "sky")
};

class Runner {
 public:
  explicit Runner(std::shared_ptr<const Model> model, const RunnerOptions& options = {});

  // Preprocess (the model's official policy), forward, postprocess. Errors: InvalidArgument for bad options or
  // an unusable image; the op errors of the forward.
  DepthResult run(const io::Image& image, const RunOptions& options = {});

  // DA3 any-view: the images are views of one scene, run in one cross-view pass; result i belongs to image i.
  // Each view is preprocessed alone (the official policy); when the processed sizes differ, all are centre-cropped
  // to the smallest height and width, as the official InputProcessor does. Depth, conf and intrinsics are in
  // pixels of that common processed size (resize_to_input resizes depth and conf only); poses share the frame of
  // the reference view (options.ref_view_strategy). Other models: InvalidArgument unless there is one image.
  std::vector<DepthResult> run_views(const std::vector<io::Image>& images, const RunOptions& options = {});

  // input: [B, 3, H, W] f32 host, normalised, H and W multiples of the patch size (DA3 any-view: B views of one
  // scene). options: only ref_view_strategy, want_rays and ray_pose(_seed) are used.
  ForwardResult forward(const Tensor& input, bool dump_stages = false, const RunOptions& options = {});

  const Model& model() const { return *model_; }
  size_t pos_cache_size() const { return pos_cache_.size(); }
  size_t arena_peak_bytes() const { return arena_.peak_bytes(); }
  // CUDA: input geometries whose forward is held as a captured graph (a forward that cannot be captured, e.g. a
  // host-side reference-view choice for >= 3 views, stays eager). 0 on the CPU.
  size_t captured_graphs() const { return graphs_.captured(); }
  // CUDA: mean GPU milliseconds per replay of the graph of the most recent forward (the network alone: no input
  // or output copies, no host-side finish), over `reps` replays after one warm-up; nullopt on the CPU or when that
  // forward ran eagerly.
  std::optional<double> graph_replay_ms(int reps);

  // Device memory of this runner (GPU runners; zeros on the CPU). live / peak: what its context's allocator has
  // handed out now / at most (activation arena, cuBLASLt workspace, op scratch, per-shape caches; the weights
  // belong to the Model). process_used: the whole GPU's used memory (cudaMemGetInfo), CUDA's own context included.
  struct DeviceMemory {
    size_t live_bytes = 0, peak_bytes = 0, gpu_used_bytes = 0;
  };
  DeviceMemory device_memory();

  // Where the host-clock time of the network forward (forward() minus its result wrapping) goes, for the most
  // recent forward while phase timing is on (all zero otherwise): input = staging the input on the device (the
  // CPU: nothing); launch = enqueueing the network (a graph replay, or the eager ops; on the CPU the whole
  // computation); gpu_wait = waiting for the device to finish it (0 on the CPU); output = the model's host-side
  // finish and the copies back. On a GPU, timing adds one wait for the stream between launch and output (the output
  // copy would wait there anyway).
  struct Phases {
    double input_ms = 0, launch_ms = 0, gpu_wait_ms = 0, output_ms = 0;
  };
  void set_phase_timing(bool on) { time_phases_ = on; }

  // Op-by-op times of the forwards run while `profile` is attached (null detaches; not owned): ops/op_profile.h. On
  // the CPU only (an op on a GPU returns at its launch): Unsupported on a GPU runner.
  void set_op_profile(ops::OpProfile* profile);
  const Phases& last_phases() const { return phases_; }

 private:
  // The network outputs, as host f32 tensors (device outputs are copied back).
  models::ModelOutputs forward_raw(const Tensor& input, models::ForwardDumps* dumps, const RunOptions& options);
  // The model's host-side finish (cameras, the nested alignment; stage dumps to `dumps`), then every output
  // copied to the host.
  models::ModelOutputs outputs_to_host(models::ModelOutputs out, models::ForwardDumps* dumps);
  // The context of the host-side work on the outputs once they are on the host (postprocess's resizes): ctx_ on
  // the CPU; on a GPU a CPU context with the same threads, made at first use (ctx_'s ops refuse host tensors).
  ops::Context& host_ctx();
  // CUDA: eager the first time a geometry is seen, captured as a CUDA graph the second, replayed afterwards.
  models::ModelOutputs forward_graphed(models::RunState& rs, const Tensor& x, const std::string& key);

  std::shared_ptr<const Model> model_;
  Limits limits_;
  ops::Context ctx_;
  std::unique_ptr<ops::Context> host_ctx_;  // GPU runners: host_ctx()
  HostArena arena_;
  std::vector<HostArena> lane_arenas_;  // ops::Lanes' side lanes (GPU only; models::RunState::lane_arenas)
  models::PosEmbedCache pos_cache_;
  GraphCache graphs_;
  bool cuda_graphs_ = true;
  int row_chunks_ = 1;
  bool time_phases_ = false;
  Phases phases_;
};

}  // namespace dacpp
