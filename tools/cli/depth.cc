// dacpp depth -m MODEL IMAGE... [-o DIR] — depth for one or many images (or folders of images).
// Each image is processed on its own; a failed image is reported and the others still run; the exit status is
// that of the first failure. An image that cannot be decoded is invalid input (exit 3) like a bad model file, even
// though the decoder reports it as InvalidArgument (which is exit 2, kept for bad flags).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/depth_outputs.h"
#include "cli/image_inputs.h"
#include "cli/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "io/image.h"

namespace dacpp::cli {
namespace {

struct DepthOptions {
  std::string model;
  std::vector<std::string> images;
  std::string out_dir = ".";
  bool pfm = false, png = false, npy = false, sky = false, json = false;
  std::string color;
  int threads = 0;
  int size = 0;
  bool resize_to_input = false;
  float focal = 0;
  float max_depth = 0;
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
  if (o.focal > 0)
    DACPP_CHECK(cfg.kind == models::ModelKind::Da3Mono && cfg.metric, ErrorCode::InvalidArgument,
                "--focal applies to DA3 metric models only; '", o.model, "' is ", models::model_kind_name(cfg.kind),
                cfg.metric ? " metric" : "");
}

std::string stem_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// The exit status for a failure on one image; `decoding`: the error came from reading/decoding the image file.
int image_exit_status(const Error& e, bool decoding) {
  if (decoding && e.code() == ErrorCode::InvalidArgument) return 3;
  return error_code_exit_status(e.code());
}

constexpr const char* kExitCodes =
    "Exit codes: 0 ok, 2 usage (bad flag or value), 3 invalid input (missing or undecodable image, bad model "
    "file, unwritable output), 4 unsupported (e.g. --sky on a model without a sky head), 5 backend/device, "
    "6 out of memory, 1 internal. With several images the others still run; the status is the first failure's.";

}  // namespace

Command register_depth(CLI::App& app) {
  auto o = std::make_shared<DepthOptions>();
  CLI::App* sub = app.add_subcommand("depth", "Estimate depth for images");
  sub->footer(kExitCodes);
  sub->add_option("-m,--model", o->model, "Model: .gguf, .pth checkpoint or checkpoint folder")->required();
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
  return {sub, [o]() {
            const OutputSelection sel = selection(*o);
            LoadOptions lo;
            lo.import.max_depth = o->max_depth;
            std::shared_ptr<const Model> model = Model::load(o->model, lo);
            validate(*o, *model, sel);
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
            Progress progress(inputs.size(), /*enabled=*/inputs.size() > 1);
            nlohmann::json results = nlohmann::json::array();
            int status = 0;
            for (const std::string& path : inputs) {
              progress.step(path);
              bool decoding = true;
              try {
                io::Image img = io::load_image(path);
                decoding = false;
                DepthResult r = runner.run(img, run);
                nlohmann::json j = write_depth_outputs(r, o->out_dir, stem_of(path), sel);
                j["input"] = path;
                results.push_back(j);
              } catch (const Error& e) {
                progress.clear();
                std::fprintf(stderr, "dacpp: error: %s\n", e.what());
                if (status == 0) status = image_exit_status(e, decoding);
                results.push_back({{"input", path}, {"error", e.what()}, {"code", error_code_name(e.code())}});
              }
            }
            progress.finish();
            if (o->json) std::printf("%s\n", results.dump(2).c_str());
            return status;
          }};
}

}  // namespace dacpp::cli
