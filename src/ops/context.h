// ops::Context — the execution context every op receives explicitly (style.md A3): the device, the CPU backend
// state (oneDNN engine, stream, primitive cache, thread pool) and, when built, the CUDA backend state.
// Owned by a Runner; never shared between threads that run concurrently. Holds no model weights.
#pragma once

#include <memory>

#include "backends/cuda/cuda_ops.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/thread_pool.h"

namespace dacpp::cpu {
class CpuContext;
}

namespace dacpp::ops {

class OpProfile;

class Context {
 public:
  // threads <= 0: all hardware threads. prim_cache_capacity bounds the per-shape oneDNN primitive cache (LRU).
  // act_dtype: the activation dtype of the ops run on this context: F32 on the CPU; F32, BF16 or F16 on CUDA
  // (InvalidArgument otherwise). A Cuda device creates the CUDA state (Backend when the device or driver fails;
  // Unsupported "dacpp was built without CUDA (rebuild with -DDACPP_CUDA=ON)" in a CPU-only build).
  explicit Context(Device device = Device::cpu(), int threads = 0, size_t prim_cache_capacity = 512,
                   DType act_dtype = DType::F32);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Device& device() const { return device_; }
  const ThreadPool& pool() const { return pool_; }
  cpu::CpuContext& cpu();
  // The CUDA state; throws Backend naming the device when this context is not on a CUDA device.
  cuda::CudaContext& cuda();
  DType act_dtype() const { return act_dtype_; }

  // The profile the ops run on this context add their times to (op_profile.h), or null (the default): not owned,
  // must outlive its attachment. OpScope keeps the nesting depth so that an op inside an op is not counted twice.
  void set_profile(OpProfile* profile) { profile_ = profile; }
  OpProfile* profile() const { return profile_; }
  int enter_profiled_op() { return profile_depth_++; }
  void leave_profiled_op() { --profile_depth_; }

 private:
  Device device_;
  DType act_dtype_;
  ThreadPool pool_;
  std::unique_ptr<cpu::CpuContext> cpu_;
  cuda::CudaContextPtr cuda_;
  OpProfile* profile_ = nullptr;
  int profile_depth_ = 0;
};

// Fused activation applied by linear / conv epilogues.
enum class Activation { None, Relu, Gelu };

}  // namespace dacpp::ops
