// Image decode timings, the two JPEG decoders in one process on the same bytes: libjpeg-turbo (io::load_image's
// path for JPEG) against stb_image (its path for every other format, and for JPEG before 2026-12-06).
//   dacpp_decode_bench PHOTO.jpg [google benchmark flags, e.g. --benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/image.h"
#include "io/stb_decode.h"

namespace {

std::vector<uint8_t> g_bytes;

void BM_LoadImage(benchmark::State& state) {
  for (auto _ : state) {
    dacpp::io::Image img = dacpp::io::load_image_from_memory(g_bytes.data(), g_bytes.size());
    benchmark::DoNotOptimize(img.data());
  }
}

void BM_StbDecode(benchmark::State& state) {
  for (auto _ : state) {
    int w = 0, h = 0, channels = 0;
    bool corrupt = false;
    dacpp::io::stb::Pixels px =
        dacpp::io::stb::load(g_bytes.data(), static_cast<int>(g_bytes.size()), &w, &h, &channels, &corrupt);
    if (!px) state.SkipWithError("stb could not decode the file");
    benchmark::DoNotOptimize(px.get());
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PHOTO [benchmark flags]\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream f(argv[1], std::ios::binary);
    g_bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    const dacpp::io::Image img = dacpp::io::load_image_from_memory(g_bytes.data(), g_bytes.size());
    std::printf("%s: %d x %d, %zu bytes\n", argv[1], img.width(), img.height(), g_bytes.size());
  } catch (const dacpp::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  benchmark::RegisterBenchmark("load_image (libjpeg-turbo for JPEG)", BM_LoadImage)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("stb_image decode", BM_StbDecode)->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
