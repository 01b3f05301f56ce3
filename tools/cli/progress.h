// A progress indicator on stderr for multi-image runs: a redrawn bar when stderr is a terminal, otherwise one
// line per item ("[3/10] photo.jpg"), so logs stay readable.
#pragma once

#include <cstddef>
#include <string>

namespace dacpp::cli {

class Progress {
 public:
  Progress(size_t total, bool enabled);
  void step(const std::string& label);  // call before working on the next item
  void clear();                          // erase the bar before printing an error line
  void finish();

 private:
  size_t total_, done_ = 0;
  bool enabled_, tty_;
};

}  // namespace dacpp::cli
