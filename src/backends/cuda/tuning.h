// First-use autotuning helpers shared by conv2d (algorithm), gemm (cuBLASLt algorithm) and attention (tile
// variant): whether the stream is being captured (nothing can be timed then), and the mean time of a few runs of
// an alternative between two CUDA events. The choices themselves live in CudaContext's process-wide tuned table
// (conv2d, attention) or gemm.cc's algorithm table. Include only from src/backends/cuda/.
#pragma once

#include <functional>
#include <string>

namespace dacpp::cuda {

class CudaContext;

// True while c's stream is being captured into a CUDA graph.
bool stream_capturing(const CudaContext& c);

// Runs `run` once (warm-up: plans, scratch, caches) and then `reps` times between two events on c's stream; waits
// for them and returns the mean milliseconds per run. Errors (of `run`, or CUDA's, named with `what`) propagate.
float time_runs_ms(CudaContext& c, const std::function<void()>& run, int reps, const char* what);

// The fastest of `count` alternatives, each timed by time_runs_ms with `reps`; returns its index, or -1 when none
// could run. Alternative i runs as run(i), which returns false when it cannot run here (a cuBLASLt candidate the
// library refuses); one that runs out of device memory (an im2col buffer on a full GPU) is skipped too. Other
// errors propagate. With `report`, appends " <label(i)>=<us>us" (or "=skipped") per alternative.
int fastest_alternative(CudaContext& c, int count, const std::function<bool(int)>& run, int reps, const char* what,
                        const std::function<std::string(int)>& label = {}, std::string* report = nullptr);

}  // namespace dacpp::cuda
