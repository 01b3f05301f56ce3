// Crash breadcrumb (design.md §4, issue "Never crash" item 7): a process-wide record of what the engine is doing
// — stage, model name, input size — and a fatal-signal handler that prints it as one line on stderr before the
// process dies, so whatever supervises the process sees the cause in the last stderr line:
//
//   dacpp: fatal: signal=SIGSEGV stage=backbone model=da2_tiny_rel input=64x48
//
// The record is process-wide and "last writer wins": with several Runners on several threads the line shows the
// most recent stage set by any of them. Setters never allocate and never throw; the handler uses only write(2)
// and raise(3) (async-signal-safe). Unset fields print as "-".
#pragma once

#include <string>

namespace dacpp::crash {

// `stage` must be a string with static storage duration (a literal): only the pointer is stored.
void set_stage(const char* stage);
const char* stage();
// Copied (truncated to 127 bytes; control characters and spaces replaced by '_').
void set_model(const std::string& name);
// The input image size being processed; <= 0 clears it.
void set_input(int width, int height);

// Formats the breadcrumb line (with trailing '\n') for `signo` into buf; returns its length. Async-signal-safe.
size_t format_line(int signo, char* buf, size_t cap);

// Installs the handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (SA_RESETHAND, on an alternate stack so a
// stack overflow still reports). The handler writes the line and re-raises the signal with the default action,
// so the exit status still says which signal killed the process. Idempotent.
void install_crash_handler();

// Test-only crash site: when DACPP_FAULT names `site` (e.g. "worker.crash") and this pass is the configured one,
// raises SIGSEGV in this thread. Used to check the breadcrumb end to end; costs one relaxed load otherwise.
void crash_point(const char* site);

// Sets the stage for a scope and restores the previous one on exit (also when an exception leaves the scope).
class ScopedStage {
 public:
  explicit ScopedStage(const char* stage) : prev_(crash::stage()) { set_stage(stage); }
  ~ScopedStage() { set_stage(prev_); }
  ScopedStage(const ScopedStage&) = delete;
  ScopedStage& operator=(const ScopedStage&) = delete;

 private:
  const char* prev_;
};

}  // namespace dacpp::crash
