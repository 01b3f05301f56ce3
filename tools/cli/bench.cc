// dacpp bench -m MODEL [--size 518|WxH] [--batch N] [--runs N] [--profile] — forward latency, throughput, load time
// and peak RSS, on a deterministic random (never zero) normalised input; with --profile (CPU) where the time goes, op
// by op. Prints a table, or JSON with --json.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/device_flags.h"
#include "core/error.h"
#include "engine/device_select.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "ops/op_profile.h"

namespace dacpp::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string size = "518";
  int batch = 1;
  int runs = 10;
  int warmup = 2;
  int threads = 0;
  DeviceFlags device;
  bool json = false;
  bool rays = false;
  bool profile = false;
  int row_chunks = 1;
};

constexpr size_t kProfileRows = 25;  // op rows of the text profile (--json has them all)

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "518" → 518×518; "504x336" → W=504, H=336. Both must be positive multiples of the patch size.
void parse_size(const std::string& s, int patch, int* h, int* w) {
  int a = 0, b = 0;
  char x = 0, extra = 0;
  const int n = std::sscanf(s.c_str(), "%d%c%d%c", &a, &x, &b, &extra);
  if (n == 1) b = a;
  DACPP_CHECK((n == 1 || (n == 3 && (x == 'x' || x == 'X'))) && a > 0 && b > 0, ErrorCode::InvalidArgument,
              "--size must be N or WxH, got '", s, "'");
  DACPP_CHECK(a % patch == 0 && b % patch == 0 && a <= 4096 && b <= 4096, ErrorCode::InvalidArgument, "--size ", s,
              ": sides must be multiples of ", patch, " and at most 4096");
  *w = a;
  *h = b;
}

long peak_rss_kb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// The text form of j["profile"] (per forward): each op kind, then the costliest op and operand shapes.
void print_profile(const nlohmann::json& p) {
  const double fwd = p["forward_ms"].get<double>();
  const auto pct = [&](double ms) { return fwd > 0 ? 100.0 * ms / fwd : 0.0; };
  std::printf("op profile, per forward (mean of %d): forward %.2f ms = ops %.2f + outside ops %.2f (%.1f %%)\n",
              p["forwards"].get<int>(), fwd, p["ops_ms"].get<double>(), p["outside_ops_ms"].get<double>(),
              pct(p["outside_ops_ms"].get<double>()));
  std::printf("  by op:");
  for (const auto& k : p["by_op"])
    std::printf(" %s %.2f ms (%.1f %%);", k["op"].get<std::string>().c_str(), k["ms"].get<double>(),
                pct(k["ms"].get<double>()));
  std::printf("\n  %-24s %-48s %7s %9s %6s\n", "op", "operands", "calls", "ms", "%");
  size_t rows = 0;
  for (const auto& e : p["ops"]) {
    if (rows++ == kProfileRows) break;
    std::printf("  %-24s %-48s %7.1f %9.3f %6.1f\n", e["op"].get<std::string>().c_str(),
                e["shapes"].get<std::string>().c_str(), e["calls"].get<double>(), e["ms"].get<double>(),
                pct(e["ms"].get<double>()));
  }
}

}  // namespace

Command register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Time the forward pass of a model");
  sub->add_option("-m,--model", o->model, "Model: .gguf, .pth checkpoint or checkpoint folder")->required();
  sub->add_option("--size", o->size, "Input size: N (square) or WxH, multiples of 14 (default 518)");
  sub->add_option("--batch", o->batch, "Images per forward (default 1)");
  sub->add_option("--runs", o->runs, "Timed runs (default 10)");
  sub->add_option("--warmup", o->warmup, "Untimed warm-up runs (default 2)");
  sub->add_option("--threads", o->threads, "CPU threads (default: all cores)");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->add_option("--row-chunks", o->row_chunks,
                  "GPU, batch 1: run the transformer blocks in 1-4 row chunks side by side (default 1: whole)");
  sub->add_flag("--rays", o->rays, "DA3 any-view: run the ray branch too (a checkpoint folder keeps its ray head)");
  sub->add_flag("--profile", o->profile,
                "CPU: then time every op over up to 20 more forwards (per forward: each op and shape, each op kind, "
                "and the time outside ops)");
  add_device_flags(sub, o->device);
  return {sub, [o]() {
            DACPP_CHECK(o->batch >= 1 && o->batch <= 256, ErrorCode::InvalidArgument, "--batch must be 1..256");
            DACPP_CHECK(o->runs >= 1 && o->warmup >= 0, ErrorCode::InvalidArgument, "--runs >= 1, --warmup >= 0");
            const Clock::time_point t_load = Clock::now();
            LoadOptions lo;
            apply_device_flags(o->device, lo);
            lo.import.with_aux = o->rays;
            std::shared_ptr<const Model> model = Model::load(o->model, lo);
            DACPP_CHECK(!o->rays || model->config().capabilities().rays, ErrorCode::Unsupported, "--rays: model '",
                        o->model, "' has no ray branch (a DA3 any-view model converted with --with-aux has one)");
            RunOptions run_options;
            run_options.want_rays = o->rays;
            const double load_ms = ms_since(t_load);
            int h = 0, w = 0;
            parse_size(o->size, model->config().vit.patch_size, &h, &w);
            RunnerOptions ro;
            ro.threads = o->threads;
            ro.row_chunks = o->row_chunks;
            Runner runner(model, ro);
            ops::OpProfile profile;
            if (o->profile) {
              runner.set_op_profile(&profile);  // Unsupported on a GPU, before any forward
              runner.set_op_profile(nullptr);
            }
            Tensor x = Tensor::empty({o->batch, 3, h, w}, DType::F32, "bench input");
            std::mt19937 rng(1234);
            std::normal_distribution<float> nd(0.f, 1.f);
            float* px = x.data<float>();
            for (int64_t i = 0; i < x.numel(); ++i) px[i] = nd(rng);
            for (int i = 0; i < o->warmup; ++i) runner.forward(x, false, run_options);
            std::vector<double> times;
            for (int i = 0; i < o->runs; ++i) {
              const Clock::time_point t0 = Clock::now();
              runner.forward(x, false, run_options);
              times.push_back(ms_since(t0));
            }
            std::sort(times.begin(), times.end());
            // Then up to 20 more forwards with phase timing on (one extra wait for the GPU each, so apart from
            // the timed runs above): the median of each phase.
            runner.set_phase_timing(true);
            std::vector<double> input_ms, launch_ms, wait_ms, output_ms;
            for (int i = 0; i < std::min(o->runs, 20); ++i) {
              runner.forward(x, false, run_options);
              const Runner::Phases& ph = runner.last_phases();
              input_ms.push_back(ph.input_ms);
              launch_ms.push_back(ph.launch_ms);
              wait_ms.push_back(ph.gpu_wait_ms);
              output_ms.push_back(ph.output_ms);
            }
            runner.set_phase_timing(false);
            // Then, with --profile, up to 20 more forwards timed op by op (apart from the runs above: the op clock
            // reads add a little).
            const int profiled = o->profile ? std::min(o->runs, 20) : 0;
            double profiled_ms = 0;
            if (profiled > 0) {
              runner.set_op_profile(&profile);
              for (int i = 0; i < profiled; ++i) {
                const Clock::time_point t0 = Clock::now();
                runner.forward(x, false, run_options);
                profiled_ms += ms_since(t0);
              }
              runner.set_op_profile(nullptr);
            }
            const auto median_of = [](std::vector<double> v) {
              std::sort(v.begin(), v.end());
              return v[v.size() / 2];
            };
            const Runner::DeviceMemory mem = runner.device_memory();
            const double median = times[times.size() / 2];
            const CpuInfo cpu = cpu_info();
            nlohmann::json j = {{"model", o->model},
                                {"width", w},
                                {"rays", o->rays},
                                {"height", h},
                                {"batch", o->batch},
                                {"row_chunks", o->row_chunks},
                                {"threads", ro.threads > 0 ? ro.threads : ThreadPool::hardware_threads()},
                                {"runs", o->runs},
                                {"median_ms", median},
                                {"min_ms", times.front()},
                                {"max_ms", times.back()},
                                {"images_per_s", 1000.0 * o->batch / median},
                                {"load_ms", load_ms},
                                {"peak_rss_mb", peak_rss_kb() / 1024.0},
                                {"device", device_name(model->device())},
                                {"precision", dtype_name(model->precision())},
                                {"cpu_isa", cpu.isa},
                                {"cpu_bf16_native", cpu.bf16_native},
                                {"device_weight_mb", model->device_weight_bytes() / 1048576.0},
                                {"device_runner_peak_mb", mem.peak_bytes / 1048576.0},
                                {"device_total_peak_mb", (model->device_weight_bytes() + mem.peak_bytes) / 1048576.0},
                                {"gpu_used_mb", mem.gpu_used_bytes / 1048576.0}};
            j["phases_ms"] = {{"input", median_of(input_ms)},
                              {"launch", median_of(launch_ms)},
                              {"gpu_wait", median_of(wait_ms)},
                              {"output", median_of(output_ms)}};
            // The network's GPU time alone (no input / output copies): what PyTorch timings of model(x) measure.
            if (const std::optional<double> gpu_ms = runner.graph_replay_ms(o->runs)) {
              j["graph_replay_ms"] = *gpu_ms;
              j["graph_images_per_s"] = 1000.0 * o->batch / *gpu_ms;
            }
            if (profiled > 0) {
              const double per = 1.0 / profiled;
              nlohmann::json ops = nlohmann::json::array(), kinds = nlohmann::json::array();
              for (const ops::OpProfile::Entry& e : profile.entries())
                ops.push_back({{"op", e.op}, {"shapes", e.shapes}, {"calls", e.calls * per}, {"ms", e.ms * per}});
              for (const auto& [op, ms] : profile.by_op()) kinds.push_back({{"op", op}, {"ms", ms * per}});
              j["profile"] = {{"forwards", profiled},
                              {"forward_ms", profiled_ms * per},
                              {"ops_ms", profile.total_ms() * per},
                              {"outside_ops_ms", (profiled_ms - profile.total_ms()) * per},
                              {"by_op", kinds},
                              {"ops", ops}};
            }
            if (o->json) {
              std::printf("%s\n", j.dump(2).c_str());
            } else {
              std::printf("model %s  input %dx%d  batch %d  threads %d  device %s  precision %s\n", o->model.c_str(), w,
                          h, o->batch, j["threads"].get<int>(), device_name(model->device()).c_str(),
                          dtype_name(model->precision()));
              std::printf("load %.1f ms | median %.2f ms (min %.2f, max %.2f) over %d runs | %.2f img/s | "
                          "peak RSS %.1f MB\n",
                          load_ms, median, times.front(), times.back(), o->runs, j["images_per_s"].get<double>(),
                          j["peak_rss_mb"].get<double>());
              std::printf("phases (median ms): input %.3f | launch %.3f | GPU wait %.3f | output %.3f\n",
                          j["phases_ms"]["input"].get<double>(), j["phases_ms"]["launch"].get<double>(),
                          j["phases_ms"]["gpu_wait"].get<double>(), j["phases_ms"]["output"].get<double>());
              if (j.contains("graph_replay_ms"))
                std::printf("GPU time of the forward alone (CUDA graph replay, no copies): %.3f ms | %.2f img/s\n",
                            j["graph_replay_ms"].get<double>(), j["graph_images_per_s"].get<double>());
              if (j.contains("profile")) print_profile(j["profile"]);
            }
            return 0;
          }};
}

}  // namespace dacpp::cli
