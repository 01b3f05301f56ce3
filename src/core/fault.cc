#include "core/fault.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace dacpp::fault {
namespace {

struct Site {
  std::string name;
  long target = 1;
  long count = 0;
};

// The fault table is process-wide by nature: it models the environment, like the log sink.
struct Table {
  std::mutex mu;
  std::vector<Site> sites;
  std::atomic<bool> any{false};
  bool loaded = false;
};

Table& table() {
  static Table t;
  return t;
}

void parse_locked(Table& t, const std::string& spec) {
  t.sites.clear();
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    Site s;
    size_t colon = item.rfind(':');
    if (colon != std::string::npos) {
      s.name = item.substr(0, colon);
      char* stop = nullptr;
      long n = std::strtol(item.c_str() + colon + 1, &stop, 10);
      s.target = (stop && *stop == '\0' && n > 0) ? n : 1;
    } else {
      s.name = item;
    }
    t.sites.push_back(s);
  }
  t.any.store(!t.sites.empty());
}

void load_once(Table& t) {
  if (t.loaded) return;
  t.loaded = true;
  const char* env = std::getenv("DACPP_FAULT");
  parse_locked(t, env ? env : "");
}

}  // namespace

bool hit(const char* site) {
  Table& t = table();
  if (t.loaded && !t.any.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(t.mu);
  load_once(t);
  for (Site& s : t.sites) {
    if (s.name == site) {
      ++s.count;
      if (s.count == s.target) return true;
    }
  }
  return false;
}

void configure(const std::string& spec) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.loaded = true;
  parse_locked(t, spec);
}

}  // namespace dacpp::fault
