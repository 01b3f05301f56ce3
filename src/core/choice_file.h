// ChoiceFile: a persisted table of per-shape choices (the CUDA autotuner's: conv algorithm, cuBLASLt algorithm,
// attention tiling), so a restarted process reuses them instead of timing every shape again and makes the same
// choices as the process that tuned them (the bf16 outputs then agree bit for bit across restarts).
//
// One text line per choice:   dacpp-choice-v1 <TAB> <stamp> <TAB> <key> <TAB> <choice>
// The stamp names what the choices depend on (the CUDA side uses GPU name, compute capability, cuBLASLt and CUDA
// runtime versions, dacpp version); lines with another stamp are ignored, so one file serves several GPUs or builds.
// Reading never fails the caller: a missing file is an empty table, an unreadable file or malformed line (wrong
// field count, a choice that is not a non-negative integer, an overlong line) is skipped with a warning naming the
// file and line. Appends are one write(2) of a whole line with O_APPEND, so processes and threads sharing a file
// interleave whole lines; a failed append (read-only directory, full disk) is a warning, once per object, never an
// error: tuning already has its answer in memory. Fault site "choice_file.append" (tests).
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace dacpp {

class ChoiceFile {
 public:
  ChoiceFile(std::string path, std::string stamp);

  // The choices stored under this stamp; for a key stored twice, the first line wins (as in the in-memory table,
  // where the first choice made stands).
  std::map<std::string, int> load() const;
  // Appends key → choice. Keys and stamps holding a tab, newline or carriage return, and negative choices, are not
  // stored (a debug log line says so).
  void append(const std::string& key, int choice) const;

  const std::string& path() const { return path_; }

  // The key under which a choice among `labels` (the candidates, in order) is stored: `key` and the candidates'
  // count and 64-bit FNV-1a digest, so that another list (other candidates, another order) misses, and the line
  // stays short however many candidates there are (an attention shape has over a hundred).
  static std::string candidates_key(const std::string& key, const std::vector<std::string>& labels);

  static constexpr size_t kMaxLineBytes = 4096;

 private:
  std::string path_, stamp_;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace dacpp
