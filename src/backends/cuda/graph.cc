// CUDA graphs: one forward captured on a context's stream and replayed (design.md §3).
#include <cuda_runtime.h>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/tuning.h"

namespace dacpp::cuda {

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

void GraphDeleter::operator()(Graph* g) const noexcept {
  if (g == nullptr) return;
  if (g->exec != nullptr) cudaGraphExecDestroy(g->exec);
  if (g->graph != nullptr) cudaGraphDestroy(g->graph);
  delete g;
}

void begin_capture(CudaContext& ctx) {
  ctx.make_current();
  // Thread-local mode: other threads' CUDA calls (other Runners) are not affected by this capture.
  DACPP_CUDA_CHECK(cudaStreamBeginCapture(ctx.stream(), cudaStreamCaptureModeThreadLocal),
                   "CUDA graph: begin capture");
  ctx.note_capture(true);
}

GraphPtr end_capture(CudaContext& ctx) {
  GraphPtr g(new Graph);
  ctx.note_capture(false);
  DACPP_CUDA_CHECK(cudaStreamEndCapture(ctx.stream(), &g->graph), "CUDA graph: end capture");
  DACPP_CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0), "CUDA graph: instantiate");
  return g;
}

void abort_capture(CudaContext& ctx) noexcept {
  ctx.note_capture(false);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(ctx.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(ctx.stream(), &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
  }
  cudaGetLastError();  // a failed capture leaves a non-sticky error behind
}

void launch(CudaContext& ctx, const Graph& g) {
  ctx.make_current();
  DACPP_CUDA_CHECK(cudaGraphLaunch(g.exec, ctx.stream()), "CUDA graph: launch");
}

float time_replays_ms(CudaContext& ctx, const Graph& g, int reps) {
  return time_runs_ms(ctx, [&] { launch(ctx, g); }, reps, "CUDA graph: timed replay");
}

}  // namespace dacpp::cuda
