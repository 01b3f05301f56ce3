#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace dacpp::cli {

Progress::Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), tty_(isatty(2) != 0) {}

void Progress::step(const std::string& label) {
  if (!enabled_) return;
  ++done_;
  if (!tty_) {
    std::fprintf(stderr, "[%zu/%zu] %s\n", done_, total_, label.c_str());
    return;
  }
  const int width = 30;
  const int filled = total_ ? static_cast<int>(width * (done_ - 1) / total_) : 0;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(width, '.');
  std::fprintf(stderr, "\r[%s] %zu/%zu %-40.40s", bar.c_str(), done_, total_, label.c_str());
  std::fflush(stderr);
}

void Progress::clear() {
  if (enabled_ && tty_) std::fprintf(stderr, "\r%-80s\r", "");
}

void Progress::finish() {
  if (enabled_ && tty_) std::fprintf(stderr, "\r%-80s\r", "");
}

}  // namespace dacpp::cli
