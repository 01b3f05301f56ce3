// Metrics: the server's counters for GET /metrics (Prometheus text exposition format 0.0.4): requests by surface
// and method, errors by status code, a latency histogram per method, worker restarts and process memory.
// Thread-safe; one instance per server.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace dacpp::server {

class Metrics {
 public:
  // One finished request: surface "grpc" or "rest", method "Depth", code "OK" or a gRPC code name.
  void record(const std::string& surface, const std::string& method, const std::string& code, double seconds);
  void worker_restarted();
  uint64_t worker_restarts() const;

  // The exposition text. `worker_pid` (or <= 0) adds the worker's resident memory; `model_loaded` a gauge.
  std::string render(pid_t worker_pid, bool model_loaded) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t count = 0;
    double sum = 0;
  };

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, uint64_t> requests_;  // (surface, method)
  std::map<std::pair<std::string, std::string>, uint64_t> errors_;    // (method, code)
  std::map<std::string, Histogram> latency_;                          // method
  uint64_t restarts_ = 0;
};

// Resident set size of a process in bytes (/proc/<pid>/statm), 0 when unknown. pid 0 = this process.
uint64_t resident_bytes(pid_t pid);

}  // namespace dacpp::server
