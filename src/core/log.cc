#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace dacpp::log {
namespace {

Level parse_env() {
  const char* env = std::getenv("DACPP_LOG");
  if (!env) return Level::Warn;
  if (!std::strcmp(env, "error")) return Level::Error;
  if (!std::strcmp(env, "warn")) return Level::Warn;
  if (!std::strcmp(env, "info")) return Level::Info;
  if (!std::strcmp(env, "debug")) return Level::Debug;
  return Level::Warn;
}

std::atomic<int>& current() {
  static std::atomic<int> level{static_cast<int>(parse_env())};
  return level;
}

const char* level_name(Level l) {
  switch (l) {
    case Level::Error: return "error";
    case Level::Warn: return "warn";
    case Level::Info: return "info";
    case Level::Debug: return "debug";
  }
  return "?";
}

}  // namespace

bool enabled(Level level) { return static_cast<int>(level) <= current().load(std::memory_order_relaxed); }

void set_level(Level level) { current().store(static_cast<int>(level)); }

void write(Level level, const std::string& message) {
  std::string line = "dacpp: ";
  line += level_name(level);
  line += ": ";
  line += message;
  line += '\n';
  // One write(2) per line keeps lines whole when several threads or processes share stderr.
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(2, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace dacpp::log
