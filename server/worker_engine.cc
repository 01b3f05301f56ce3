#include "server/worker_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine/model_nested.h"
#include "engine/ray_pose_options.h"
#include "io/writers.h"
#include "server/image_source.h"
#include "server/load_settings.h"
#include "server/scene_export.h"

namespace dacpp::server {
namespace {

void append_tensor(const Tensor& t, google::protobuf::RepeatedField<float>* out) {
  const float* p = t.data<float>();
  out->Add(p, p + t.numel());
}

// The LocalAI REST default (spec §3.5): depth, confidence, pose and sky all on, points off. Outputs the model
// lacks are then skipped instead of refused, so /v1/depth with no include_* flags works on every model.
bool is_default_set(const backend::DepthRequest& r) {
  return r.include_depth() && r.include_confidence() && r.include_pose() && r.include_sky() && !r.include_points();
}

void check_capabilities(const backend::DepthRequest& r, const models::ModelConfig& cfg) {
  DACPP_CHECK(std::isfinite(r.points_conf_thresh()), ErrorCode::InvalidArgument,
              "Depth: points_conf_thresh is not finite");
  for (const std::string& e : r.exports())
    DACPP_CHECK(e == "glb" || e == "colmap", ErrorCode::InvalidArgument, "Depth: unknown export '", e,
                "' (expected \"glb\" or \"colmap\")");
  const models::ModelCapabilities caps = cfg.capabilities();
  const std::string who = "model '" + cfg.checkpoint_name + "' (" + models::model_kind_name(cfg.kind) + ")";
  DACPP_CHECK(!r.include_points() || caps.pose, ErrorCode::Unsupported, "Depth: include_points needs a camera pose; ",
              who, " has no pose head");
  DACPP_CHECK(r.exports().empty() || caps.pose, ErrorCode::Unsupported, "Depth: exports (", r.exports(0),
              ") need a camera pose; ", who, " has no pose head");
  if (is_default_set(r)) return;
  DACPP_CHECK(!r.include_confidence() || caps.conf, ErrorCode::Unsupported, "Depth: include_confidence: ", who,
              " has no confidence output");
  DACPP_CHECK(!r.include_pose() || caps.pose, ErrorCode::Unsupported, "Depth: include_pose: ", who,
              " has no pose head");
  DACPP_CHECK(!r.include_sky() || caps.sky, ErrorCode::Unsupported, "Depth: include_sky: ", who, " has no sky head");
}

void fill_response(const backend::DepthRequest& r, const DepthResult& res, const io::Image& image,
                   backend::DepthResponse* out) {
  out->set_height(static_cast<int32_t>(res.depth.dim(0)));
  out->set_width(static_cast<int32_t>(res.depth.dim(1)));
  out->set_is_metric(res.units == "metres");
  if (r.include_depth()) append_tensor(res.depth, out->mutable_depth());
  if (r.include_confidence() && res.conf.defined()) append_tensor(res.conf, out->mutable_confidence());
  if (r.include_sky() && res.sky.defined()) append_tensor(res.sky, out->mutable_sky());
  if (r.include_pose() && res.has_pose) {
    for (double v : res.extrinsics) out->add_extrinsics(static_cast<float>(v));
    for (double v : res.intrinsics) out->add_intrinsics(static_cast<float>(v));
  }
  if (r.include_points() || !r.exports().empty()) {
    const io::SceneView view = scene_view(res, image);
    if (r.include_points()) fill_points(view, r.points_conf_thresh(), out);
    for (const std::string& path :
         write_exports(view, std::vector<std::string>(r.exports().begin(), r.exports().end()), r.dst()))
      out->add_export_paths(path);
  }
}

void check_response_size(const backend::DepthResponse& out, uint64_t max_bytes) {
  if (max_bytes == 0) return;
  const size_t bytes = out.ByteSizeLong();
  if (bytes <= max_bytes) return;
  throw ConditionError{
      ServerCondition::ResponseTooLarge,
      str_cat("Depth: the response would be ", bytes, " bytes, over the ", max_bytes, "-byte limit (map ",
              out.width(), "x", out.height(), ": depth ", out.depth_size(), ", confidence ", out.confidence_size(),
              ", sky ", out.sky_size(), ", points ", out.num_points(),
              " values); request fewer outputs (include_*), raise points_conf_thresh or use a smaller size")};
}

}  // namespace

std::string WorkerEngine::load(const backend::ModelOptions& options) {
  free();
  const std::string path = resolve_model_path(options);
  LoadSettings settings = parse_load_settings(options);
  std::shared_ptr<const Model> model = load_model(path, settings.load);
  validate_ray_pose(model->config(), settings.run);
  runner_ = std::make_unique<Runner>(model, settings.runner);
  model_ = std::move(model);
  run_options_ = settings.run;
  name_ = model_->config().checkpoint_name.empty() ? path : model_->config().checkpoint_name;
  return name_;
}

void WorkerEngine::free() {
  runner_.reset();
  model_.reset();
  name_.clear();
}

void WorkerEngine::require_model() const {
  if (!runner_) throw ConditionError{ServerCondition::NoModel, "no model is loaded: call LoadModel first"};
}

void WorkerEngine::depth(const backend::DepthRequest& request, uint64_t max_bytes, backend::DepthResponse* out) {
  require_model();
  check_capabilities(request, model_->config());
  const io::Image image = load_request_image(request.src(), "DepthRequest.src");
  const DepthResult res = runner_->run(image, run_options_);
  fill_response(request, res, image, out);
  check_response_size(*out, max_bytes);
}

void WorkerEngine::generate_image(const backend::GenerateImageRequest& request) {
  require_model();
  DACPP_CHECK(!request.dst().empty(), ErrorCode::InvalidArgument, "GenerateImage: dst (the output PNG path) is empty");
  const io::Image image = load_request_image(request.src(), "GenerateImageRequest.src");
  const DepthResult res = runner_->run(image, run_options_);
  const float* d = res.depth.data<float>();
  const size_t n = static_cast<size_t>(res.depth.numel());
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(d[i])) lo = std::min(lo, d[i]), hi = std::max(hi, d[i]);
  std::vector<uint8_t> grey(n, 0);
  const float span = hi > lo ? hi - lo : 1.f;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(d[i])) grey[i] = static_cast<uint8_t>(std::lround(255.f * (d[i] - lo) / span));
  io::write_png8_gray(request.dst(), grey.data(), static_cast<int>(res.depth.dim(0)),
                      static_cast<int>(res.depth.dim(1)));
}

std::string WorkerEngine::predict(const backend::PredictOptions& request) {
  require_model();
  DACPP_CHECK(request.images_size() > 0, ErrorCode::InvalidArgument, "Predict: Images is empty (expected one image)");
  const io::Image image = load_request_image(request.images(0), "PredictOptions.Images[0]");
  const DepthResult res = runner_->run(image, run_options_);
  const float* d = res.depth.data<float>();
  float lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < res.depth.numel(); ++i)
    if (std::isfinite(d[i])) lo = std::min(lo, d[i]), hi = std::max(hi, d[i]);
  nlohmann::json j;
  j["depth_w"] = res.depth.dim(1);
  j["depth_h"] = res.depth.dim(0);
  j["depth_min"] = std::isfinite(lo) ? lo : 0.f;
  j["depth_max"] = std::isfinite(hi) ? hi : 0.f;
  j["extrinsics"] = std::vector<double>(res.extrinsics.begin(), res.extrinsics.end());
  j["intrinsics"] = std::vector<double>(res.intrinsics.begin(), res.intrinsics.end());
  j["units"] = res.units;
  return j.dump();
}

}  // namespace dacpp::server
