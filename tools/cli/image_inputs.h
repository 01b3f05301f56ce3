// Expanding the IMAGE arguments of `dacpp depth`: files are taken as given, folders contribute their image files
// (by extension, sorted by name, not recursive). Errors: NotFound for a missing path; InvalidArgument for a folder
// with no images.
#pragma once

#include <string>
#include <vector>

namespace dacpp::cli {

std::vector<std::string> expand_image_inputs(const std::vector<std::string>& args);

}  // namespace dacpp::cli
