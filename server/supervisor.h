// Supervisor: the front process's handle on the worker process (design.md §5, crash isolation). It spawns the
// worker (this binary with --worker), sends it one request at a time over a socketpair (worker_protocol.h),
// copies the worker's stderr to its own with a "[worker] " prefix while keeping the last lines, and when the
// worker dies mid-request answers that request with E_WORKER_CRASHED (signal, stage, last stderr lines), then
// restarts the worker and reloads the last model in the background. Health and Status never wait on it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backend.pb.h"
#include "server/error_map.h"
#include "server/metrics.h"
#include "worker.pb.h"

namespace dacpp::server {

struct CallResult {
  bool ok = false;
  worker::WorkerReply reply;  // when ok
  ServerError error;          // when !ok
};

class Supervisor {
 public:
  struct Options {
    std::string exe;            // the binary to run with --worker (normally /proc/self/exe)
    size_t tail_lines = 20;     // worker stderr lines kept for crash reports
  };

  Supervisor(Options options, Metrics* metrics);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs one request on the worker (starting it, and reloading the model, if needed). `op` names the request in
  // messages ("Depth"). Serialised: concurrent callers wait their turn.
  CallResult call(const worker::WorkerRequest& request, const char* op);

  bool model_loaded() const { return model_loaded_.load(); }
  bool busy() const { return busy_.load(); }
  bool failed() const { return failed_.load(); }
  pid_t worker_pid() const { return worker_pid_.load(); }
  std::string model_identity() const;  // ModelOptions.Model of the loaded model ("" if none)

  // Stops the restarter and the worker; waits up to `grace_ms` for an in-flight request. Idempotent.
  void stop(int grace_ms);

 private:
  bool spawn_locked(std::string* error);
  // One request/reply exchange. `delivered` (optional) says whether the request reached the socket.
  bool transact_locked(const worker::WorkerRequest& request, worker::WorkerReply* reply, std::string* io_error,
                       bool* delivered);
  // transact_locked, plus one retry on a fresh worker when the old one died before reading the request.
  bool exchange_locked(const worker::WorkerRequest& request, bool is_load, const char* op, worker::WorkerReply* reply,
                       std::string* io_error);
  // The worker died mid-request: reaps it, schedules the restart, returns E_WORKER_CRASHED.
  ServerError crashed_locked(const char* op, const std::string& io_error);
  std::string reap_locked(const char* op, const std::string& io_error);
  void close_worker_locked();
  void discard_if_dead_locked();
  bool reload_locked(std::string* error);
  void set_loaded(const std::optional<backend::ModelOptions>& options);
  void pump_stderr(int fd);
  void restart_loop();

  Options options_;
  Metrics* metrics_;
  std::timed_mutex call_mu_;  // one request at a time; guards the fields below up to the atomics
  pid_t pid_ = -1;
  int sock_ = -1;
  std::thread pump_;
  int generation_ = 0;  // workers started so far
  std::optional<backend::ModelOptions> loaded_;

  std::atomic<pid_t> worker_pid_{-1};
  std::atomic<bool> model_loaded_{false}, busy_{false}, failed_{false};
  mutable std::mutex identity_mu_;
  std::string identity_;

  std::mutex tail_mu_;
  std::deque<std::string> tail_;

  std::mutex restart_mu_;
  std::condition_variable restart_cv_;
  bool restart_pending_ = false, stopping_ = false;
  std::thread restarter_;
};

}  // namespace dacpp::server
