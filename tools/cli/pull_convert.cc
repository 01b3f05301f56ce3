#include "cli/pull_convert.h"

#include "formats/import.h"

namespace dacpp::cli {

void convert_checkpoint(const std::string& src, const std::string& dst, double max_depth, const std::string& name) {
  ImportOptions opt;
  opt.max_depth = static_cast<float>(max_depth);
  opt.name = name;
  write_gguf(*import_checkpoint(src, opt), dst);
}

}  // namespace dacpp::cli
