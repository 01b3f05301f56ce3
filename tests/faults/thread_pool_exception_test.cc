// An exception thrown inside ThreadPool::parallel_for (an OpenMP region) reaches the caller as itself instead of
// terminating the process.
#include <gtest/gtest.h>

#include <atomic>

#include "core/error.h"
#include "core/thread_pool.h"

namespace dacpp {
namespace {

TEST(ThreadPoolFaults, ExceptionInAWorkerReachesTheCaller) {
  ThreadPool pool(4);
  std::atomic<int> chunks{0};
  try {
    pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) {
      chunks.fetch_add(1);
      if (b == 0) DACPP_THROW(ErrorCode::InvalidModel, "chunk [", b, ",", e, ") failed");
    });
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_NE(std::string(e.what()).find("chunk [0,"), std::string::npos) << e.what();
  }
  EXPECT_GE(chunks.load(), 1);
  // The pool is still usable afterwards.
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  EXPECT_EQ(sum.load(), 100);
}

TEST(ThreadPoolFaults, EveryWorkerThrowingStillRethrowsOne) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(9, 1, [](int64_t, int64_t) { DACPP_THROW(ErrorCode::Backend, "x"); }), Error);
}

}  // namespace
}  // namespace dacpp
