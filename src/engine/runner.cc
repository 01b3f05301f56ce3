#include "engine/runner.h"

#include <chrono>
#include <cmath>

#include "core/crash_context.h"
#include "engine/postprocess.h"
#include "pipeline/preprocess.h"

namespace dacpp {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double undo_f32(float v) { return std::round(static_cast<double>(v) * 1e6) / 1e6; }

pipeline::PreprocessOptions preprocess_options(const models::ModelConfig& cfg, int size) {
  pipeline::PreprocessOptions o;
  if (cfg.kind == models::ModelKind::Da2) o.policy = pipeline::PreprocessPolicy::LowerBound518Da2;
  else if (cfg.img.resize_mode == models::ResizeMode::LowerBound) o.policy = pipeline::PreprocessPolicy::LowerBoundDa3;
  else o.policy = pipeline::PreprocessPolicy::UpperBoundDa3;
  o.target = size > 0 ? size : cfg.img.resize_target;
  for (size_t i = 0; i < 3; ++i) {
    o.mean[i] = undo_f32(cfg.img.mean[i]);  // the file holds f32; upstream uses the decimal constants
    o.std[i] = undo_f32(cfg.img.std[i]);
  }
  return o;
}

void validate(const models::ModelConfig& cfg, const RunOptions& o) {
  DACPP_CHECK(o.size == 0 || (o.size >= 14 && o.size <= 8192), ErrorCode::InvalidArgument, "run: size ", o.size,
              " is outside 14..8192 (0 = model default)");
  DACPP_CHECK(std::isfinite(o.focal_px) && o.focal_px >= 0, ErrorCode::InvalidArgument, "run: focal_px ",
              o.focal_px, " must be finite and >= 0");
  DACPP_CHECK(o.focal_px == 0 || (cfg.kind == models::ModelKind::Da3Mono && cfg.metric), ErrorCode::InvalidArgument,
              "run: focal_px is only meaningful for a DA3 metric model; '", cfg.checkpoint_name, "' is ",
              models::model_kind_name(cfg.kind), cfg.metric ? " metric" : "");
}

}  // namespace

Runner::Runner(std::shared_ptr<const Model> model, const RunnerOptions& options)
    : model_(std::move(model)), ctx_(Device::cpu(), options.threads), pos_cache_(options.pos_cache_capacity) {
  DACPP_CHECK(model_ != nullptr, ErrorCode::InvalidArgument, "Runner: null model");
}

models::ModelOutputs Runner::forward_raw(const Tensor& input, models::ForwardDumps* dumps) {
  crash::ScopedStage stage("backbone");  // the model sets "head" when it gets there
  crash::crash_point("worker.crash");
  arena_.reset();
  layers::Exec ex{ctx_, arena_};
  models::RunState rs{ex, pos_cache_, dumps};
  return model_->net().forward(rs, input);
}

ForwardResult Runner::forward(const Tensor& input, bool dump_stages) {
  ForwardResult r;
  models::ModelOutputs out = forward_raw(input, dump_stages ? &r.dumps : nullptr);
  r.depth = out.depth.clone();
  if (out.sky.defined()) r.sky = out.sky.clone();
  return r;
}

DepthResult Runner::run(const io::Image& image, const RunOptions& options) {
  const models::ModelConfig& cfg = model_->config();
  validate(cfg, options);
  DACPP_CHECK(!image.empty(), ErrorCode::InvalidArgument, "run: empty image");
  crash::ScopedStage stage("preprocess");
  crash::set_model(cfg.checkpoint_name.empty() ? model_->file().path() : cfg.checkpoint_name);
  crash::set_input(image.width(), image.height());
  DepthResult res;
  auto t0 = Clock::now();
  pipeline::Preprocessed pre = pipeline::preprocess(image, preprocess_options(cfg, options.size));
  res.timings.push_back({"preprocess", ms_since(t0)});
  res.processed_height = pre.height;
  res.processed_width = pre.width;
  res.source_height = image.height();
  res.source_width = image.width();

  t0 = Clock::now();
  models::ModelOutputs out = forward_raw(pre.input, nullptr);
  res.timings.push_back({"forward", ms_since(t0)});

  t0 = Clock::now();
  crash::set_stage("postprocess");
  postprocess(ctx_, cfg, out, options, res);
  res.timings.push_back({"postprocess", ms_since(t0)});
  return res;
}

}  // namespace dacpp
