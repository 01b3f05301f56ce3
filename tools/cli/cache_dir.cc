#include "cli/cache_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace dacpp::cli {

std::string cache_dir() {
  if (const char* c = std::getenv("DACPP_CACHE"); c != nullptr && *c != '\0') return c;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return (std::filesystem::path(home) / ".cache" / "dacpp").string();
}

void default_tuning_file() {
  if (std::getenv("DACPP_TUNING_FILE") != nullptr) return;
  const std::string dir = cache_dir();
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  ::setenv("DACPP_TUNING_FILE", (std::filesystem::path(dir) / "cuda-tuning.tsv").c_str(), 0);
}

}  // namespace dacpp::cli
