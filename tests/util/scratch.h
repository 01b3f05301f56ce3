// Scratch paths for tests. ctest runs every test in its own process and several at once (-j), so a path
// must be unique per process: <TempDir>dacpp_<tag>_<pid>_<name>. Header-only.
#pragma once

#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

namespace dacpp::testing {

inline std::string scratch_path(const std::string& tag, const std::string& name) {
  std::string dir = ::testing::TempDir();
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + "dacpp_" + tag + "_" + std::to_string(::getpid()) + "_" + name;
}

// Same, named after the running test: for per-test folders.
inline std::string scratch_path_for_test(const std::string& tag) {
  return scratch_path(tag, ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

}  // namespace dacpp::testing
