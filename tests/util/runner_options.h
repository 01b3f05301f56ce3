// RunnerOptions with only the thread count set (the tests' usual runner), without brace-initialising a prefix of
// the struct's fields. Header-only.
#pragma once

#include "engine/runner.h"

namespace dacpp::testing {

inline RunnerOptions runner_options(int threads, size_t pos_cache_capacity = RunnerOptions{}.pos_cache_capacity) {
  RunnerOptions o;
  o.threads = threads;
  o.pos_cache_capacity = pos_cache_capacity;
  return o;
}

}  // namespace dacpp::testing
