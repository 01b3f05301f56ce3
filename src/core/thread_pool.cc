#include "core/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace dacpp {

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int threads) : threads_(threads > 0 ? threads : hardware_threads()) {}

void ThreadPool::bind_to_current_thread() const { omp_set_num_threads(threads_); }

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const {
  parallel_chunks(n, grain, [&fn](int, int64_t begin, int64_t end) { fn(begin, end); });
}

void ThreadPool::parallel_chunks(int64_t n, int64_t grain, const std::function<void(int, int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  const int nt = static_cast<int>(std::min<int64_t>(threads_, max_chunks));
  if (nt <= 1) {
    fn(0, 0, n);
    return;
  }
  // An exception must not leave an OpenMP region (that is std::terminate): the first one is kept and rethrown
  // on the calling thread once every worker has finished.
  std::exception_ptr first;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(nt)
  {
    // The team may be smaller than asked (a region nested in another runs on one thread): split by its size.
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    const int64_t per = n / team, rem = n % team;
    const int64_t begin = t * per + std::min<int64_t>(t, rem);
    const int64_t end = begin + per + (t < rem ? 1 : 0);
    try {
      if (begin < end) fn(t, begin, end);
    } catch (...) {
      if (!failed.exchange(true)) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace dacpp
