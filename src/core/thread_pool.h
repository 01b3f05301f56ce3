// ThreadPool: the worker threads of one Runner. Built on the OpenMP runtime that oneDNN also uses, so our own
// kernels and oneDNN's primitives share one set of threads instead of oversubscribing the cores.
#pragma once

#include <cstdint>
#include <functional>

namespace dacpp {

class ThreadPool {
 public:
  // threads <= 0 means all hardware threads.
  explicit ThreadPool(int threads = 0);
  int size() const { return threads_; }

  // Calls fn(begin, end) over [0, n) split into contiguous chunks of at least `grain` items, in parallel.
  // fn must not throw; errors must be detected before the parallel region (validate, then run).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const;

  // parallel_for that also names the chunk: fn(chunk, begin, end), chunk in [0, size()). Chunks run at the same
  // time on distinct threads, so the index can pick a per-thread scratch buffer.
  void parallel_chunks(int64_t n, int64_t grain, const std::function<void(int, int64_t, int64_t)>& fn) const;

  // Makes this pool's thread count the calling thread's OpenMP default (what oneDNN primitives then use).
  void bind_to_current_thread() const;

  static int hardware_threads();

 private:
  int threads_;
};

}  // namespace dacpp
