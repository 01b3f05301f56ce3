// Writing one image's DepthResult as the files the user asked for, named <stem>.depth.pfm, <stem>.depth.png,
// <stem>.depth.npy, <stem>.color.png, <stem>.sky.pfm in the output folder. Returns a JSON summary of what was
// written and of the values. Errors: Io naming the file (a failed write is never silent).
//
// The 3D outputs of a DA3 any-view pass (ExportOptions): scene.ply, scene.glb and a COLMAP model
// (io/ply_writer.h, io/glb_writer.h, io/colmap_writer.h). Hook-up in a command: add_export_flags at registration,
// resolve_export_options once the model is loaded, export_scene after the pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/depth_result.h"
#include "engine/model.h"
#include "io/colormap.h"
#include "io/image.h"
#include "io/scene.h"

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

struct ExportOptions {
  bool ply = false;  // --ply: <out>/scene.ply
  bool glb = false;  // --glb: <out>/scene.glb
  bool colmap = false;
  std::string colmap_dir;         // --colmap [DIR]: DIR, or <out>/colmap when given without one
  double conf_percentile = 40.0;  // --conf-percentile
  int64_t max_points = 1000000;   // --max-points (PLY, GLB)
  const CLI::Option* colmap_option = nullptr;
};

// Registers --ply, --glb, --colmap [DIR], --conf-percentile, --max-points on `sub`; `o` must outlive the parse.
void add_export_flags(CLI::App* sub, ExportOptions& o);

// After parsing: sets colmap/colmap_dir and checks the values; when a scene output is asked for, checks that the
// model predicts poses (Unsupported) and that the run is one --views pass (InvalidArgument), naming the flag.
void resolve_export_options(ExportOptions& o, const Model& model, const std::string& model_name,
                            const std::string& out_dir, bool views);

bool wants_scene_exports(const ExportOptions& o);

// One result as a SceneView: depth and confidence at the result's size, intrinsics rescaled to it from the
// processed size, colours from `image` resized to it (INTER_AREA when shrinking, else INTER_CUBIC), the image file
// name for COLMAP. `image` may be empty (grey points).
io::SceneView to_scene_view(const DepthResult& r, const io::Image& image, const std::string& image_path);

// scene.ply / scene.glb / the COLMAP model for the views of one pass, as asked; returns {"ply": path, "ply_points":
// n, "glb": ..., "glb_points": n, "colmap": dir, "colmap_points": n} for what was written.
nlohmann::json write_scene_exports(const std::vector<io::SceneView>& views, const std::string& out_dir,
                                   const ExportOptions& o);

// The two above for one --views pass: results[i] came from images[i], read from paths[i].
nlohmann::json export_scene(const std::vector<DepthResult>& results, const std::vector<io::Image>& images,
                            const std::vector<std::string>& paths, const std::string& out_dir,
                            const ExportOptions& o);

}  // namespace dacpp::cli
