#include "backends/cuda/tuning.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "core/choice_file.h"
#include "core/error.h"
#include "core/log.h"

namespace dacpp::cuda {
namespace {

// Two CUDA events, destroyed with the object.
class EventPair {
 public:
  explicit EventPair(const char* what) {
    DACPP_CUDA_CHECK(cudaEventCreate(&start_), what, ": cudaEventCreate");
    const cudaError_t e = cudaEventCreate(&stop_);
    if (e != cudaSuccess) {
      cudaEventDestroy(start_);
      DACPP_CUDA_CHECK(e, what, ": cudaEventCreate");
    }
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

bool stream_capturing(const CudaContext& c) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  DACPP_CUDA_CHECK(cudaStreamIsCapturing(c.stream(), &status), "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

float time_runs_ms(CudaContext& c, const std::function<void()>& run, int reps, const char* what) {
  EventPair ev(what);
  run();
  hold_stream(c, kHoldMicroseconds);
  DACPP_CUDA_CHECK(cudaEventRecord(ev.start(), c.stream()), what, ": cudaEventRecord");
  for (int i = 0; i < reps; ++i) run();
  DACPP_CUDA_CHECK(cudaEventRecord(ev.stop(), c.stream()), what, ": cudaEventRecord");
  DACPP_CUDA_CHECK(cudaEventSynchronize(ev.stop()), what, ": timing");
  float ms = 0.f;
  DACPP_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start(), ev.stop()), what, ": cudaEventElapsedTime");
  return reps > 0 ? ms / static_cast<float>(reps) : ms;
}

namespace {

constexpr float kQuickRunMs = 0.1f;  // alternatives faster than this are timed kQuickTrials times, the best kept
constexpr int kQuickTrials = 5;

// The index of the fastest alternative that ran, or -1; " <label>=<us>us" (or "=skipped") per alternative appended
// to `report`.
int fastest_alternative(CudaContext& c, int count, const std::function<bool(int)>& run, int reps, const char* what,
                        const std::function<std::string(int)>& label, std::string& report) {
  int best = -1;
  float best_ms = 0.f;
  for (int i = 0; i < count; ++i) {
    float ms = -1.f;
    try {
      if (run(i)) {
        const auto timed = [&] {
          return time_runs_ms(
              c, [&] { run(i); }, reps, what);
        };
        ms = timed();
        // A run of tens of microseconds moves by as much between timings as the alternatives differ (DA2-S's
        // 64-channel head convs: 12.5 µs one process, 16 µs the next); its best of kQuickTrials is what a graph
        // replay sees.
        if (ms < kQuickRunMs)
          for (int trial = 1; trial < kQuickTrials; ++trial) ms = std::min(ms, timed());
      }
    } catch (const Error& e) {
      if (e.code() != ErrorCode::OutOfMemory) throw;
      log::debug(what, ": alternative ", i, " skipped: ", e.what());
    }
    report += ms < 0.f ? str_cat(" ", label(i), "=skipped") : str_cat(" ", label(i), "=", ms * 1e3f, "us");
    if (ms >= 0.f && (best < 0 || ms < best_ms)) {
      best = i;
      best_ms = ms;
    }
  }
  return best;
}

}  // namespace

bool autotune_enabled() {
  static const bool enabled = [] {
    const char* e = std::getenv("DACPP_AUTOTUNE");
    return e == nullptr || std::string(e) != "0";
  }();
  return enabled;
}

int tuned_choice(CudaContext& c, const std::string& key, int count, int fallback, const std::function<bool(int)>& run,
                 int reps, const std::function<std::string(int)>& label) {
  if (count <= 1 || !autotune_enabled()) return fallback;
  if (const int t = c.tuned(key); t >= 0 && t < count) return t;
  // The tuning file's key names the candidates too: another build's list (other algorithms, other order) misses.
  std::vector<std::string> labels;
  labels.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) labels.push_back(label(i));
  const std::string stored = ChoiceFile::candidates_key(key, labels);
  if (const int t = c.persisted(stored); t >= 0 && t < count) {
    log::debug("tuned [", key, "]: from the tuning file -> ", label(t));
    c.set_tuned(key, t);
    return c.tuned(key);
  }
  if (stream_capturing(c)) return fallback;
  std::string report;
  const int best = fastest_alternative(c, count, run, reps, key.c_str(), label, report);
  const int choice = best < 0 ? fallback : best;
  log::debug("tuned [", key, "]:", report, " -> ", label(choice));
  c.set_tuned(key, choice);
  const int chosen = c.tuned(key);  // another Runner's choice for this key, if it got there first
  if (chosen == choice && best >= 0) c.persist(stored, choice);
  return chosen;
}

}  // namespace dacpp::cuda
