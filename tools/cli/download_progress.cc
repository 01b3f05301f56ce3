#include "cli/download_progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace dacpp::cli {
namespace {

constexpr double kTtyIntervalS = 0.1;
constexpr double kLogIntervalS = 10.0;
constexpr int kBarWidth = 30;

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 4) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

DownloadProgress::DownloadProgress(std::string label, int64_t start_bytes)
    : label_(std::move(label)), start_bytes_(start_bytes), tty_(isatty(STDERR_FILENO) == 1),
      start_(Clock::now()), last_(start_) {}

double DownloadProgress::rate(int64_t done) const {
  const double s = seconds(Clock::now() - start_);
  return s > 0 ? static_cast<double>(done - start_bytes_) / s : 0.0;
}

void DownloadProgress::draw(int64_t done, int64_t total) {
  const std::string speed = human_bytes(rate(done)) + "/s";
  if (!tty_) {
    if (total > 0)
      std::fprintf(stderr, "dacpp: pull: %s: %s / %s (%.0f%%), %s\n", label_.c_str(), human_bytes(done).c_str(),
                   human_bytes(total).c_str(), 100.0 * done / total, speed.c_str());
    else
      std::fprintf(stderr, "dacpp: pull: %s: %s, %s\n", label_.c_str(), human_bytes(done).c_str(), speed.c_str());
    return;
  }
  std::string bar;
  if (total > 0) {
    const int filled = static_cast<int>(kBarWidth * static_cast<double>(done) / total);
    bar = "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] ";
    std::fprintf(stderr, "\r%s %s%3.0f%%  %s / %s  %s   ", label_.c_str(), bar.c_str(), 100.0 * done / total,
                 human_bytes(done).c_str(), human_bytes(total).c_str(), speed.c_str());
  } else {
    std::fprintf(stderr, "\r%s  %s  %s   ", label_.c_str(), human_bytes(done).c_str(), speed.c_str());
  }
}

void DownloadProgress::update(int64_t done, int64_t total) {
  if (total > 0) last_total_ = total;
  const Clock::time_point now = Clock::now();
  if (seconds(now - last_) < (tty_ ? kTtyIntervalS : kLogIntervalS)) return;
  last_ = now;
  draw(done, last_total_);
}

void DownloadProgress::finish(int64_t done) {
  if (tty_) {
    draw(done, done);
    std::fputc('\n', stderr);
    return;
  }
  std::fprintf(stderr, "dacpp: pull: %s: done, %s in %.1f s (%s/s)\n", label_.c_str(), human_bytes(done).c_str(),
               seconds(Clock::now() - start_), human_bytes(rate(done)).c_str());
}

}  // namespace dacpp::cli
