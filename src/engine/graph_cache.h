// GraphCache: the CUDA graphs of one Runner, one per input geometry (design.md §3), in a bounded LRU. A geometry
// is run eagerly the first time (which sizes the arena and fills the per-shape caches), captured the second time,
// and replayed afterwards. A forward that cannot be captured (it synchronises with the host, e.g. a host-side
// pose step) is remembered and always runs eagerly.
#pragma once

#include <cstddef>
#include <list>
#include <string>

#include "backends/cuda/cuda_ops.h"
#include "models/depth_model.h"

namespace dacpp {

class GraphCache {
 public:
  explicit GraphCache(size_t capacity = 4) : capacity_(capacity == 0 ? 1 : capacity) {}

  enum class Plan { Eager, Capture, Replay };
  struct Entry {
    std::string key;
    cuda::GraphPtr graph;          // null: uncapturable, run eagerly
    models::ModelOutputs outputs;  // arena tensors the graph writes
    const void* input = nullptr;   // the device input buffer the graph reads
    int runs = 0;                  // eager runs before capture
  };

  // What to do for `key` with the input buffer at `input`; the entry (most recently used) via entry().
  Plan plan(const std::string& key, const void* input);
  Entry& entry() { return entries_.front(); }
  size_t size() const { return entries_.size(); }
  // Entries holding a captured graph (the others run eagerly: seen once, or uncapturable).
  size_t captured() const;

 private:
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace dacpp
