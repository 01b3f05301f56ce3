#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "core/arena.h"
#include "core/fault.h"
#include "core/thread_pool.h"

namespace dacpp {
namespace {

TEST(Fault, FiresOnTheNthPassOnly) {
  fault::configure("file.read:3,image.decode");
  EXPECT_FALSE(fault::hit("file.read"));
  EXPECT_FALSE(fault::hit("file.read"));
  EXPECT_TRUE(fault::hit("file.read"));
  EXPECT_FALSE(fault::hit("file.read"));
  EXPECT_TRUE(fault::hit("image.decode"));
  EXPECT_FALSE(fault::hit("other.site"));
  fault::configure("");
  EXPECT_FALSE(fault::hit("image.decode"));
}

TEST(ThreadPool, CoversTheRangeExactlyOnce) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> seen(1001);
  pool.parallel_for(1001, 7, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)]++;
  });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

// Each chunk's index is its own while chunks run: per-thread scratch picked by it is never shared.
TEST(ThreadPool, ChunkIndicesAreDistinctAndWithinTheSize) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> busy(static_cast<size_t>(pool.size())), seen(1001);
  std::atomic<bool> shared{false}, outside{false};
  pool.parallel_chunks(1001, 1, [&](int chunk, int64_t b, int64_t e) {
    if (chunk < 0 || chunk >= pool.size()) {
      outside = true;
      return;
    }
    if (busy[static_cast<size_t>(chunk)]++ != 0) shared = true;
    for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)]++;
    busy[static_cast<size_t>(chunk)]--;
  });
  EXPECT_FALSE(outside);
  EXPECT_FALSE(shared);
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

// Inside another parallel region OpenMP gives the inner one a single thread; the whole range must still be covered.
TEST(ThreadPool, NestedInAnotherRegionCoversTheRange) {
  ThreadPool outer(2), inner(4);
  std::vector<std::atomic<int>> seen(2 * 501);
  outer.parallel_for(2, 1, [&](int64_t b, int64_t e) {
    for (int64_t part = b; part < e; ++part)
      inner.parallel_for(501, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) seen[static_cast<size_t>(part * 501 + i)]++;
      });
  });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

TEST(HostArena, ReusesBlocksAfterReset) {
  HostArena arena(1 << 16);
  Tensor a = arena.alloc({100});
  Tensor b = arena.alloc({5000});
  EXPECT_NE(a.raw(), b.raw());
  const size_t reserved = arena.reserved_bytes();
  arena.reset();
  Tensor c = arena.alloc({100});
  EXPECT_EQ(c.raw(), a.raw());
  EXPECT_EQ(arena.reserved_bytes(), reserved);
  EXPECT_GE(arena.peak_bytes(), 5100 * sizeof(float));
}

TEST(HostArena, LargeRequestGetsItsOwnBlock) {
  HostArena arena(1024);
  Tensor big = arena.alloc({10000});
  EXPECT_EQ(big.numel(), 10000);
  EXPECT_GE(arena.reserved_bytes(), 40000u);
}

}  // namespace
}  // namespace dacpp
