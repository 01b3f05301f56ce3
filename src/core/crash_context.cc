#include "core/crash_context.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "core/fault.h"

namespace dacpp::crash {
namespace {

constexpr size_t kNameCap = 128;

// Two name slots: a setter fills the unpublished one, then publishes its index, so the handler never reads a
// half-written name from a single setter. Concurrent setters may still interleave; reads stay bounded and
// NUL-terminated either way.
struct Breadcrumb {
  std::atomic<const char*> stage{nullptr};
  char names[2][kNameCap] = {};
  std::atomic<int> name_slot{-1};
  std::atomic<int> width{0};
  std::atomic<int> height{0};
};

Breadcrumb g_crumb;  // process-wide by nature: the signal handler has no other way to reach it
std::atomic<bool> g_installed{false};
alignas(16) char g_alt_stack[64 * 1024];

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

const char* signal_name(int signo) {
  switch (signo) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return nullptr;
  }
}

// Bounded append helpers over a fixed buffer; they never write past cap - 1.
struct LineBuf {
  char* buf;
  size_t cap;
  size_t len = 0;
  void put(const char* s, size_t max = static_cast<size_t>(-1)) {
    for (size_t i = 0; s[i] != '\0' && i < max && len + 1 < cap; ++i) buf[len++] = s[i];
  }
  void put_uint(unsigned long v) {
    char digits[24];
    size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0 && n < sizeof digits);
    while (n > 0 && len + 1 < cap) buf[len++] = digits[--n];
  }
};

void handler(int signo) {
  char line[320];
  const size_t n = format_line(signo, line, sizeof line);
  size_t off = 0;
  while (off < n) {
    const ssize_t w = write(STDERR_FILENO, line + off, n - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  raise(signo);  // SA_RESETHAND restored the default action: this terminates with the original signal
}

}  // namespace

void set_stage(const char* stage) { g_crumb.stage.store(stage, std::memory_order_release); }

const char* stage() { return g_crumb.stage.load(std::memory_order_acquire); }

void set_model(const std::string& name) {
  const int cur = g_crumb.name_slot.load(std::memory_order_acquire);
  const int slot = cur == 0 ? 1 : 0;
  char* dst = g_crumb.names[slot];
  size_t i = 0;
  for (; i < name.size() && i + 1 < kNameCap; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    dst[i] = (c <= ' ' || c == 0x7f) ? '_' : static_cast<char>(c);
  }
  dst[i] = '\0';
  g_crumb.name_slot.store(i == 0 ? -1 : slot, std::memory_order_release);
}

void set_input(int width, int height) {
  const bool ok = width > 0 && height > 0;
  g_crumb.width.store(ok ? width : 0, std::memory_order_relaxed);
  g_crumb.height.store(ok ? height : 0, std::memory_order_relaxed);
}

size_t format_line(int signo, char* buf, size_t cap) {
  if (cap == 0) return 0;
  LineBuf out{buf, cap};
  out.put("dacpp: fatal: signal=");
  const char* name = signal_name(signo);
  if (name != nullptr) out.put(name);
  else out.put_uint(static_cast<unsigned long>(signo < 0 ? 0 : signo));
  out.put(" stage=");
  const char* st = g_crumb.stage.load(std::memory_order_acquire);
  out.put(st != nullptr && st[0] != '\0' ? st : "-", 64);
  out.put(" model=");
  const int slot = g_crumb.name_slot.load(std::memory_order_acquire);
  if (slot == 0 || slot == 1) out.put(g_crumb.names[slot], kNameCap - 1);
  else out.put("-");
  out.put(" input=");
  const int w = g_crumb.width.load(std::memory_order_relaxed);
  const int h = g_crumb.height.load(std::memory_order_relaxed);
  if (w > 0 && h > 0) {
    out.put_uint(static_cast<unsigned long>(w));
    out.put("x");
    out.put_uint(static_cast<unsigned long>(h));
  } else {
    out.put("-");
  }
  buf[out.len++] = '\n';  // put() always leaves this one byte free
  return out.len;
}

void install_crash_handler() {
  if (g_installed.exchange(true)) return;
  // The alternate stack serves the installing (main) thread, where a stack overflow is most likely.
  stack_t ss{};
  ss.ss_sp = g_alt_stack;
  ss.ss_size = sizeof g_alt_stack;
  ss.ss_flags = 0;
  const bool alt = sigaltstack(&ss, nullptr) == 0;
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | (alt ? SA_ONSTACK : 0);
  for (int s : kSignals) sigaction(s, &sa, nullptr);
}

void crash_point(const char* site) {
  if (fault::hit(site)) raise(SIGSEGV);
}

}  // namespace dacpp::crash
