// The 3D scene outputs declared in depth_outputs.h: flags, DepthResult → SceneView, scene.ply / scene.glb / COLMAP.
#include <cmath>
#include <filesystem>

#include "cli/depth_outputs.h"
#include "core/error.h"
#include "io/colmap_writer.h"
#include "io/glb_writer.h"
#include "io/ply_writer.h"
#include "pipeline/cv_resize.h"

namespace dacpp::cli {
namespace {

std::string in_dir(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

io::PointCloudOptions cloud_options(const ExportOptions& o) {
  io::PointCloudOptions p;
  p.conf_percentile = o.conf_percentile;
  p.max_points = o.max_points;
  return p;
}

// The values of a [H, W] f32 host tensor, checked against the depth size.
std::vector<float> plane(const Tensor& t, int h, int w, const char* what) {
  DACPP_CHECK(t.defined() && t.rank() == 2 && t.dim(0) == h && t.dim(1) == w, ErrorCode::Internal, what,
              " is not a ", h, "x", w, " map");
  const float* p = t.data<float>();
  return std::vector<float>(p, p + static_cast<size_t>(h) * w);
}

}  // namespace

void add_export_flags(CLI::App* sub, ExportOptions& o) {
  sub->add_flag("--ply", o.ply, "With --views: write scene.ply, the confidence-filtered coloured point cloud");
  sub->add_flag("--glb", o.glb, "With --views: write scene.glb, glTF points and camera frustums");
  o.colmap_option = sub->add_option("--colmap", o.colmap_dir,
                                    "With --views: write a COLMAP model (.bin and .txt) into DIR "
                                    "(default <output>/colmap)")
                        ->expected(0, 1)
                        ->type_name("[DIR]");
  sub->add_option("--conf-percentile", o.conf_percentile,
                  "3D exports keep points whose confidence reaches this percentile of all views' (default 40)");
  sub->add_option("--max-points", o.max_points, "PLY/GLB: at most this many points, sampled (default 1000000)");
}

void resolve_export_options(ExportOptions& o, const Model& model, const std::string& model_name,
                            const std::string& out_dir, bool views) {
  o.colmap = o.colmap_option != nullptr && o.colmap_option->count() > 0;
  if (o.colmap && o.colmap_dir.empty()) o.colmap_dir = in_dir(out_dir, "colmap");
  DACPP_CHECK(std::isfinite(o.conf_percentile) && o.conf_percentile >= 0 && o.conf_percentile <= 100,
              ErrorCode::InvalidArgument, "--conf-percentile must be between 0 and 100, got ", o.conf_percentile);
  DACPP_CHECK(o.max_points >= 0, ErrorCode::InvalidArgument, "--max-points must be >= 0, got ", o.max_points);
  if (!wants_scene_exports(o)) return;
  const char* flag = o.ply ? "--ply" : o.glb ? "--glb" : "--colmap";
  DACPP_CHECK(model.config().capabilities().pose, ErrorCode::Unsupported, flag, ": model '", model_name, "' (",
              models::model_kind_name(model.config().kind),
              ") predicts no camera pose; only DA3 any-view models with a camera decoder do");
  DACPP_CHECK(views, ErrorCode::InvalidArgument, flag,
              " exports the scene of one multi-view pass: add --views (one image is a scene of one view)");
}

bool wants_scene_exports(const ExportOptions& o) { return o.ply || o.glb || o.colmap; }

io::SceneView to_scene_view(const DepthResult& r, const io::Image& image, const std::string& image_path) {
  DACPP_CHECK(r.depth.defined() && r.depth.rank() == 2, ErrorCode::Internal, "result for '", image_path,
              "' has no [H, W] depth");
  io::SceneView v;
  v.stem = std::filesystem::path(image_path).stem().string();
  v.image_name = std::filesystem::path(image_path).filename().string();
  v.height = static_cast<int>(r.depth.dim(0));
  v.width = static_cast<int>(r.depth.dim(1));
  v.source_width = r.source_width;
  v.source_height = r.source_height;
  v.depth = plane(r.depth, v.height, v.width, "depth");
  if (r.conf.defined()) v.conf = plane(r.conf, v.height, v.width, "confidence");
  v.has_pose = r.has_pose;
  if (r.has_pose) {
    v.w2c = r.extrinsics;
    v.K = r.intrinsics;
    // Intrinsics are in processed pixels; depth may have been resized back to the input (--resize-to-input).
    const int pw = r.processed_width > 0 ? r.processed_width : v.width;
    const int ph = r.processed_height > 0 ? r.processed_height : v.height;
    for (int c = 0; c < 3; ++c) {
      v.K[c] *= static_cast<double>(v.width) / pw;
      v.K[3 + c] *= static_cast<double>(v.height) / ph;
    }
  }
  if (!image.empty()) {
    v.rgb.resize(static_cast<size_t>(v.width) * v.height * 3);
    const bool shrink = v.width <= image.width() && v.height <= image.height();
    pipeline::cv_resize(image.data(), image.height(), image.width(), 3, v.rgb.data(), v.height, v.width,
                        shrink ? pipeline::CvInterpolation::Area : pipeline::CvInterpolation::Cubic);
  }
  return v;
}

nlohmann::json write_scene_exports(const std::vector<io::SceneView>& views, const std::string& out_dir,
                                   const ExportOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  const io::PointCloudOptions opt = cloud_options(o);
  if (o.ply) {
    const std::string path = in_dir(out_dir, "scene.ply");
    j["ply_points"] = io::write_scene_ply(path, views, opt);
    j["ply"] = path;
  }
  if (o.glb) {
    const std::string path = in_dir(out_dir, "scene.glb");
    j["glb_points"] = io::write_scene_glb(path, views, opt).points;
    j["glb"] = path;
  }
  if (o.colmap) {
    j["colmap_points"] = io::write_scene_colmap(o.colmap_dir, views, opt).points;
    j["colmap"] = o.colmap_dir;
  }
  return j;
}

nlohmann::json export_scene(const std::vector<DepthResult>& results, const std::vector<io::Image>& images,
                            const std::vector<std::string>& paths, const std::string& out_dir,
                            const ExportOptions& o) {
  if (!wants_scene_exports(o)) return nlohmann::json::object();
  DACPP_CHECK(results.size() == images.size() && results.size() == paths.size(), ErrorCode::Internal,
              "export_scene: ", results.size(), " results for ", images.size(), " images and ", paths.size(),
              " paths");
  std::vector<io::SceneView> views;
  for (size_t i = 0; i < results.size(); ++i) views.push_back(to_scene_view(results[i], images[i], paths[i]));
  return write_scene_exports(views, out_dir, o);
}

}  // namespace dacpp::cli
