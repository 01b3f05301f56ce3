#include "cli/image_inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.h"

namespace dacpp::cli {
namespace {

bool has_image_extension(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* e : {".jpg", ".jpeg", ".png", ".bmp", ".tga", ".gif", ".psd", ".hdr", ".pic"})
    if (ext == e) return true;
  return false;
}

}  // namespace

std::vector<std::string> expand_image_inputs(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::error_code ec;
    if (!fs::exists(a, ec)) DACPP_THROW(ErrorCode::NotFound, "image '", a, "': no such file or directory");
    if (!fs::is_directory(a, ec)) {
      out.push_back(a);
      continue;
    }
    std::vector<std::string> found;
    for (const fs::directory_entry& e : fs::directory_iterator(a, ec))
      if (e.is_regular_file(ec) && has_image_extension(e.path())) found.push_back(e.path().string());
    DACPP_CHECK(!ec, ErrorCode::Io, "cannot list folder '", a, "': ", ec.message());
    DACPP_CHECK(!found.empty(), ErrorCode::InvalidArgument, "folder '", a, "' holds no image files");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace dacpp::cli
