// dacpp depth -m MODEL IMAGE... [-o DIR] — depth for one or many images (or folders of images).
// Each image is processed on its own; a failed image is reported and the others still run; the exit status is
// that of the first failure. With --views (DA3 any-view models) the images are the views of one scene and run in
// one cross-view pass: depth, confidence and poses share the reference view's frame; any failure fails the pass. An image that cannot be decoded is invalid input (exit 3) like a bad model file, even
// though the decoder reports it as InvalidArgument (which is exit 2, kept for bad flags).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/depth_outputs.h"
#include "cli/device_flags.h"
#include "cli/image_inputs.h"
#include "cli/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "engine/model.h"
#include "engine/model_nested.h"
#include "engine/runner.h"
#include "io/image.h"
#include "io/pose_json.h"
#include "io/writers.h"
#include "models/reference_view.h"

namespace dacpp::cli {
namespace {

struct DepthOptions {
  std::string model;
  DeviceFlags device;
  std::string metric_model;
  std::vector<std::string> images;
  std::string out_dir = ".";
  bool pfm = false, png = false, npy = false, sky = false, json = false;
  std::string color;
  int threads = 0;
  int size = 0;
  bool resize_to_input = false;
  float focal = 0;
  float max_depth = 0;
  bool views = false, conf = false, pose = false;
  bool ray_pose = false;
  uint64_t ray_pose_seed = 42;
  std::string ref_view = "saddle_balanced";
  ExportOptions exports;  // --ply / --glb / --colmap (depth_outputs.h)
};

OutputSelection selection(const DepthOptions& o) {
  OutputSelection s;
  s.pfm = o.pfm;
  s.png16 = o.png;
  s.npy = o.npy;
  s.sky = o.sky;
  s.color = !o.color.empty();
  if (s.color) s.color_map = io::parse_color_map(o.color);
  // Nothing asked for: a 16-bit depth PNG and a turbo visualisation.
  if (!s.pfm && !s.png16 && !s.npy && !s.color && !s.sky) s.png16 = s.color = true;
  return s;
}

void validate(const DepthOptions& o, const Model& model, const OutputSelection& sel) {
  DACPP_CHECK(o.threads >= 0, ErrorCode::InvalidArgument, "--threads must be >= 0, got ", o.threads);
  DACPP_CHECK(o.size == 0 || (o.size >= 14 && o.size <= 4096), ErrorCode::InvalidArgument,
              "--size must be between 14 and 4096, got ", o.size);
  DACPP_CHECK(o.focal >= 0, ErrorCode::InvalidArgument, "--focal must be > 0, got ", o.focal);
  const models::ModelConfig& cfg = model.config();
  if (sel.sky)
    DACPP_CHECK(cfg.head.has_sky, ErrorCode::Unsupported, "--sky: model '", o.model, "' (",
                models::model_kind_name(cfg.kind), ") has no sky head; only DA3 mono/metric models do");
  const models::ModelCapabilities caps = cfg.capabilities();
  const char* kind = models::model_kind_name(cfg.kind);
  DACPP_CHECK(!o.views || caps.multiview, ErrorCode::Unsupported, "--views: model '", o.model, "' (", kind,
              ") is single-view; only DA3 any-view models run several views in one pass");
  DACPP_CHECK(!o.conf || caps.conf, ErrorCode::Unsupported, "--conf: model '", o.model, "' (", kind,
              ") has no confidence output; only DA3 any-view models do");
  DACPP_CHECK(!o.ray_pose || caps.rays, ErrorCode::Unsupported, "--ray-pose: model '", o.model, "' (", kind,
              ") has no ray head (head.scratch.rn1_aux.*); only DA3 any-view models converted with the aux head ",
              "(`dacpp convert --with-aux`, or a checkpoint folder) have one");
  DACPP_CHECK(!o.pose || caps.pose || (o.ray_pose && caps.rays), ErrorCode::Unsupported, "--pose: model '", o.model, "' (", kind,
              ") has no pose head (camera decoder cam.*); only DA3 any-view models do");
  if (o.focal > 0)
    DACPP_CHECK(cfg.kind == models::ModelKind::Da3Mono && cfg.metric, ErrorCode::InvalidArgument,
                "--focal applies to DA3 metric models only; '", o.model, "' is ", models::model_kind_name(cfg.kind),
                cfg.metric ? " metric" : "");
}

std::string stem_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// The any-view extras of one result: <stem>.conf.pfm and <stem>.pose.json, added to its JSON summary.
void write_view_extras(const DepthOptions& o, const DepthResult& r, const std::string& stem, nlohmann::json& j) {
  const std::string base = (std::filesystem::path(o.out_dir) / stem).string();
  if (o.conf && r.conf.defined()) {
    io::write_pfm(base + ".conf.pfm", r.conf.data<float>(), static_cast<int>(r.conf.dim(0)),
                  static_cast<int>(r.conf.dim(1)));
    j["files"]["conf_pfm"] = base + ".conf.pfm";
  }
  if (o.pose && r.has_pose) {
    io::SceneView v;
    v.stem = stem;
    v.width = r.processed_width;
    v.height = r.processed_height;
    v.source_width = r.source_width;
    v.source_height = r.source_height;
    v.has_pose = true;
    v.w2c = r.extrinsics;
    v.K = r.intrinsics;
    io::write_pose_json(v, base + ".pose.json");
    j["files"]["pose_json"] = base + ".pose.json";
    j["pose"] = io::pose_json(v);
  }
}

// The exit status for a failure on one image; `decoding`: the error came from reading/decoding the image file.
int image_exit_status(const Error& e, bool decoding) {
  if (decoding && e.code() == ErrorCode::InvalidArgument) return 3;
  return error_code_exit_status(e.code());
}

constexpr const char* kExitCodes =
    "Exit codes: 0 ok, 2 usage (bad flag or value), 3 invalid input (missing or undecodable image, bad model "
    "file, unwritable output), 4 unsupported (e.g. --sky on a model without a sky head), 5 backend/device, "
    "6 out of memory, 1 internal. With several images the others still run; the status is the first failure's.";

// --views: decode every image (any failure ends the run: the pass needs them all), one cross-view pass, then the
// outputs of each view.
int run_scene(const DepthOptions& o, Runner& runner, const RunOptions& run, const std::vector<std::string>& inputs,
              const OutputSelection& sel) {
  // The decoded images are kept for the scene exports' point colours.
  std::vector<io::Image> images;
  for (const std::string& path : inputs) {
    try {
      images.push_back(io::load_image(path));
    } catch (const Error& e) {
      std::fprintf(stderr, "dacpp: error: %s\n", e.what());
      return image_exit_status(e, /*decoding=*/true);
    }
  }
  const std::vector<DepthResult> results = runner.run_views(images, run);
  nlohmann::json summary = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::json j = write_depth_outputs(results[i], o.out_dir, stem_of(inputs[i]), sel);
    write_view_extras(o, results[i], stem_of(inputs[i]), j);
    j["input"] = inputs[i];
    summary.push_back(j);
  }
  nlohmann::json out = summary;
  if (wants_scene_exports(o.exports)) {
    out = {{"views", summary}, {"scene", export_scene(results, images, inputs, o.out_dir, o.exports)}};
  }
  if (o.json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

Command register_depth(CLI::App& app) {
  auto o = std::make_shared<DepthOptions>();
  CLI::App* sub = app.add_subcommand("depth", "Estimate depth for images");
  sub->footer(kExitCodes);
  sub->add_option("-m,--model", o->model, "Model: .gguf, .pth checkpoint or checkpoint folder")->required();
  sub->add_option("--metric-model", o->metric_model,
                  "DA3 nested from two files (depth-anything.cpp layout): -m is the any-view file, this the metric "
                  "branch (m_vit.* / m_head.*); depth in metres");
  sub->add_option("images", o->images, "Image files or folders of images")->required();
  sub->add_option("-o,--output", o->out_dir, "Output folder (created if missing)");
  sub->add_flag("--pfm", o->pfm, "Write <stem>.depth.pfm (float depth)");
  sub->add_flag("--png", o->png, "Write <stem>.depth.png (16-bit, min..max normalised)");
  sub->add_flag("--npy", o->npy, "Write <stem>.depth.npy (float32)");
  sub->add_option("--color", o->color, "Write <stem>.color.png with this colour map: turbo, spectral, gray");
  sub->add_flag("--sky", o->sky, "Write <stem>.sky.pfm (DA3 mono/metric)");
  sub->add_flag("--json", o->json, "Print a JSON summary on stdout");
  sub->add_option("--threads", o->threads, "CPU threads (default: all cores)");
  sub->add_option("--size", o->size, "Processing size (DA2: shortest side, default 518; DA3: longest, 504)");
  sub->add_flag("--resize-to-input", o->resize_to_input, "DA3: resize outputs to the input image size");
  sub->add_option("--focal", o->focal, "DA3 metric: focal length in pixels of the input image → metres");
  sub->add_option("--max-depth", o->max_depth, "DA2 metric checkpoints: output scale in metres (20 or 80)");
  sub->add_flag("--views", o->views, "DA3 any-view: the images are views of one scene, run in one pass");
  sub->add_flag("--conf", o->conf, "Write <stem>.conf.pfm (DA3 any-view depth confidence)");
  sub->add_flag("--pose", o->pose, "Write <stem>.pose.json (DA3 any-view camera, OpenCV world-to-camera)");
  sub->add_option("--ref-view", o->ref_view,
                  "DA3 any-view reference view (the world frame) for >= 3 views: saddle_balanced, first, middle, "
                  "saddle_sim_range");
  sub->add_flag("--ray-pose", o->ray_pose,
                "DA3 any-view: poses from the ray head (RANSAC, estimated principal point) instead of the camera "
                "decoder; needs the ray head");
  sub->add_option("--ray-pose-seed", o->ray_pose_seed, "Seed of the --ray-pose RANSAC draws (default 42)");
  add_export_flags(sub, o->exports);
  add_device_flags(sub, o->device);
  return {sub, [o]() {
            const OutputSelection sel = selection(*o);
            LoadOptions lo;
            apply_device_flags(o->device, lo);
            lo.import.max_depth = o->max_depth;
            lo.import.with_aux = o->ray_pose;  // a checkpoint folder keeps its ray head for --ray-pose
            lo.metric_model = o->metric_model;
            std::shared_ptr<const Model> model = load_model(o->model, lo);
            validate(*o, *model, sel);
            resolve_export_options(o->exports, *model, o->model, o->out_dir, o->views);
            const std::vector<std::string> inputs = expand_image_inputs(o->images);
            std::error_code ec;
            std::filesystem::create_directories(o->out_dir, ec);
            DACPP_CHECK(std::filesystem::is_directory(o->out_dir, ec), ErrorCode::Io, "cannot create output folder '",
                        o->out_dir, "'", ec ? ": " + ec.message() : "");
            RunnerOptions ro;
            ro.threads = o->threads;
            Runner runner(model, ro);
            RunOptions run;
            run.size = o->size;
            run.resize_to_input = o->resize_to_input;
            run.focal_px = o->focal;
            run.ref_view_strategy = models::parse_ref_view_strategy(o->ref_view);
            run.ray_pose = o->ray_pose;
            run.ray_pose_seed = o->ray_pose_seed;
            if (o->views) return run_scene(*o, runner, run, inputs, sel);
            Progress progress(inputs.size(), /*enabled=*/inputs.size() > 1);
            nlohmann::json results = nlohmann::json::array();
            int status = 0;
            const auto failed = [&](const std::string& path, const Error& e, bool decoding) {
              progress.clear();
              std::fprintf(stderr, "dacpp: error: %s\n", e.what());
              if (status == 0) status = image_exit_status(e, decoding);
              results.push_back({{"input", path}, {"error", e.what()}, {"code", error_code_name(e.code())}});
            };
            // An image's files are written by a task of its own while the next images are decoded and run (a
            // 4000×3000 map's PNGs and colour map take longer than a GPU forward), so a folder of photos does not
            // wait on them one after another. At most `writers` results wait (a 12 MP one holds ~50 MB); summaries
            // and errors keep the input order.
            struct Pending {
              std::string path;
              std::future<nlohmann::json> written;
            };
            std::deque<Pending> pending;
            const size_t writers = static_cast<size_t>(std::clamp(ThreadPool::hardware_threads() / 4, 2, 4));
            const auto collect_oldest = [&] {
              Pending p = std::move(pending.front());
              pending.pop_front();
              try {
                nlohmann::json j = p.written.get();
                j["input"] = p.path;
                results.push_back(j);
              } catch (const Error& e) {
                failed(p.path, e, /*decoding=*/false);
              }
            };
            for (const std::string& path : inputs) {
              progress.step(path);
              bool decoding = true;
              try {
                io::Image img = io::load_image(path);
                decoding = false;
                DepthResult r = runner.run(img, run);
                const std::string stem = stem_of(path);
                pending.push_back({path, std::async(std::launch::async, [&o, &sel, stem, r = std::move(r)] {
                                     nlohmann::json j = write_depth_outputs(r, o->out_dir, stem, sel);
                                     write_view_extras(*o, r, stem, j);
                                     return j;
                                   })});
              } catch (const Error& e) {
                while (!pending.empty()) collect_oldest();  // the earlier images' summaries come first
                failed(path, e, decoding);
              }
              while (pending.size() >= writers) collect_oldest();
            }
            while (!pending.empty()) collect_oldest();
            progress.finish();
            if (o->json) std::printf("%s\n", results.dump(2).c_str());
            return status;
          }};
}

}  // namespace dacpp::cli
