#include "server/metrics.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace dacpp::server {

void Metrics::record(const std::string& surface, const std::string& method, const std::string& code,
                     double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{surface, method}];
  if (code != "OK") ++errors_[{method, code}];
  Histogram& h = latency_[method];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.counts[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::worker_restarted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++restarts_;
}

uint64_t Metrics::worker_restarts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restarts_;
}

std::string Metrics::render(pid_t worker_pid, bool model_loaded) const {
  std::ostringstream os;
  std::lock_guard<std::mutex> lock(mu_);
  os << "# HELP dacpp_requests_total Requests served, by surface and method.\n"
     << "# TYPE dacpp_requests_total counter\n";
  for (const auto& [k, v] : requests_)
    os << "dacpp_requests_total{surface=\"" << k.first << "\",method=\"" << k.second << "\"} " << v << "\n";
  os << "# HELP dacpp_errors_total Failed requests, by method and status code.\n"
     << "# TYPE dacpp_errors_total counter\n";
  for (const auto& [k, v] : errors_)
    os << "dacpp_errors_total{method=\"" << k.first << "\",code=\"" << k.second << "\"} " << v << "\n";
  os << "# HELP dacpp_request_duration_seconds Request latency, by method.\n"
     << "# TYPE dacpp_request_duration_seconds histogram\n";
  for (const auto& [method, h] : latency_) {
    for (size_t i = 0; i < kBuckets.size(); ++i)
      os << "dacpp_request_duration_seconds_bucket{method=\"" << method << "\",le=\"" << kBuckets[i] << "\"} "
         << h.counts[i] << "\n";
    os << "dacpp_request_duration_seconds_bucket{method=\"" << method << "\",le=\"+Inf\"} " << h.count << "\n"
       << "dacpp_request_duration_seconds_sum{method=\"" << method << "\"} " << h.sum << "\n"
       << "dacpp_request_duration_seconds_count{method=\"" << method << "\"} " << h.count << "\n";
  }
  os << "# HELP dacpp_worker_restarts_total Times the inference worker died and was restarted.\n"
     << "# TYPE dacpp_worker_restarts_total counter\n"
     << "dacpp_worker_restarts_total " << restarts_ << "\n"
     << "# HELP dacpp_model_loaded Whether a model is loaded.\n# TYPE dacpp_model_loaded gauge\n"
     << "dacpp_model_loaded " << (model_loaded ? 1 : 0) << "\n"
     << "# HELP dacpp_resident_memory_bytes Resident memory, by process.\n"
     << "# TYPE dacpp_resident_memory_bytes gauge\n"
     << "dacpp_resident_memory_bytes{process=\"server\"} " << resident_bytes(0) << "\n";
  if (worker_pid > 0)
    os << "dacpp_resident_memory_bytes{process=\"worker\"} " << resident_bytes(worker_pid) << "\n";
  return os.str();
}

uint64_t resident_bytes(pid_t pid) {
  std::ifstream f(pid > 0 ? "/proc/" + std::to_string(pid) + "/statm" : std::string("/proc/self/statm"));
  uint64_t size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace dacpp::server
