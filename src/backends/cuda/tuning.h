// First-use autotuning shared by conv2d (algorithm), gemm (cuBLASLt algorithm) and attention (tile variant): the
// choice per shape (tuned_choice, recorded in CudaContext's process-wide tuned table) and its parts. Include only
// from src/backends/cuda/.
#pragma once

#include <functional>
#include <string>

namespace dacpp::cuda {

class CudaContext;

// True while c's stream is being captured into a CUDA graph.
bool stream_capturing(const CudaContext& c);

// Keeps c's stream busy for about `microseconds` (a one-thread kernel spinning on the GPU's timer).
void hold_stream(CudaContext& c, int microseconds);

// Runs `run` once (warm-up: plans, scratch, caches) and then `reps` times between two events on c's stream; waits
// for them and returns the mean milliseconds per run. Errors (of `run`, or CUDA's, named with `what`) propagate.
// The timed runs are enqueued behind a hold_stream of kHoldMicroseconds, so they execute back to back and the
// events measure GPU time, as a graph replay sees it, not the host's launch rate: without the hold a small
// cuBLASLt GEMM timed ~15 µs of mostly host-side launch cost and won or lost on that.
constexpr int kHoldMicroseconds = 200;
float time_runs_ms(CudaContext& c, const std::function<void()>& run, int reps, const char* what);

// Whether ops may time alternatives on first use of a shape: on unless the environment sets DACPP_AUTOTUNE=0
// (fixed, reproducible choices across processes).
bool autotune_enabled();

// The choice among `count` alternatives of the op named by `key` on c's device: the one recorded for the process
// (CudaContext::tuned) when there is one; else the one in the tuning file (CudaContext::persisted, stored under
// `key` plus every label(i), so only the same candidate list matches), recorded for the process; `fallback` with
// autotuning off or while the stream is being captured (nothing can be timed; nothing is recorded); else each
// alternative is timed by time_runs_ms with `reps` (the best of five such timings for one under 0.1 ms a run), the
// fastest is recorded (a choice another Runner recorded first stands), appended to the tuning file, and returned.
// run(i) runs alternative i and returns false when it cannot run here (a cuBLASLt candidate the library refuses);
// one that runs out of device memory (an im2col buffer on a full GPU) is skipped too; other errors propagate and
// nothing is recorded.
// `label(i)` names alternative i in the debug log line of the timings.
int tuned_choice(CudaContext& c, const std::string& key, int count, int fallback, const std::function<bool(int)>& run,
                 int reps, const std::function<std::string(int)>& label);

}  // namespace dacpp::cuda
