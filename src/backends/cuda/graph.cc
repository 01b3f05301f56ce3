// CUDA graphs: one forward captured on a context's stream and replayed (design.md §3).
#include <cuda_runtime.h>

#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/tuning.h"

namespace dacpp::cuda {

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool node_priorities = false;
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
  const bool priority = ctx.take_capture_priority();
  ctx.note_capture(false);
  DACPP_CUDA_CHECK(cudaStreamEndCapture(ctx.stream(), &g->graph), "CUDA graph: end capture");
  // Kernel nodes keep the priority of the stream they were captured on (lane 0 above the side lanes) where a fork
  // asked for it (CudaContext::fork_lanes).
  const unsigned long long flags = priority ? cudaGraphInstantiateFlagUseNodePriority : 0;
  g->node_priorities = priority;
  DACPP_CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, flags), "CUDA graph: instantiate");
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

bool keeps_node_priorities(const Graph& g) {
  return g.node_priorities;
}

std::vector<int> kernel_node_priorities(const Graph& g) {
  size_t count = 0;
  DACPP_CUDA_CHECK(cudaGraphGetNodes(g.graph, nullptr, &count), "CUDA graph: count nodes");
  std::vector<cudaGraphNode_t> nodes(count);
  DACPP_CUDA_CHECK(cudaGraphGetNodes(g.graph, nodes.data(), &count), "CUDA graph: list nodes");
  std::vector<int> priorities;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    DACPP_CUDA_CHECK(cudaGraphNodeGetType(node, &type), "CUDA graph: node type");
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeAttrValue value{};
    DACPP_CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node, cudaKernelNodeAttributePriority, &value),
                     "CUDA graph: kernel node priority");
    priorities.push_back(value.priority);
  }
  return priorities;
}

float time_replays_ms(CudaContext& ctx, const Graph& g, int reps) {
  return time_runs_ms(ctx, [&] { launch(ctx, g); }, reps, "CUDA graph: timed replay");
}

}  // namespace dacpp::cuda
