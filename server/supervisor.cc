#include "server/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "server/worker_protocol.h"

extern char** environ;

namespace dacpp::server {
namespace {

// argv/envp kept alive across fork: only async-signal-safe calls happen in the child.
struct ExecArgs {
  std::vector<std::string> argv_s, env_s;
  std::vector<char*> argv, env;
  void seal() {
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    for (auto& s : env_s) env.push_back(s.data());
    env.push_back(nullptr);
  }
};

// Waits for `pid` for up to `ms`, then kills it. Returns the wait status.
int wait_or_kill(pid_t pid, int ms) {
  int status = 0;
  for (int waited = 0; waited < ms; waited += 10) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    return str_cat("killed by signal ", WTERMSIG(status), " (SIG", abbrev ? abbrev : "?", ")");
  }
  if (WIFEXITED(status)) return str_cat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

Supervisor::Supervisor(Options options, Metrics* metrics)
    : options_(std::move(options)), metrics_(metrics), restarter_([this] { restart_loop(); }) {}

Supervisor::~Supervisor() { stop(1000); }

std::string Supervisor::model_identity() const {
  std::lock_guard<std::mutex> lock(identity_mu_);
  return identity_;
}

void Supervisor::set_loaded(const std::optional<backend::ModelOptions>& options) {
  loaded_ = options;
  model_loaded_ = options.has_value();
  std::lock_guard<std::mutex> lock(identity_mu_);
  identity_ = options ? options->model() : "";
}

bool Supervisor::spawn_locked(std::string* error) {
  int sv[2], ep[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *error = str_cat("socketpair failed: ", std::strerror(errno));
    return false;
  }
  if (::pipe2(ep, O_CLOEXEC) != 0) {
    *error = str_cat("pipe2 failed: ", std::strerror(errno));
    ::close(sv[0]), ::close(sv[1]);
    return false;
  }
  ExecArgs a;
  a.argv_s = {options_.exe, "--worker", "--worker-fd=3", str_cat("--parent-pid=", ::getpid())};
  // Fault injection arms the first worker only, so a test of worker.crash sees the restarted worker serve.
  for (char** e = environ; *e; ++e)
    if (generation_ == 0 || std::strncmp(*e, "DACPP_FAULT=", 12) != 0) a.env_s.emplace_back(*e);
  a.seal();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(ep[1], 1);
    ::dup2(ep[1], 2);
    if (sv[1] == 3) ::fcntl(3, F_SETFD, 0); else ::dup2(sv[1], 3);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execve(a.argv[0], a.argv.data(), a.env.data());
    const char msg[] = "dacpp: fatal: cannot exec the worker\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(sv[1]);
  ::close(ep[1]);
  if (pid < 0) {
    *error = str_cat("fork failed: ", std::strerror(errno));
    ::close(sv[0]), ::close(ep[0]);
    return false;
  }
  pid_ = pid;
  worker_pid_ = pid;
  sock_ = sv[0];
  if (++generation_ > 1 && metrics_) metrics_->worker_restarted();
  {
    std::lock_guard<std::mutex> lock(tail_mu_);
    tail_.clear();
  }
  pump_ = std::thread([this, fd = ep[0]] { pump_stderr(fd); });
  return true;
}

void Supervisor::pump_stderr(int fd) {
  std::string pending;
  char buf[4096];
  auto emit = [this](const std::string& line) {
    const std::string out = "[worker] " + line + "\n";
    (void)!::write(2, out.data(), out.size());
    std::lock_guard<std::mutex> lock(tail_mu_);
    tail_.push_back(line);
    while (tail_.size() > options_.tail_lines) tail_.pop_front();
  };
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      emit(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty()) emit(pending);
  ::close(fd);
}

bool Supervisor::transact_locked(const worker::WorkerRequest& request, worker::WorkerReply* reply,
                                 std::string* io_error, bool* delivered) {
  if (delivered) *delivered = false;
  if (!write_frame(sock_, request, io_error)) return false;
  const FrameStatus st = read_frame(sock_, reply, io_error);
  if (delivered) *delivered = st != FrameStatus::Reset;
  if (st == FrameStatus::Closed) *io_error = "the worker closed its socket";
  return st == FrameStatus::Ok;
}

void Supervisor::close_worker_locked() {
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
  if (pid_ > 0) wait_or_kill(pid_, 3000);
  if (pump_.joinable()) pump_.join();
  pid_ = -1;
  worker_pid_ = -1;
}

// After a failed exchange: reaps the worker and describes how it ended, with its breadcrumb and stderr tail.
std::string Supervisor::reap_locked(const char* op, const std::string& io_error) {
  const pid_t pid = pid_;
  if (pid <= 0) return str_cat("no worker process (", io_error, ")");
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
  const int status = wait_or_kill(pid, 5000);
  if (pump_.joinable()) pump_.join();
  pid_ = -1;
  worker_pid_ = -1;
  std::string crumb, tail;
  {
    std::lock_guard<std::mutex> lock(tail_mu_);
    for (const std::string& line : tail_) {
      const size_t at = line.find("dacpp: fatal: ");
      if (at != std::string::npos) crumb = line.substr(at + 14);
    }
    const size_t first = tail_.size() > 5 ? tail_.size() - 5 : 0;
    for (size_t i = first; i < tail_.size(); ++i) tail += (tail.empty() ? "" : " | ") + tail_[i];
  }
  return str_cat("the worker process (pid ", pid, ") died during ", op, ": ", describe_status(status),
                 crumb.empty() ? "" : "; " + crumb, "; last worker stderr: ", tail.empty() ? "(none)" : tail,
                 " (", io_error, "); the worker is restarted and the model reloaded");
}

// A worker that died between requests costs no request: it is reaped here and the caller starts a new one.
void Supervisor::discard_if_dead_locked() {
  int status = 0;
  if (pid_ <= 0 || ::waitpid(pid_, &status, WNOHANG) != pid_) return;
  std::fprintf(stderr, "dacpp: warn: the idle worker (pid %d) %s; starting a new one\n", static_cast<int>(pid_),
               describe_status(status).c_str());
  pid_ = -1;
  close_worker_locked();
}

bool Supervisor::reload_locked(std::string* error) {
  worker::WorkerRequest load;
  *load.mutable_load() = *loaded_;
  worker::WorkerReply reply;
  std::string io_error;
  if (!transact_locked(load, &reply, &io_error, nullptr)) {
    *error = reap_locked("the model reload", io_error);
    return false;
  }
  if (!reply.ok()) {
    *error = "reloading the model failed: " + reply.message();
    set_loaded(std::nullopt);
    return false;
  }
  return true;
}

bool Supervisor::exchange_locked(const worker::WorkerRequest& request, bool is_load, const char* op,
                                 worker::WorkerReply* reply, std::string* io_error) {
  bool delivered = false;
  if (transact_locked(request, reply, io_error, &delivered)) return true;
  if (delivered) return false;
  // The worker died before it saw the request (between requests): start another and send it once more.
  std::fprintf(stderr, "dacpp: warn: %s\n", reap_locked(op, *io_error).c_str());
  std::string err;
  if (spawn_locked(&err) && (!loaded_ || is_load || reload_locked(&err)))
    return transact_locked(request, reply, io_error, nullptr);
  *io_error = err;
  return false;
}

ServerError Supervisor::crashed_locked(const char* op, const std::string& io_error) {
  ServerError e = error_from_condition(ServerCondition::WorkerCrashed, reap_locked(op, io_error));
  std::fprintf(stderr, "dacpp: error: %s\n", e.message.c_str());
  std::lock_guard<std::mutex> g(restart_mu_);
  if (loaded_ && !stopping_) {
    restart_pending_ = true;
    restart_cv_.notify_all();
  }
  return e;
}

CallResult Supervisor::call(const worker::WorkerRequest& request, const char* op) {
  CallResult out;
  std::unique_lock<std::timed_mutex> lock(call_mu_);
  {
    std::lock_guard<std::mutex> g(restart_mu_);
    if (stopping_) {
      out.error = error_from_condition(ServerCondition::ShuttingDown, str_cat(op, ": the server is shutting down"));
      return out;
    }
  }
  const bool is_load = request.op_case() == worker::WorkerRequest::kLoad;
  const bool is_free = request.op_case() == worker::WorkerRequest::kFree;
  discard_if_dead_locked();
  if (pid_ < 0) {
    std::string err;
    if (is_free) {  // no worker, nothing held
      set_loaded(std::nullopt);
      out.ok = true;
      return out;
    }
    if (!spawn_locked(&err) || (loaded_ && !is_load && !reload_locked(&err))) {
      failed_ = true;
      out.error = error_from_condition(ServerCondition::WorkerStart, str_cat(op, ": cannot start the worker: ", err));
      return out;
    }
  }
  if (is_load) set_loaded(std::nullopt);  // the worker frees the old model first
  busy_ = true;
  std::string io_error;
  const bool exchanged = exchange_locked(request, is_load, op, &out.reply, &io_error);
  busy_ = false;
  if (!exchanged && pid_ < 0) {
    failed_ = true;
    out.error = error_from_condition(ServerCondition::WorkerStart, str_cat(op, ": cannot restart the worker: ", io_error));
    return out;
  }
  if (!exchanged) {
    out.error = crashed_locked(op, io_error);
    return out;
  }
  if (!out.reply.ok()) {
    out.error = error_from_worker(out.reply.error_code(), out.reply.server_tag(), out.reply.message());
    return out;
  }
  if (is_load) set_loaded(request.load());
  if (is_free) set_loaded(std::nullopt);
  failed_ = false;
  out.ok = true;
  return out;
}

void Supervisor::restart_loop() {
  std::unique_lock<std::mutex> lk(restart_mu_);
  for (;;) {
    restart_cv_.wait(lk, [this] { return restart_pending_ || stopping_; });
    if (stopping_) return;
    restart_pending_ = false;
    lk.unlock();
    {
      std::unique_lock<std::timed_mutex> call_lock(call_mu_);
      if (pid_ < 0 && loaded_) {
        std::string err;
        const bool ok = spawn_locked(&err) && reload_locked(&err);
        failed_ = !ok;
        if (ok)
          std::fprintf(stderr, "dacpp: warn: worker restarted (pid %d) and model '%s' reloaded\n",
                       static_cast<int>(pid_), loaded_->model().c_str());
        else
          std::fprintf(stderr, "dacpp: error: worker restart failed: %s\n", err.c_str());
      }
    }
    lk.lock();
  }
}

void Supervisor::stop(int grace_ms) {
  {
    std::lock_guard<std::mutex> g(restart_mu_);
    stopping_ = true;
  }
  restart_cv_.notify_all();
  if (restarter_.joinable()) restarter_.join();
  std::unique_lock<std::timed_mutex> lock(call_mu_, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::milliseconds(grace_ms))) {
    const pid_t p = worker_pid_.load();
    if (p > 0) ::kill(p, SIGKILL);  // the in-flight call sees the socket close and reaps the worker
    lock.lock();
  }
  close_worker_locked();
}

}  // namespace dacpp::server
