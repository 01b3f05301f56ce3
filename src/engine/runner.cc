#include "engine/runner.h"

#include <chrono>
#include <cmath>

#include "backends/cpu/cpu_context.h"
#include "backends/cuda/cuda_ops.h"
#include "core/crash_context.h"
#include "core/log.h"
#include "engine/device_io.h"
#include "engine/postprocess.h"
#include "engine/ray_pose_options.h"
#include "models/camera_decoder.h"
#include "pipeline/preprocess.h"
#include "pipeline/view_batch.h"

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

void validate_rays(const models::ModelConfig& cfg, const RunOptions& o) {
  DACPP_CHECK(!o.want_rays || cfg.capabilities().rays, ErrorCode::Unsupported, "run: rays asked of '",
              cfg.checkpoint_name, "' (", models::model_kind_name(cfg.kind), "), which has no ray head ",
              "(head.scratch.rn1_aux.*; only DA3 any-view models converted with the aux head have one)");
}

void validate(const models::ModelConfig& cfg, const RunOptions& o) {
  validate_rays(cfg, o);
  DACPP_CHECK(o.size == 0 || (o.size >= 14 && o.size <= 8192), ErrorCode::InvalidArgument, "run: size ", o.size,
              " is outside 14..8192 (0 = model default)");
  DACPP_CHECK(std::isfinite(o.focal_px) && o.focal_px >= 0, ErrorCode::InvalidArgument, "run: focal_px ",
              o.focal_px, " must be finite and >= 0");
  DACPP_CHECK(o.focal_px == 0 || (cfg.kind == models::ModelKind::Da3Mono && cfg.metric), ErrorCode::InvalidArgument,
              "run: focal_px is only meaningful for a DA3 metric model; '", cfg.checkpoint_name, "' is ",
              models::model_kind_name(cfg.kind), cfg.metric ? " metric" : "");
}

std::shared_ptr<const Model> non_null(std::shared_ptr<const Model> m) {
  DACPP_CHECK(m != nullptr, ErrorCode::InvalidArgument, "Runner: null model");
  return m;
}

}  // namespace

Runner::DeviceMemory Runner::device_memory() {
  if (ctx_.device().is_cpu()) return {};
  const cuda::MemoryStats st = cuda::memory_stats(ctx_.cuda());
  return DeviceMemory{st.live_bytes, st.peak_bytes, cuda::device_used_bytes(ctx_.cuda())};
}

Runner::Runner(std::shared_ptr<const Model> model, const RunnerOptions& options)
    : model_(non_null(std::move(model))),
      limits_(options.limits),
      ctx_(model_->device(), options.threads, options.prim_cache_capacity, model_->act_dtype()),
      arena_(make_runner_arena(ctx_)),
      pos_cache_(options.pos_cache_capacity),
      graphs_(options.graph_cache_capacity),
      cuda_graphs_(options.cuda_graphs),
      row_chunks_(options.row_chunks) {
  validate_limits(limits_);
  DACPP_CHECK(row_chunks_ >= 1 && row_chunks_ <= models::RunState::kMaxRowChunks, ErrorCode::InvalidArgument,
              "runner: row_chunks ", row_chunks_, " is not within 1..", models::RunState::kMaxRowChunks);
  if (!ctx_.device().is_cpu())
    for (int i = 1; i < cuda::max_lanes(); ++i) lane_arenas_.push_back(make_lane_arena(ctx_));
  // A CPU model in bf16 runs attention's products in bf16 too (its activations stay f32).
  if (ctx_.device().is_cpu()) ctx_.cpu().set_bf16_products(model_->precision() == DType::BF16);
}

void Runner::set_op_profile(ops::OpProfile* profile) {
  DACPP_CHECK(profile == nullptr || ctx_.device().is_cpu(), ErrorCode::Unsupported,
              "op profiles time CPU forwards only (on ", device_name(ctx_.device()),
              " an op returns when its kernels are queued; scripts/gpu/kernel_trace.cc times GPU kernels)");
  ctx_.set_profile(profile);
}

ops::Context& Runner::host_ctx() {
  if (ctx_.device().is_cpu()) return ctx_;
  if (!host_ctx_) host_ctx_ = std::make_unique<ops::Context>(Device::cpu(), ctx_.pool().size());
  return *host_ctx_;
}

models::ModelOutputs Runner::outputs_to_host(models::ModelOutputs out, models::ForwardDumps* dumps) {
  model_->net().finish(ctx_, out, dumps);
  for (Tensor* t : {&out.depth, &out.sky, &out.conf, &out.rays, &out.ray_conf, &out.extrinsics, &out.intrinsics})
    *t = output_to_host(ctx_, *t);
  return out;
}

models::ModelOutputs Runner::forward_raw(const Tensor& input, models::ForwardDumps* dumps,
                                        const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const Clock::time_point t0 = Clock::now();
  crash::ScopedStage stage("backbone");  // the model sets "head" when it gets there
  crash::crash_point("worker.crash");
  arena_.reset();
  for (HostArena& a : lane_arenas_) a.reset();
  layers::Exec ex{ctx_, arena_};
  models::RunState rs{ex, pos_cache_, dumps};
  rs.lane_arenas = &lane_arenas_;
  rs.row_chunks = row_chunks_;
  rs.ref_view = options.ref_view_strategy;
  rs.want_rays = options.want_rays;
  apply_ray_pose_options(model_->config(), options, rs);
  const Tensor x = input_to_device(ctx_, arena_, input);
  const Clock::time_point t1 = Clock::now();
  models::ModelOutputs out;
  if (ctx_.device().is_cpu() || dumps != nullptr || !cuda_graphs_) {
    out = model_->net().forward(rs, x);
  } else {
    const std::string key = str_cat(shape_str(x.shape()), dtype_name(x.dtype()), options.want_rays ? "+rays" : "",
                                    options.ray_pose ? "+raypose" : "",
                                    static_cast<int>(options.ref_view_strategy));
    out = forward_graphed(rs, x, key);
  }
  if (!time_phases_) return outputs_to_host(std::move(out), dumps);
  const Clock::time_point t2 = Clock::now();
  Clock::time_point t3 = t2;  // the CPU computed it all under launch
  if (!ctx_.device().is_cpu()) {
    cuda::synchronize(ctx_.cuda(), "phase timing: the forward");
    t3 = Clock::now();
  }
  out = outputs_to_host(std::move(out), dumps);
  const Clock::time_point t4 = Clock::now();
  phases_ = Phases{ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4)};
  return out;
}

models::ModelOutputs Runner::forward_graphed(models::RunState& rs, const Tensor& x, const std::string& key) {
  switch (graphs_.plan(key, x.raw())) {
    case GraphCache::Plan::Eager:
      return model_->net().forward(rs, x);
    case GraphCache::Plan::Replay:
      cuda::launch(ctx_.cuda(), *graphs_.entry().graph);
      return graphs_.entry().outputs;
    case GraphCache::Plan::Capture:
      break;
  }
  const HostArena::Mark mark = arena_.mark();
  cuda::begin_capture(ctx_.cuda());
  try {
    models::ModelOutputs out = model_->net().forward(rs, x);
    graphs_.entry().graph = cuda::end_capture(ctx_.cuda());
    graphs_.entry().outputs = out;
    cuda::launch(ctx_.cuda(), *graphs_.entry().graph);  // capturing recorded the work; now run it
    return out;
  } catch (const Error& e) {
    // Not capturable (a host synchronisation inside the forward): forget what the capture touched and run eagerly.
    cuda::abort_capture(ctx_.cuda());
    graphs_.entry().graph.reset();
    graphs_.entry().runs = -1;
    pos_cache_.clear();
    arena_.rewind(mark);
    for (HostArena& a : lane_arenas_) a.reset();
    log::info("CUDA graph capture of ", key, " failed (", e.what(), "); this geometry runs eagerly");
    return model_->net().forward(rs, x);
  }
}

std::optional<double> Runner::graph_replay_ms(int reps) {
  if (ctx_.device().is_cpu() || graphs_.captured() == 0 || !graphs_.entry().graph) return std::nullopt;
  return cuda::time_replays_ms(ctx_.cuda(), *graphs_.entry().graph, reps);
}

ForwardResult Runner::forward(const Tensor& input, bool dump_stages, const RunOptions& options) {
  validate_rays(model_->config(), options);
  ForwardResult r;
  models::ModelOutputs out = forward_raw(input, dump_stages ? &r.dumps : nullptr, options);
  // An output only `out` holds (a GPU runner's fresh host copy) is handed over; one that may be shared (a CPU
  // arena view, a cached tensor) is cloned.
  const auto own = [](const Tensor& t) { return t.storage() && t.storage().use_count() == 1 ? t : t.clone(); };
  r.depth = own(out.depth);
  for (auto [from, to] : {std::pair<const Tensor*, Tensor*>{&out.sky, &r.sky}, {&out.conf, &r.conf},
                          {&out.rays, &r.rays}, {&out.ray_conf, &r.ray_conf}, {&out.extrinsics, &r.extrinsics},
                          {&out.intrinsics, &r.intrinsics}})
    if (from->defined()) *to = own(*from);
  r.ref_view = out.ref_view;
  return r;
}

DepthResult Runner::run(const io::Image& image, const RunOptions& options) {
  const models::ModelConfig& cfg = model_->config();
  if (cfg.capabilities().multiview) return std::move(run_views({image}, options).front());
  validate(cfg, options);
  DACPP_CHECK(!image.empty(), ErrorCode::InvalidArgument, "run: empty image");
  check_run_limits(limits_, image, options, preprocess_options(cfg, options.size));
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
  models::ModelOutputs out = forward_raw(pre.input, nullptr, options);
  res.timings.push_back({"forward", ms_since(t0)});

  t0 = Clock::now();
  crash::set_stage("postprocess");
  postprocess(host_ctx(), cfg, out, options, res);
  res.timings.push_back({"postprocess", ms_since(t0)});
  return res;
}

std::vector<DepthResult> Runner::run_views(const std::vector<io::Image>& images, const RunOptions& options) {
  const models::ModelConfig& cfg = model_->config();
  if (!cfg.capabilities().multiview) {
    DACPP_CHECK(images.size() == 1, ErrorCode::InvalidArgument, "run: '", cfg.checkpoint_name, "' is a ",
                models::model_kind_name(cfg.kind), " (single-view) model; run its ", images.size(),
                " images one at a time");
    return {run(images.front(), options)};
  }
  validate(cfg, options);
  check_view_count(limits_, images.size());
  const pipeline::PreprocessOptions po = preprocess_options(cfg, options.size);
  for (const io::Image& image : images) {
    DACPP_CHECK(!image.empty(), ErrorCode::InvalidArgument, "run: empty image");
    check_run_limits(limits_, image, options, po);
  }
  crash::ScopedStage stage("preprocess");
  crash::set_model(cfg.checkpoint_name.empty() ? model_->file().path() : cfg.checkpoint_name);
  crash::set_input(images.front().width(), images.front().height());
  auto t0 = Clock::now();
  std::vector<pipeline::Preprocessed> pre;
  for (const io::Image& image : images) pre.push_back(pipeline::preprocess(image, po));
  pipeline::ViewBatch batch = pipeline::batch_views(pre);
  pre.clear();
  const double pre_ms = ms_since(t0);

  t0 = Clock::now();
  models::ModelOutputs out = forward_raw(batch.input, nullptr, options);
  const double fwd_ms = ms_since(t0);

  t0 = Clock::now();
  crash::set_stage("postprocess");
  std::vector<DepthResult> results(images.size());
  for (size_t v = 0; v < images.size(); ++v) {
    DepthResult& res = results[v];
    res.processed_height = batch.height;
    res.processed_width = batch.width;
    res.source_height = images[v].height();
    res.source_width = images[v].width();
    postprocess_view(host_ctx(), out, static_cast<int64_t>(v), options, res);
  }
  const double post_ms = ms_since(t0);
  for (DepthResult& res : results) res.timings = {{"preprocess", pre_ms}, {"forward", fwd_ms}, {"postprocess", post_ms}};
  return results;
}

}  // namespace dacpp
