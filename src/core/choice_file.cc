#include "core/choice_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "core/fault.h"
#include "core/log.h"

namespace dacpp {
namespace {

constexpr const char* kMagic = "dacpp-choice-v1";

bool storable(const std::string& s) { return s.find_first_of("\t\n\r") == std::string::npos; }

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    const size_t tab = line.find('\t', begin);
    out.push_back(line.substr(begin, tab == std::string::npos ? std::string::npos : tab - begin));
    if (tab == std::string::npos) return out;
    begin = tab + 1;
  }
}

// A non-negative decimal int, nothing else.
bool parse_choice(const std::string& s, int& v) {
  if (s.empty() || s.size() > 9) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0;
}

}  // namespace

ChoiceFile::ChoiceFile(std::string path, std::string stamp) : path_(std::move(path)), stamp_(std::move(stamp)) {}

std::map<std::string, int> ChoiceFile::load() const {
  std::map<std::string, int> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) {  // a missing file is an empty table; one that exists but cannot be opened is worth a warning
    if (::access(path_.c_str(), F_OK) == 0) log::warn("choice file '", path_, "': cannot be read; ignored");
    return out;
  }
  std::string line;
  size_t number = 0, skipped = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::vector<std::string> f = split_tabs(line);
    int choice = 0;
    if (line.size() > kMaxLineBytes || f.size() != 4 || f[0] != kMagic || f[2].empty() || !parse_choice(f[3], choice)) {
      if (++skipped <= 3) log::warn("choice file '", path_, "' line ", number, ": malformed; ignored");
      continue;
    }
    if (f[1] == stamp_) out.emplace(f[2], choice);
  }
  if (in.bad()) log::warn("choice file '", path_, "': read error after line ", number, "; the rest ignored");
  if (skipped > 3) log::warn("choice file '", path_, "': ", skipped, " malformed lines ignored in all");
  return out;
}

void ChoiceFile::append(const std::string& key, int choice) const {
  if (!storable(key) || !storable(stamp_) || key.empty() || choice < 0) {
    log::debug("choice file '", path_, "': key '", key, "' → ", choice, " not stored (tab, newline or negative)");
    return;
  }
  const std::string line = str_cat(kMagic, "\t", stamp_, "\t", key, "\t", choice, "\n");
  if (line.size() > kMaxLineBytes + 1) {
    log::debug("choice file '", path_, "': key '", key, "' not stored (line over ", kMaxLineBytes, " bytes)");
    return;
  }
  int err = 0;
  if (fault::hit("choice_file.append")) {
    err = EIO;
  } else {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      err = errno;
    } else {
      const ssize_t n = ::write(fd, line.data(), line.size());
      if (n != static_cast<ssize_t>(line.size())) err = n < 0 ? errno : EIO;
      if (::close(fd) != 0 && err == 0) err = errno;
    }
  }
  if (err != 0 && !warned_.exchange(true))
    log::warn("choice file '", path_, "': cannot append (", std::strerror(err),
              "); choices are kept for this process only");
}

std::string ChoiceFile::candidates_key(const std::string& key, const std::vector<std::string>& labels) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64-bit; each label followed by a 0 byte as its end
  const auto mix = [&h](unsigned char byte) { h = (h ^ byte) * 1099511628211ull; };
  for (const std::string& label : labels) {
    for (const char ch : label) mix(static_cast<unsigned char>(ch));
    mix(0);
  }
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
  return key + " {" + std::to_string(labels.size()) + " candidates, fnv1a " + digest + "}";
}

}  // namespace dacpp
