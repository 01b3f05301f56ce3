// dacpp_parity MODEL INPUT.npy OUT_DIR — runs the network on a normalised input tensor and writes every stage
// dump (feat0..3, rn1..4, ..., depth, sky) as float32 .npy, for comparison with the official code's outputs
// (scripts/parity/compare.py). A developer tool for the parity runs; the same checks run in the unit tests.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "io/writers.h"
#include "util/npy_read.h"

namespace {

int run(int argc, char** argv) {
  using namespace dacpp;
  DACPP_CHECK(argc == 4, ErrorCode::InvalidArgument, "usage: dacpp_parity MODEL INPUT.npy OUT_DIR");
  testing::NpyArray in;
  std::string err;
  DACPP_CHECK(testing::parse_npy(testing::read_file_bytes(argv[2]), &in, &err), ErrorCode::InvalidArgument, argv[2],
              ": ", err);
  DACPP_CHECK(in.shape.size() >= 4, ErrorCode::InvalidArgument, argv[2], ": expected [..,3,H,W]");
  const int64_t h = in.shape[in.shape.size() - 2], w = in.shape.back();
  const int64_t b = static_cast<int64_t>(in.values.size()) / (3 * h * w);
  Tensor x = Tensor::from_vector({b, 3, h, w}, in.values, "input");
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const Model> model = Model::load(argv[1]);
  const auto t1 = std::chrono::steady_clock::now();
  Runner runner(model);
  ForwardResult r = runner.forward(x, /*dump_stages=*/true);
  const auto t2 = std::chrono::steady_clock::now();
  std::filesystem::create_directories(argv[3]);
  for (auto& [name, t] : r.dumps.tensors)
    io::write_npy((std::filesystem::path(argv[3]) / (name + ".npy")).string(), t.data<float>(), t.shape());
  io::write_npy((std::filesystem::path(argv[3]) / "depth.npy").string(), r.depth.data<float>(), r.depth.shape());
  if (r.sky.defined() && r.sky.numel() > 0)
    io::write_npy((std::filesystem::path(argv[3]) / "sky.npy").string(), r.sky.data<float>(), r.sky.shape());
  std::printf("load %.1f ms, forward %.1f ms, %zu dumps\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count(), r.dumps.tensors.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const dacpp::Error& e) {
    std::fprintf(stderr, "dacpp_parity: error: %s\n", e.what());
    return dacpp::error_code_exit_status(e.code());
  }
}
