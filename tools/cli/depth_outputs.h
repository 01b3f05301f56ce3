// Writing one image's DepthResult as the files the user asked for, named <stem>.depth.pfm, <stem>.depth.png,
// <stem>.depth.npy, <stem>.color.png, <stem>.sky.pfm in the output folder. Returns a JSON summary of what was
// written and of the values. Errors: Io naming the file (a failed write is never silent).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/depth_result.h"
#include "io/colormap.h"

namespace dacpp::cli {

struct OutputSelection {
  bool pfm = false;
  bool png16 = false;
  bool npy = false;
  bool color = false;
  io::ColorMap color_map = io::ColorMap::Turbo;
  bool sky = false;
};

nlohmann::json write_depth_outputs(const DepthResult& r, const std::string& out_dir, const std::string& stem,
                                   const OutputSelection& sel);

}  // namespace dacpp::cli
