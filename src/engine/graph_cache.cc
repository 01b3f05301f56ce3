#include "engine/graph_cache.h"

namespace dacpp {

GraphCache::Plan GraphCache::plan(const std::string& key, const void* input) {
  auto it = entries_.begin();
  while (it != entries_.end() && it->key != key) ++it;
  if (it == entries_.end()) {
    entries_.push_front(Entry{key, nullptr, {}, input, 0});
    while (entries_.size() > capacity_) entries_.pop_back();
  } else {
    entries_.splice(entries_.begin(), entries_, it);
  }
  Entry& e = entries_.front();
  if (e.graph && e.input == input) return Plan::Replay;
  if (e.graph) e.graph.reset();  // the arena laid the input out elsewhere: capture again
  if (e.runs < 0) return Plan::Eager;  // uncapturable
  if (e.runs == 0) {
    e.runs = 1;
    return Plan::Eager;
  }
  return Plan::Capture;
}

size_t GraphCache::captured() const {
  size_t n = 0;
  for (const Entry& e : entries_) n += e.graph ? 1 : 0;
  return n;
}

}  // namespace dacpp
