// Download progress on stderr: a redrawn one-line bar when stderr is a terminal, else a log line every 10 s.
// Shows bytes done / total, percent and the transfer rate (bytes of this transfer only, not resumed ones).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace dacpp::cli {

class DownloadProgress {
 public:
  // label: the file name shown; start_bytes: bytes already present (resumed).
  DownloadProgress(std::string label, int64_t start_bytes);
  // total < 0: unknown. Throttled; cheap to call often.
  void update(int64_t done, int64_t total);
  // Final line (the bar is completed and ended with a newline).
  void finish(int64_t done);

 private:
  double rate(int64_t done) const;  // bytes/s since start
  void draw(int64_t done, int64_t total);

  using Clock = std::chrono::steady_clock;
  std::string label_;
  int64_t start_bytes_;
  int64_t last_total_ = -1;
  bool tty_;
  Clock::time_point start_;
  Clock::time_point last_;
};

// "12.3 MB", "512 B": a byte count for people.
std::string human_bytes(double bytes);

}  // namespace dacpp::cli
