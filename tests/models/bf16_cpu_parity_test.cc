// A model loaded in bf16 on the CPU (LoadOptions::precision, design.md §3: opt-in) against the official code's f32
// outputs on the tiny fixtures: every stage and output with correlation ≥ 0.999 and relative L2 ≤ 5e-2. The design's
// bf16 bound (1e-2) is for the full-size models; these tiny random ones amplify more through DA3's exp depth and sky
// (measured here: DA2 depth 0.3-0.8 %, DA3 mono / metric depth 1.0 %, sky 2.8 %, any-view depth 1.9 %, every backbone
// and reassemble stage ≤ 0.6 %), the tolerance the GPU's bf16 test of a tiny model uses (device_io_cuda_test.cc).
// A broken bf16 path (layout, dtype, plan) is off by O(1). DACPP_PARITY_VERBOSE=1 prints the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "models/model_test_util.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

using testing::load_npy;
using testing::rel_l2;

constexpr double kRelTol = 5e-2, kMinCorr = 0.999;
const std::string kDir = std::string(DACPP_FIXTURES_DIR) + "/models/";

double correlation(const Tensor& a, const Tensor& b) {
  const int64_t n = a.numel();
  double ma = 0, mb = 0;
  for (int64_t i = 0; i < n; ++i) ma += a.data<float>()[i], mb += b.data<float>()[i];
  ma /= static_cast<double>(n), mb /= static_cast<double>(n);
  double sab = 0, saa = 0, sbb = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = a.data<float>()[i] - ma, y = b.data<float>()[i] - mb;
    sab += x * y, saa += x * x, sbb += y * y;
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : (saa == sbb ? 1.0 : 0.0);
}

void expect_bf16_close(const std::string& what, const Tensor& got, const std::string& ref_path) {
  const Tensor ref = load_npy(ref_path);
  ASSERT_TRUE(ref.defined() && got.defined()) << what;
  ASSERT_EQ(got.numel(), ref.numel()) << what;
  const double e = rel_l2(got, ref), c = correlation(got, ref);
  EXPECT_LE(e, kRelTol) << what;
  EXPECT_GE(c, kMinCorr) << what;
  if (std::getenv("DACPP_PARITY_VERBOSE") != nullptr)
    std::printf("  bf16 %-12s rel L2 %.3g  corr %.6f\n", what.c_str(), e, c);
}

std::shared_ptr<const Model> load(const std::string& path, DType precision) {
  LoadOptions lo;
  lo.precision = precision;
  return Model::load(path, lo);
}

Tensor fixture_input(const std::string& dir) {
  Tensor x = load_npy(dir + "/input.npy");
  const Shape s = x.shape();
  return s.size() == 5 ? x.reshape({s[0] * s[1], s[2], s[3], s[4]}) : x;  // DA3: [1, S, 3, H, W]
}

class Bf16Cpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const cpu::Bf16Support& s = cpu::bf16_support();
    if (!s.refusal.empty()) GTEST_SKIP() << "this CPU has no bf16 kernels in oneDNN: " << s.refusal;
  }
};

struct Case {
  const char* dir;
  const char* checkpoint;  // file inside dir, or "" for the folder itself
  bool sky;
};

class Bf16CpuParity : public Bf16Cpu, public ::testing::WithParamInterface<Case> {};

TEST_P(Bf16CpuParity, StagesWithinTheBf16Bound) {
  const Case& c = GetParam();
  const std::string dir = kDir + c.dir;
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "fixture " << c.dir << " absent";
  const std::string path = dir + (c.checkpoint[0] ? std::string("/") + c.checkpoint : std::string());
  std::shared_ptr<const Model> model = load(path, DType::BF16);
  EXPECT_EQ(model->precision(), DType::BF16);
  EXPECT_EQ(model->act_dtype(), DType::F32);
  const Tensor input = fixture_input(dir);
  for (int chunks : {1, 2}) {
    SCOPED_TRACE(std::to_string(chunks) + " row chunk(s)");
    RunnerOptions ro = ::dacpp::testing::runner_options(2);
    ro.row_chunks = chunks;
    Runner runner(model, ro);
    ForwardResult r = runner.forward(input, /*dump_stages=*/true);
    for (int k = 0; k < 4; ++k) {
      const std::string f = "feat" + std::to_string(k), rn = "rn" + std::to_string(k + 1);
      expect_bf16_close(f, r.dumps.tensors[f], dir + "/" + f + ".npy");
      expect_bf16_close(rn, r.dumps.tensors[rn], dir + "/" + rn + ".npy");
    }
    expect_bf16_close("depth", r.depth, dir + "/depth.npy");
    if (c.sky) expect_bf16_close("sky", r.sky, dir + "/sky.npy");
  }
  // The bf16 products ran: the depth is not the f32 model's to the bit (nor far from it).
  Runner f32_runner(load(path, DType::F32), ::dacpp::testing::runner_options(2));
  Runner bf16_runner(model, ::dacpp::testing::runner_options(2));
  const Tensor d32 = f32_runner.forward(input).depth, d16 = bf16_runner.forward(input).depth;
  const double e = rel_l2(d16, d32);
  EXPECT_GT(e, 0.0);
  EXPECT_LE(e, kRelTol);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Bf16CpuParity,
                         ::testing::Values(Case{"da2_tiny_rel", "da2_tiny_rel.pth", false},
                                           Case{"da2_tiny_metric", "da2_tiny_metric_hypersim.pth", false},
                                           Case{"da3mono_tiny", "", true}, Case{"da3metric_tiny", "", true}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.dir); });

// The reference view is pinned to the one saddle_balanced picks in f32 (view 1, which `middle` also picks). With
// three views that choice is ill-conditioned at bf16 precision in this tiny model: views 0 and 1 score 1.257 and
// 1.208, and view 0's score holds its cls-token norm min-max scaled over a range of 0.030 (norms 6.168-6.198), so
// the 0.002 (3e-4) that bf16 rounding moves a norm moves the score by ~0.07 and can flip the argmin. The selection
// itself is held to the official code in f32 (anyview_parity_test.cc).
TEST_F(Bf16Cpu, AnyViewThreeViewsWithinTheBf16Bound) {
  const std::string dir = kDir + "da3small_tiny";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "fixture da3small_tiny absent";
  Runner runner(load(dir, DType::BF16), ::dacpp::testing::runner_options(2));
  const std::string d = dir + "/view3/";
  RunOptions o;
  o.ref_view_strategy = models::RefViewStrategy::Middle;
  ForwardResult r = runner.forward(fixture_input(d), /*dump_stages=*/true, o);
  ASSERT_EQ(r.ref_view, 1);
  expect_bf16_close("cam_token", r.dumps.tensors["cam_token"], d + "cam_token.npy");
  expect_bf16_close("depth", r.depth, d + "depth.npy");
  expect_bf16_close("depth_conf", r.conf, d + "depth_conf.npy");
  expect_bf16_close("extrinsics", r.extrinsics, d + "extrinsics.npy");
  expect_bf16_close("intrinsics", r.intrinsics, d + "intrinsics.npy");
}

// DA3 nested (any-view + metric branch, aligned to metres): both branches load in bf16. The alignment thresholds the
// metric sky score (0.3): a pixel whose score crosses it takes the sky depth, so a rounding there is a jump, not an
// error of the bf16 size (in this tiny model 1.1 % of the pixels cross it, and they alone are > 5 % off). The test
// bounds the crossings and holds the pixels classified alike to the bf16 bound.
TEST_F(Bf16Cpu, NestedWithinTheBf16BoundWhereTheSkyMaskAgrees) {
  const std::string dir = kDir + "da3nested_tiny";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "fixture da3nested_tiny absent";
  Runner runner(load(dir, DType::BF16), ::dacpp::testing::runner_options(2));
  ForwardResult r = runner.forward(fixture_input(dir), /*dump_stages=*/true);
  const Tensor sky = r.dumps.tensors["metric_sky"], ref_sky = load_npy(dir + "/metric_sky.npy");
  const Tensor depth = load_npy(dir + "/depth.npy"), conf = load_npy(dir + "/depth_conf.npy");
  ASSERT_TRUE(sky.defined() && ref_sky.defined() && depth.defined() && conf.defined());
  ASSERT_EQ(sky.numel(), ref_sky.numel());
  ASSERT_EQ(r.depth.numel(), sky.numel());
  std::vector<float> got_d, ref_d, got_c, ref_c;
  for (int64_t i = 0; i < sky.numel(); ++i) {
    if ((sky.data<float>()[i] >= 0.3f) != (ref_sky.data<float>()[i] >= 0.3f)) continue;
    got_d.push_back(r.depth.data<float>()[i]), ref_d.push_back(depth.data<float>()[i]);
    got_c.push_back(r.conf.data<float>()[i]), ref_c.push_back(conf.data<float>()[i]);
  }
  const int64_t kept = static_cast<int64_t>(got_d.size());
  EXPECT_GE(kept, sky.numel() * 98 / 100) << "more than 2 % of the pixels crossed the sky threshold";
  const auto t = [](const std::vector<float>& v) { return Tensor::from_vector({static_cast<int64_t>(v.size())}, v); };
  const auto check = [&](const char* what, const Tensor& got, const Tensor& ref) {
    const double e = rel_l2(got, ref), c = correlation(got, ref);
    EXPECT_LE(e, kRelTol) << what;
    EXPECT_GE(c, kMinCorr) << what;
    if (std::getenv("DACPP_PARITY_VERBOSE") != nullptr)
      std::printf("  bf16 nested %-10s rel L2 %.3g  corr %.6f  (%lld of %lld pixels)\n", what, e, c,
                  static_cast<long long>(kept), static_cast<long long>(sky.numel()));
  };
  check("depth", t(got_d), t(ref_d));
  check("depth_conf", t(got_c), t(ref_c));
  expect_bf16_close("extrinsics", r.extrinsics, dir + "/extrinsics.npy");
  expect_bf16_close("intrinsics", r.intrinsics, dir + "/intrinsics.npy");
}

TEST(Bf16CpuLoad, F16IsAGpuPrecisionAndF32StaysTheDefault) {
  const std::string path = kDir + "da2_tiny_rel/da2_tiny_rel.pth";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "fixture da2_tiny_rel absent";
  EXPECT_EQ(Model::load(path)->precision(), DType::F32);
  try {
    load(path, DType::F16);
    FAIL() << "an f16 model loaded on the CPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(e.what()).find("precision f16 on the CPU"), std::string::npos) << e.what();
  }
}

// f32's largest values round past bf16's largest: refused at load, naming the tensor (never an inf weight).
TEST(Bf16CpuLoad, AWeightPastBf16sRangeIsNamed) {
  if (!cpu::bf16_support().refusal.empty()) GTEST_SKIP() << cpu::bf16_support().refusal;
  testing::SyntheticModel synth;
  synth.fill_tensor("vit.blk.1.mlp_fc1.weight", 3.4e38f);
  LoadOptions lo;
  lo.precision = DType::BF16;
  try {
    Model::from_file(synth.build(), lo);
    FAIL() << "a weight of 3.4e38 loaded in bf16";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_NE(std::string(e.what()).find("overflows bf16"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(Model::from_file(synth.build()));  // f32 holds it
}

}  // namespace
}  // namespace dacpp
