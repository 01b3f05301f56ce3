// ops::Lanes — independent branches of one forward, enqueued so that a GPU may run them at the same time.
//
// On a CUDA context (unless DACPP_LANES=0), while a CUDA graph is being captured, each lane past lane 0 gets a
// stream of its own: the graph holds the branches as parallel paths, and small kernels of different branches share
// the GPU instead of running one after another. Outside a capture, and on the CPU, every lane is the caller's
// stream and the branches run in the order they were enqueued. Work entering lane k comes after lane 0's work so
// far; lane 0 waits for lane k only where join(k) says. Each lane has its own scratch memory, so ops on different
// lanes never share a temporary; their activations must come from an arena no other lane uses while they may run
// (RunState::lane_arenas).
//
//   ops::Lanes lanes(ctx, 3);
//   { auto on = lanes.on(1); ... }  // after lane 0's work so far, on lane 1
//   { auto on = lanes.on(2); ... }
//   ...                             // lane 0 (the caller's)
//   lanes.join(1);                  // lane 0's later work waits for lane 1's
#pragma once

#include "ops/context.h"

namespace dacpp::ops {

class Lanes {
 public:
  // Makes `wanted` lanes (lane 0 included) available; count() may be fewer (1 on the CPU or with DACPP_LANES=0).
  // lane0_first: lane 0 holds the forward's critical path, so where branches run at once the GPU should give its
  // free multiprocessors to lane 0's kernels first (a captured graph's node priorities; cuda::fork_lanes).
  // Throws Internal when lanes are already forked on ctx.
  Lanes(Context& ctx, int wanted, bool lane0_first = false);
  // Joins every lane into lane 0 and returns to it (also when unwinding after an error).
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  int count() const { return count_; }

  // Ops enqueue on lane `lane` (taken modulo count()), after lane 0's work so far, until the returned scope ends;
  // then on lane 0 again.
  class On {
   public:
    ~On();
    On(const On&) = delete;
    On& operator=(const On&) = delete;

   private:
    friend class Lanes;
    explicit On(Lanes* lanes) : lanes_(lanes) {}
    Lanes* lanes_;
  };
  On on(int lane);
  // Lane 0's work enqueued from now on waits for the work enqueued on `lane` so far (modulo count(); lane 0: no-op).
  void join(int lane);

 private:
  Context& ctx_;
  int count_ = 1;
};

}  // namespace dacpp::ops
