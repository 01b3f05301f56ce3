// CpuContext — the CPU backend state of one ops::Context (design.md §3): one oneDNN engine and stream, a bounded
// LRU cache of per-shape plans (oneDNN primitives and their memory descriptors), and grow-only scratch buffers
// reused across calls. Owned by one ops::Context; not thread-safe (one Runner, one thread of control).
// This header does not expose oneDNN: dnnl.hpp is included only by the backend's .cc files (dnnl_util.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/thread_pool.h"

namespace dnnl {
struct engine;
struct stream;
}  // namespace dnnl

namespace dacpp::cpu {

// A cached per-shape plan. Each op derives its own (primitive + descriptors) in its *_cpu.cc.
struct Plan {
  virtual ~Plan() = default;
};

// Named scratch slots; each is an independent grow-only host buffer. Src, Dst and Weights hold the reordered
// operands of a primitive (conv_plan.h), Work an op's own working set; Stage0 and Stage1 hold maps an op passes
// between its own steps around a primitive (cpu::upsample_conv_head's bands).
enum class Scratch { Src = 0, Dst = 1, Weights = 2, Work = 3, Stage0 = 4, Stage1 = 5, Count = 6 };

class CpuContext {
 public:
  // plan_capacity: the most plans kept (LRU); must be >= 1. `pool` must outlive this context.
  CpuContext(const ThreadPool& pool, size_t plan_capacity);
  ~CpuContext();
  CpuContext(const CpuContext&) = delete;
  CpuContext& operator=(const CpuContext&) = delete;

  dnnl::engine& engine();
  dnnl::stream& stream();
  const ThreadPool& pool() const { return pool_; }

  // The plan cached under `key`, else make() (returning std::shared_ptr<P>) inserted as most recent. The returned
  // pointer stays valid even if later inserts evict the entry.
  template <typename P, typename Make>
  std::shared_ptr<P> plan(const std::string& key, Make&& make) {
    if (std::shared_ptr<Plan> hit = find(key)) return std::static_pointer_cast<P>(hit);
    std::shared_ptr<P> made = make();
    insert(key, made);
    return made;
  }

  size_t plan_count() const { return lru_.size(); }
  size_t plan_capacity() const { return capacity_; }
  // Plans created so far (cache misses); tests use it to prove primitives are reused.
  uint64_t plans_created() const { return created_; }

  // A host buffer of at least `bytes` for `slot`, 64-byte aligned; contents are undefined. Valid until the next
  // call for the same slot. Throws OutOfMemory.
  void* scratch(Scratch slot, size_t bytes);

  // Whether products of two activations (attention's q·kᵀ and p·v) run on bf16 operands with f32 accumulation, as a
  // model loaded in bf16 runs its weights' products (set by its Runner). Off by default: f32.
  bool bf16_products() const { return bf16_products_; }
  void set_bf16_products(bool on) { bf16_products_ = on; }

  // Whether attention with bf16 products runs the fused AVX512-BF16 kernel where the CPU has it (the default;
  // attention_fused_cpu.h) rather than oneDNN's matmul and softmax primitives. Tests and A/B runs compare the two.
  bool fused_attention() const { return fused_attention_; }
  void set_fused_attention(bool on) { fused_attention_ = on; }

  // Bound on an op's chunked working set (attention scores, upsample_conv_head's bands); ops split their work to
  // stay under it.
  size_t work_limit_bytes() const { return work_limit_bytes_; }
  void set_work_limit_bytes(size_t bytes) { work_limit_bytes_ = bytes; }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<Plan>>;
  std::shared_ptr<Plan> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<Plan> p);

  struct Dnnl;
  const ThreadPool& pool_;
  std::unique_ptr<Dnnl> dnnl_;
  size_t capacity_;
  uint64_t created_ = 0;
  size_t work_limit_bytes_ = size_t{8} << 20;
  bool bf16_products_ = false;
  bool fused_attention_ = true;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::vector<std::shared_ptr<void>> scratch_;
  std::vector<size_t> scratch_bytes_;
};

}  // namespace dacpp::cpu
