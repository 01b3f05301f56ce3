// Soak: many forwards over many input sizes in one process keep the resident set flat once every cache has
// warmed up (pos-embed LRU, oneDNN primitive LRU, activation arena: all bounded, all owned by the Runner).
//
//   dacpp_soak_test <model.gguf> [forwards=2000] [sizes=50] [warmup_rounds=2] [tolerance_mib=16] [prim_cache=4096]
//                   [precision=f32|bf16]
//
// Input sizes: images of height 14·k (k = 2 .. sizes+1) and width 28 run at size 28 (DA2: the shorter side), so
// every size is a distinct 14k × 28 network input (a distinct patch grid, pos-embed table and set of oneDNN
// primitives) while each forward stays cheap; visited in a fixed shuffled order each round. RSS (from /proc/self/statm)
// is sampled after `warmup_rounds` full rounds and at the end; the test fails when it grew by more than the tolerance.
// Prints one JSON line with the numbers (recorded in docs/VERIFICATION.md). The oneDNN plan cache is sized to hold
// every size's plans (prim_cache): with the default 512 plans, 50 sizes evict continually and each forward re-creates
// its primitives (slower, and RSS settles 4 MiB higher after ~30 rounds: docs/VERIFICATION.md); the pos-embed LRU (8 of
// 50 grids) evicts anyway.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/device_select.h"
#include "engine/model.h"
#include "engine/runner.h"

namespace {

double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  f >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

dacpp::io::Image pattern_image(int h, int w, unsigned seed) {
  dacpp::io::Image img(h, w);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data()[i] = static_cast<uint8_t>(1 + rng() % 255);
  return img;
}

int arg_or(int argc, char** argv, int i, int def) { return argc > i ? std::atoi(argv[i]) : def; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s <model.gguf> [forwards] [sizes] [warmup_rounds] [tolerance_mib] [prim_cache] [precision]\n",
                 argv[0]);
    return 2;
  }
  const int forwards = arg_or(argc, argv, 2, 2000), sizes = arg_or(argc, argv, 3, 50);
  const int warmup_rounds = arg_or(argc, argv, 4, 2), tolerance_mib = arg_or(argc, argv, 5, 16);
  const int prim_cache = arg_or(argc, argv, 6, 4096);
  try {
    dacpp::LoadOptions lo;
    if (argc > 7) lo.precision = dacpp::parse_precision(argv[7]);
    auto model = dacpp::Model::load(argv[1], lo);
    dacpp::RunnerOptions ro;
    ro.threads = 2;
    ro.prim_cache_capacity = static_cast<size_t>(prim_cache);
    dacpp::Runner runner(model, ro);
    std::vector<dacpp::io::Image> images;
    for (int k = 2; k < sizes + 2; ++k) images.push_back(pattern_image(14 * k, 28, static_cast<unsigned>(k)));
    std::vector<int> order(images.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(42));

    const auto t0 = std::chrono::steady_clock::now();
    double rss_warm = 0, rss_peak = 0;
    std::string samples;  // RSS every 10 rounds, MiB
    const int warm_after = warmup_rounds * sizes;
    for (int n = 0; n < forwards; ++n) {
      const int k = order[static_cast<size_t>(n % sizes)];
      dacpp::RunOptions o;
      o.size = 28;
      const dacpp::io::Image& img = images[static_cast<size_t>(k)];
      dacpp::DepthResult r = runner.run(img, o);
      if (r.depth.numel() != static_cast<int64_t>(img.width()) * img.height() || r.processed_height != img.height()) {
        std::fprintf(stderr, "soak: forward %d: depth has %lld values\n", n, static_cast<long long>(r.depth.numel()));
        return 1;
      }
      if (n + 1 == warm_after) rss_warm = rss_mib();
      if (n + 1 > warm_after) rss_peak = std::max(rss_peak, rss_mib());
      if ((n + 1) % (10 * sizes) == 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.1f", samples.empty() ? "" : ", ", rss_mib());
        samples += buf;
      }
    }
    const double rss_end = rss_mib();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "{\"forwards\": %d, \"sizes\": %d, \"warmup_forwards\": %d, \"rss_warm_mib\": %.1f, \"rss_peak_mib\": %.1f, "
        "\"rss_end_mib\": %.1f, \"rss_every_10_rounds_mib\": [%s], \"prim_cache\": %d, \"precision\": \"%s\", "
        "\"pos_cache\": %zu, \"arena_peak_mib\": %.1f, \"seconds\": %.1f}\n",
        forwards, sizes, warm_after, rss_warm, rss_peak, rss_end, samples.c_str(), prim_cache,
        dacpp::dtype_name(model->precision()), runner.pos_cache_size(),
        static_cast<double>(runner.arena_peak_bytes()) / (1024.0 * 1024.0), secs);
    if (forwards > warm_after && rss_end - rss_warm > tolerance_mib) {
      std::fprintf(stderr, "soak: RSS grew from %.1f MiB after warm-up to %.1f MiB (tolerance %d MiB)\n", rss_warm,
                   rss_end, tolerance_mib);
      return 1;
    }
  } catch (const dacpp::Error& e) {
    std::fprintf(stderr, "soak: error: %s\n", e.what());
    // 77: ctest's skip (SKIP_RETURN_CODE), for a precision this CPU cannot run (bf16 without oneDNN kernels).
    return e.code() == dacpp::ErrorCode::Unsupported ? 77 : 1;
  }
  return 0;
}
