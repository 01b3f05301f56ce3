// ops::Context — the execution context every op receives explicitly (style.md A3): the device, the CPU backend
// state (oneDNN engine, stream, primitive cache, thread pool) and, when built, the CUDA backend state.
// Owned by a Runner; never shared between threads that run concurrently. Holds no model weights.
#pragma once

#include <memory>

#include "core/device.h"
#include "core/thread_pool.h"

namespace dacpp::cpu {
class CpuContext;
}

namespace dacpp::ops {

class Context {
 public:
  // threads <= 0: all hardware threads. prim_cache_capacity bounds the per-shape oneDNN primitive cache (LRU).
  explicit Context(Device device = Device::cpu(), int threads = 0, size_t prim_cache_capacity = 512);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Device& device() const { return device_; }
  const ThreadPool& pool() const { return pool_; }
  cpu::CpuContext& cpu();

 private:
  Device device_;
  ThreadPool pool_;
  std::unique_ptr<cpu::CpuContext> cpu_;
};

// Fused activation applied by linear / conv epilogues.
enum class Activation { None, Relu, Gelu };

}  // namespace dacpp::ops
