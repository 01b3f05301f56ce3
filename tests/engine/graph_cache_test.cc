// GraphCache's plan (host logic; the CUDA graphs themselves are exercised on the GPU machine): a geometry runs
// eagerly once, is captured the next time, a geometry marked uncapturable stays eager, a moved input buffer asks
// for a new capture, and the cache is a bounded LRU.
#include <gtest/gtest.h>

#include "engine/graph_cache.h"

namespace dacpp {
namespace {

using Plan = GraphCache::Plan;

TEST(GraphCache, EagerOnceThenCaptureUntilAGraphIsHeld) {
  GraphCache cache(4);
  int buffer = 0;
  EXPECT_EQ(cache.plan("a", &buffer), Plan::Eager);
  EXPECT_EQ(cache.plan("a", &buffer), Plan::Capture);
  EXPECT_EQ(cache.plan("a", &buffer), Plan::Capture);  // the capture failed to store a graph: try again
  EXPECT_EQ(cache.captured(), 0u);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(GraphCache, UncapturableGeometryStaysEager) {
  GraphCache cache(4);
  int buffer = 0;
  cache.plan("a", &buffer);
  cache.plan("a", &buffer);
  cache.entry().runs = -1;  // what Runner records when a capture throws
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cache.plan("a", &buffer), Plan::Eager);
  EXPECT_EQ(cache.plan("b", &buffer), Plan::Eager);  // other geometries are unaffected
  EXPECT_EQ(cache.plan("b", &buffer), Plan::Capture);
}

TEST(GraphCache, BoundedLeastRecentlyUsed) {
  GraphCache cache(2);
  int buffer = 0;
  cache.plan("a", &buffer);
  cache.plan("b", &buffer);
  cache.plan("a", &buffer);  // a is now the most recent: c evicts b
  cache.plan("c", &buffer);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.plan("a", &buffer), Plan::Capture);  // a kept its eager run
  EXPECT_EQ(cache.plan("b", &buffer), Plan::Eager);    // b was evicted: starts over
  GraphCache one(0);  // capacity 0 is taken as 1
  one.plan("a", &buffer);
  one.plan("b", &buffer);
  EXPECT_EQ(one.size(), 1u);
}

}  // namespace
}  // namespace dacpp
