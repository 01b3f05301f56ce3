#include "engine/device_io.h"

#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_ops.h"
#include "ops/copy.h"
#include "ops/transfer.h"

namespace dacpp {
namespace {

// Copies between pageable memory and the device go through the context's page-locked staging buffer when they are
// this large: the host side is a memcpy spread over the context's threads, the transfer a DMA at PCIe speed. A
// pageable cudaMemcpy stages through the driver's buffers behind one thread's memcpy: on the H200 machine the
// input and depth copies of a 518² forward took ~0.55 ms that way (bench: median_ms - graph_replay_ms).
// The input's upload is not waited for: the forward's kernels (first the cast to the activation dtype) follow it on
// the stream, and the output copy at the end waits for everything. The host-side copies use 1 MiB per thread, so a
// 518² input takes four threads: converting it to bf16 on the host instead (half the bytes to upload) spread over
// every pool thread cost 1.1-5 ms more per forward on the H200 machine than this memcpy (same command, A/B), most
// likely the many briefly woken OpenMP threads competing with the thread that then waits for the GPU.
constexpr size_t kStagedBytes = size_t{256} << 10;

void parallel_memcpy(const ThreadPool& pool, void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = size_t{1} << 20;
  const auto pieces = static_cast<int64_t>((bytes + kPiece - 1) / kPiece);
  pool.parallel_for(pieces, 1, [&](int64_t b, int64_t e) {
    const size_t lo = static_cast<size_t>(b) * kPiece, hi = std::min(bytes, static_cast<size_t>(e) * kPiece);
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  });
}

// Page-locked staging for a copy of `bytes` between the host and ctx's GPU, or nullptr (small, or none available).
void* staging_for(ops::Context& ctx, size_t bytes) {
  return bytes < kStagedBytes ? nullptr : cuda::pinned_staging(ctx.cuda(), bytes);
}

}  // namespace

HostArena make_runner_arena(ops::Context& ctx) {
  if (ctx.device().is_cpu()) return HostArena();
  return cuda::make_arena(ctx.cuda());
}

HostArena make_lane_arena(ops::Context& ctx) {
  constexpr size_t kBlockBytes = size_t{8} << 20;
  if (ctx.device().is_cpu()) return HostArena(kBlockBytes);
  return cuda::make_arena(ctx.cuda(), kBlockBytes);
}

Tensor input_to_device(ops::Context& ctx, HostArena& arena, const Tensor& host) {
  if (ctx.device().is_cpu()) return host;
  Tensor f32 = arena.alloc(host.shape(), DType::F32, "input.f32");
  void* staging = host.dtype() == DType::F32 && host.device().is_cpu() ? staging_for(ctx, host.nbytes()) : nullptr;
  if (staging) {
    // A forward that failed midway may have left its upload queued: nothing may still read the buffer we refill.
    cuda::synchronize(ctx.cuda(), "before staging the forward's input");
    parallel_memcpy(ctx.pool(), staging, host.raw(), host.nbytes());
    cuda::copy_async(ctx.cuda(), Tensor::view(staging, host.shape(), DType::F32, Device::cpu(), nullptr, host.name()),
                     f32);
  } else {
    ops::copy(ctx, host, f32);
  }
  if (ctx.act_dtype() == DType::F32) return f32;
  Tensor act = arena.alloc(host.shape(), ctx.act_dtype(), "input");
  ops::cast(ctx, f32, act);
  return act;
}

Tensor output_to_host(ops::Context& ctx, const Tensor& t) {
  const bool on_gpu = t.defined() && !t.device().is_cpu() && !ctx.device().is_cpu();
  const size_t bytes = on_gpu ? dtype_nbytes(DType::F32, t.numel()) : 0;
  void* staging = on_gpu ? staging_for(ctx, bytes) : nullptr;
  if (!staging) return ops::to_host_f32(ctx, t);
  Tensor view = Tensor::view(staging, t.shape(), DType::F32, Device::cpu(), nullptr, t.name());
  ops::copy(ctx, ops::to_dtype(ctx, t, DType::F32), view);  // waits for the transfer
  Tensor host = Tensor::empty(t.shape(), DType::F32, t.name());
  parallel_memcpy(ctx.pool(), host.raw(), staging, bytes);
  return host;
}

}  // namespace dacpp
