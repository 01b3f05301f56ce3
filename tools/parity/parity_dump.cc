// dacpp_parity MODEL INPUT.npy OUT_DIR [--rays] [--ref-view STRATEGY] [--row-chunks N] — runs the network on a
// normalised input tensor and writes every stage dump as float32 .npy, for comparison with the official code's outputs
// (scripts/parity/compare.py). A developer tool for the parity runs; the same checks run in the unit tests.
//   DA2 / DA3 mono: feat0..3, rn1..4, path1, depth, sky.
//   DA3 any-view: INPUT is [1, S, 3, H, W] (S views of one scene, one pass): feat0..3 [S, P, 2E], rn1..4,
//     cam_token [S, 2E], depth, depth_conf [S, H, W], pose_enc [S, 9], extrinsics [S, 3, 4], intrinsics [S, 3, 3],
//     and with --rays (model imported with the aux head) ray [S, h, w, 6], ray_conf [S, h, w]; ref_view.txt.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "io/writers.h"
#include "models/reference_view.h"
#include "util/npy_read.h"

namespace {

int run(int argc, char** argv) {
  using namespace dacpp;
  constexpr const char* kUsage =
      "usage: dacpp_parity MODEL INPUT.npy OUT_DIR [--rays] [--ref-view STRATEGY] [--device cuda] [--precision "
      "bf16|f16|f32] [--row-chunks 1-4]";
  DACPP_CHECK(argc >= 4, ErrorCode::InvalidArgument, kUsage);
  RunOptions opt;
  LoadOptions lo;
  RunnerOptions ro;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rays") {
      opt.want_rays = lo.import.with_aux = true;
    } else if (a == "--ref-view" && i + 1 < argc) {
      opt.ref_view_strategy = models::parse_ref_view_strategy(argv[++i]);
    } else if (a == "--device" && i + 1 < argc) {
      const std::string d = argv[++i];
      DACPP_CHECK(d == "cpu" || d == "cuda", ErrorCode::InvalidArgument, "--device cpu|cuda, not '", d, "'");
      lo.device = d == "cuda" ? Device::cuda(0) : Device::cpu();
    } else if (a == "--precision" && i + 1 < argc) {
      const std::string p = argv[++i];
      DACPP_CHECK(p == "bf16" || p == "f16" || p == "f32", ErrorCode::InvalidArgument, "--precision bf16|f16|f32");
      lo.precision = p == "bf16" ? DType::BF16 : p == "f16" ? DType::F16 : DType::F32;
    } else if (a == "--row-chunks" && i + 1 < argc) {
      ro.row_chunks = std::atoi(argv[++i]);  // the Runner refuses anything outside 1..4
    } else {
      DACPP_THROW(ErrorCode::InvalidArgument, "unknown argument '", a, "'; ", kUsage);
    }
  }
  testing::NpyArray in;
  std::string err;
  DACPP_CHECK(testing::parse_npy(testing::read_file_bytes(argv[2]), &in, &err), ErrorCode::InvalidArgument, argv[2],
              ": ", err);
  DACPP_CHECK(in.shape.size() >= 4, ErrorCode::InvalidArgument, argv[2], ": expected [..,3,H,W]");
  const int64_t h = in.shape[in.shape.size() - 2], w = in.shape.back();
  const int64_t b = static_cast<int64_t>(in.values.size()) / (3 * h * w);
  Tensor x = Tensor::from_vector({b, 3, h, w}, in.values, "input");
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const Model> model = Model::load(argv[1], lo);
  const auto t1 = std::chrono::steady_clock::now();
  Runner runner(model, ro);
  ForwardResult r = runner.forward(x, /*dump_stages=*/true, opt);
  const auto t2 = std::chrono::steady_clock::now();
  std::filesystem::create_directories(argv[3]);
  for (auto& [name, t] : r.dumps.tensors)
    io::write_npy((std::filesystem::path(argv[3]) / (name + ".npy")).string(), t.data<float>(), t.shape());
  io::write_npy((std::filesystem::path(argv[3]) / "depth.npy").string(), r.depth.data<float>(), r.depth.shape());
  if (r.sky.defined() && r.sky.numel() > 0)
    io::write_npy((std::filesystem::path(argv[3]) / "sky.npy").string(), r.sky.data<float>(), r.sky.shape());
  if (r.conf.defined()) {
    io::write_npy((std::filesystem::path(argv[3]) / "depth_conf.npy").string(), r.conf.data<float>(), r.conf.shape());
    const std::string ref = std::to_string(r.ref_view) + "\n";
    std::FILE* f = std::fopen((std::filesystem::path(argv[3]) / "ref_view.txt").string().c_str(), "w");
    DACPP_CHECK(f != nullptr && std::fputs(ref.c_str(), f) >= 0 && std::fclose(f) == 0, ErrorCode::Io,
                "cannot write ref_view.txt in '", argv[3], "'");
  }
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
