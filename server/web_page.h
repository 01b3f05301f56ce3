// The web viewer served at GET / : one self-contained HTML page (no external resources) that posts a photo to
// /v1/depth and shows the depth map in a colour map and the back-projected point cloud on a canvas.
#pragma once

#include <string>

namespace dacpp::server {

std::string web_page_html();

}  // namespace dacpp::server
