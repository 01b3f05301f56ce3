// CudaContext: the CUDA backend state of one ops::Context (design.md §2): the device, one non-blocking stream, the
// cuBLASLt handle and its workspace, and the caching device allocator. Owned by an ops::Context (hence by a Runner);
// not shared by threads that run concurrently. Every op on this context is enqueued on stream(): the context's
// stream, or while a CUDA graph is captured with lanes forked (ops::Lanes), the current lane's own stream.
//
// Include only from src/backends/cuda/ (this header includes the CUDA runtime and cuBLASLt headers).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/cuda/device_allocator.h"
#include "core/dtype.h"

namespace dacpp {
class Tensor;
}

namespace dacpp::cuda {

class GemmPlans;


class CudaContext {
 public:
  // Selects device `device_index`, creates the stream, the cuBLASLt handle and a 32 MiB workspace.
  // Throws Backend when the device does not exist or the driver fails (message has the CUDA error text),
  // OutOfMemory when the workspace cannot be allocated.
  explicit CudaContext(int device_index);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device_index() const { return device_index_; }
  // The stream ops enqueue on: the context's own, or the current lane's while lanes run concurrently.
  cudaStream_t stream() const { return concurrent_ ? lanes_[static_cast<size_t>(lane_)].stream : stream_; }
  cublasLtHandle_t lt() const { return lt_; }
  // cuBLASLt's workspace for a call needing `bytes` (<= workspace_bytes()): the context's 32 MiB on lane 0, the
  // lane's own (grown to what its GEMMs need) on the others. Throws OutOfMemory.
  void* workspace(size_t bytes);
  // The context's 32 MiB workspace: the most any GEMM plan asks for (the heuristic's limit), and what tuning uses
  // (tuning never runs while lanes are concurrent: nothing is timed during a capture).
  void* main_workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  DeviceAllocator& allocator() { return *allocator_; }
  // Compute capability as major*10+minor: 90 on H100/H200, 80 on A100, 89 on L4/4090.
  int sm_version() const { return sm_version_; }
  // "NVIDIA H200" (cudaDeviceProp::name).
  std::string device_name() const { return device_name_; }
  // Number of streaming multiprocessors (for grid sizing).
  int sm_count() const { return sm_count_; }
  // Whether the Hopper warpgroup-MMA kernels run here: an sm_90 GPU and a build with an sm_90a image
  // (sm90a_image_runs, checked once when the context is made).
  bool hopper_mma() const { return hopper_mma_; }
  // Whether launch_kernel (cuda_common.cuh) launches the forward's kernels as programmatic dependents of the kernel
  // before them: on sm_90 and later unless DACPP_PDL=0.
  bool pdl() const { return pdl_; }
  // Whether launch_kernel's next launch on the current stream is a programmatic dependent: pdl(), except for the
  // first launch on a lane after it was entered or joined (its dependency then comes through an event, and stays a
  // full one). Consumes that exception.
  bool pdl_launch() const {
    bool& plain = plain_next_[static_cast<size_t>(concurrent_ ? lane_ : 0)];
    const bool programmatic = pdl_ && !plain;
    plain = false;
    return programmatic;
  }

  // The cuBLASLt plans of this context (gemm.h).
  GemmPlans& gemm_plans() { return *gemm_plans_; }

  // Scratch device memory for one op's temporaries (an im2col matrix, a GEMM result before its scatter): >= bytes,
  // 256-byte aligned, valid until the next scratch() call on this context's current lane. Ops of one lane run in
  // stream order, so one buffer per lane serves them all. A larger request allocates a larger buffer; an earlier
  // buffer that a CUDA graph captured since its allocation may refer to is kept until the context dies (never freed
  // under a graph), one that no capture saw is released (to the caching allocator). Throws OutOfMemory naming
  // `what`.
  void* scratch(size_t bytes, const char* what);
  size_t scratch_bytes() const;  // every lane's every generation (side lanes' workspaces included), for reports

  // Lanes: independent branches of one forward (ops::Lanes: the DPT head's reassemble stages). Lane 0 is the
  // context's stream; each lane has its own scratch and cuBLASLt workspace, so ops on different lanes never share a
  // temporary. fork_lanes(n) makes lanes 0..n-1 available: while a CUDA graph is being captured lanes 1..n-1 get
  // streams of their own (the graph's parallel branches); otherwise they stay on the context's stream, in enqueue
  // order (the first, eager pass tunes its kernels: timings must not overlap). set_lane selects the lane ops
  // enqueue on; entering lane k > 0 makes its next work wait for lane 0's so far. join_lane(k) makes lane 0's later
  // work wait for lane k's so far; end_lanes joins every lane and returns to lane 0 (no-throw, also after an
  // error: a failure is left to the capture's end to report).
  static constexpr int kLanes = 4;
  bool lanes_enabled() const { return lanes_enabled_; }  // unless DACPP_LANES=0
  // Lane 0's stream has the greatest priority, the side lanes' the least. A graph keeps its kernels' stream
  // priorities (lane 0's blocks take free multiprocessors first) when a fork during its capture asked for it
  // (lane0_first: lane 0 holds the critical path) — unless DACPP_LANE_PRIORITY=0 (for A/B runs). Same-command A/B
  // (docs/PERFORMANCE.md, version 1.16): DA2-S / B ~1 % faster with it, DA3's DualDPT head ~1 % slower, so only
  // DptHead asks.
  void fork_lanes(int count, bool lane0_first);
  // Whether the capture now ending asked for node priorities; resets the request.
  bool take_capture_priority() { return std::exchange(capture_priority_, false); }
  void set_lane(int lane);
  void join_lane(int lane);
  void end_lanes() noexcept;

  // Called when a CUDA graph capture on this context begins and ends (graph.cc): buffers in use from the
  // beginning on may be in a graph.
  void note_capture(bool active) {
    capturing_ = active;
    if (active) capture_priority_ = false;
    ++capture_epoch_;
  }

  // `v` (a device vector of f32, e.g. a bias) converted to `dtype`, computed once per (tensor storage, dtype) and
  // kept while the storage lives: weights are converted on first use instead of on every call. A tensor without
  // owned storage (an activation view) is converted into scratch() each time.
  std::shared_ptr<const void> converted(const Tensor& v, DType dtype);
  // A device buffer of `bytes` derived from weight `w` by `fill(dst)` (work enqueued on stream()), e.g. the direct
  // 3×3 conv's tap-major weight layout: built once per (w's storage, kind) and kept while that storage lives. `w2`,
  // when given, is a second source (e.g. a 1×1 conv folded into w's layout): the buffer is then kept per pair while
  // both storages live. A source without owned storage (an activation, a borrowed view; keeps() false) gets the
  // buffer rebuilt on every call, at `borrowed_at` where given — room the caller carved out of its own scratch()
  // — else in scratch(), valid for an op that does not call scratch() itself.
  std::shared_ptr<const void> derived(const Tensor& w, int kind, size_t bytes, const std::function<void(void*)>& fill,
                                      const char* what, const Tensor* w2 = nullptr, void* borrowed_at = nullptr);
  // Whether derived() keeps what it makes from these sources (all own their storage); otherwise a caller that uses
  // scratch() itself carves room for it there and passes it as `borrowed_at`.
  static bool keeps(const Tensor& w, const Tensor* w2 = nullptr) {
    return w.storage() && (w2 == nullptr || w2->storage());
  }

  // Per-shape choices of autotuned ops (tuning.h: conv2d, attention, cuBLASLt): the choice stored under `key` for
  // this context's device, or -1. One table per device for the whole process (thread-safe), so every Runner of a process
  // makes the same choice for a shape and their outputs agree bit for bit. Bounded: cleared when kMaxTuned keys
  // are held (a long-running server sees unbounded distinct input sizes).
  int tuned(const std::string& key) const;
  void set_tuned(const std::string& key, int choice);
  size_t tuned_count() const;
  static constexpr size_t kMaxTuned = 4096;  // ~100 bytes each
  // Choices persisted across processes in the file DACPP_TUNING_FILE names (core/choice_file.h; none when unset):
  // read once per device on first use, only the lines stamped with this GPU and these library versions
  // (tuning_stamp), at most kMaxPersisted of them. persisted: the stored choice under `key` or -1; persist: appends
  // one (nothing without a file; a failed append is a warning). tuned_choice (tuning.h) keys them with its
  // candidates' labels, so a build whose candidate list differs never reuses a stale index.
  int persisted(const std::string& key) const;
  void persist(const std::string& key, int choice);
  std::string tuning_stamp() const;
  static constexpr size_t kMaxPersisted = 16384;

  // Page-locked host memory for this context's host <-> device copies (engine/device_io.cc: the forward's input
  // and outputs), >= bytes, valid until the next pinned() call (a larger request waits for the stream before it
  // frees the old buffer, which a queued copy may read). nullptr when the driver refuses page-locked memory
  // (the caller then copies from pageable memory). Grows geometrically; freed with the context.
  void* pinned(size_t bytes);

  // Makes this context's device current on the calling thread (ops call it before enqueuing work).
  void make_current() const;
  // Waits for all work on stream(); a failure (also an asynchronous kernel fault) throws Backend naming `what`.
  void synchronize(const char* what);

 private:
  // A device buffer grown geometrically on demand (scratch, a side lane's workspace).
  struct Grown {
    std::vector<std::shared_ptr<void>> gens;  // the current buffer last; older ones kept for captured graphs
    size_t size = 0, total = 0;
    uint64_t epoch = 0;  // capture_epoch_ when gens.back() came
  };
  void* grow(Grown& g, size_t bytes, const char* what);
  struct Lane {
    cudaStream_t stream = nullptr;  // lane 0: stream_; side lanes: created by the first fork_lanes
    cudaEvent_t done = nullptr;     // side lanes: recorded by join_lane
    Grown scratch, workspace;
    bool joined = true;
  };

  int device_index_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t forked_ = nullptr;  // recorded on stream_ when a side lane is entered (set_lane)
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  int sm_version_ = 0;
  int sm_count_ = 0;
  bool hopper_mma_ = false;
  bool pdl_ = false;
  bool lanes_enabled_ = true;
  bool lane_priority_ = true;
  bool capture_priority_ = false;  // a fork of this capture asked for node priorities
  int least_priority_ = 0;         // the side lanes' streams' (cudaDeviceGetStreamPriorityRange)
  std::string device_name_;
  std::unique_ptr<DeviceAllocator> allocator_;
  std::unique_ptr<GemmPlans> gemm_plans_;
  Lane lanes_[kLanes];
  mutable bool plain_next_[kLanes] = {};
  int lane_ = 0, forked_count_ = 1;
  bool concurrent_ = false;
  uint64_t capture_epoch_ = 0;  // capture begins/ends so far
  bool capturing_ = false;
  void* pinned_ = nullptr;
  size_t pinned_size_ = 0;
  struct Derived {
    std::weak_ptr<void> owner, owner2;  // the source tensors' storages (owner2 empty without a second source)
    std::shared_ptr<void> data;         // what was derived from them
  };
  // (source, numel, kind, second source or null)
  std::map<std::tuple<const void*, int64_t, int, const void*>, Derived> derived_;
};

}  // namespace dacpp::cuda
