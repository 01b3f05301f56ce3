// layers::ResizeConvFold against the two convs it folds: the transposed conv (kernel = stride) of the tokens as a
// map, then the 3×3, pad-1 conv without bias. The DPT heads' use of it is checked against the official code by
// ModelParity (the CPU folds by default).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "core/arena.h"
#include "engine/model.h"
#include "formats/model_file.h"
#include "layers/exec.h"
#include "layers/resize_fold.h"
#include "models/model_test_util.h"
#include "ops/conv2d.h"
#include "ops/op_test_util.h"

namespace dacpp {
namespace {

struct FoldCase {
  int s;
  int64_t cin, cmid, f;  // 0: the synthetic model's own shapes
  int64_t n, gh, gw;
};

class ResizeFold : public ::testing::TestWithParam<FoldCase> {};

TEST_P(ResizeFold, MatchesTheTransposedConvThenTheConv) {
  const FoldCase& k = GetParam();
  const std::string resize = k.s == 4 ? "head.resize.0" : "head.resize.1";
  const std::string conv = k.s == 4 ? "head.scratch.layer1_rn" : "head.scratch.layer2_rn";
  testing::SyntheticModel sm;
  int64_t cin = k.cin, cmid = k.cmid, f = k.f;
  if (cin == 0) {
    cin = cmid = k.s == 4 ? 4 : 8;
    f = testing::SyntheticModel::kFeatures;
  } else {  // new random weights of these sizes
    sm.reshape_tensor(resize + ".weight", {cin, cmid, k.s, k.s});
    sm.reshape_tensor(resize + ".bias", {cmid});
    sm.reshape_tensor(conv + ".weight", {f, cmid, 3, 3});
  }
  const std::shared_ptr<const ModelFile> mf = sm.build();
  ops::Context ctx;
  const layers::ResizeConvFold fold(*mf, ctx, resize, conv, cin, cmid, f, k.s);
  EXPECT_EQ(fold.scale(), k.s);

  HostArena arena;
  layers::Exec ex{ctx, arena};
  Tensor tokens = test::random_tensor({k.n, k.gh * k.gw, cin}, 9, 1.f, "tokens");
  Tensor up = test::output_tensor({k.n, cmid, k.s * k.gh, k.s * k.gw});
  ops::conv_transpose2d_tokens(ctx, tokens, k.gh, k.gw, mf->tensor_f32(resize + ".weight"),
                               mf->tensor_f32(resize + ".bias"), up, k.s);
  Tensor want = test::output_tensor({k.n, f, k.s * k.gh, k.s * k.gw});
  ops::conv2d(ctx, up, mf->tensor_f32(conv + ".weight"), Tensor(), want, {1, 1, 1, 1});
  Tensor got = test::output_tensor({k.n, f, k.s * k.gh, k.s * k.gw}, "got");
  fold.forward_into(ex, tokens, k.gh, k.gw, got);
  test::expect_close(got, want, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ResizeFold,
                         ::testing::Values(FoldCase{4, 0, 0, 0, 1, 3, 5}, FoldCase{2, 0, 0, 0, 2, 4, 3},
                                           FoldCase{4, 12, 16, 24, 2, 2, 3}, FoldCase{2, 9, 5, 7, 1, 5, 1},
                                           FoldCase{4, 3, 6, 2, 1, 1, 1}, FoldCase{2, 16, 16, 8, 1, 7, 6}),
                         [](const ::testing::TestParamInfo<FoldCase>& i) {
                           const FoldCase& k = i.param;
                           return str_cat("s", k.s, "_c", k.cin, "_", k.cmid, "_", k.f, "_", k.n, "x", k.gh, "x", k.gw);
                         });

// Wrong token or output shapes are InvalidArgument naming the tensor.
TEST(ResizeFoldErrors, BadShapesAreNamed) {
  testing::SyntheticModel sm;
  const std::shared_ptr<const ModelFile> mf = sm.build();
  ops::Context ctx;
  const layers::ResizeConvFold fold(*mf, ctx, "head.resize.0", "head.scratch.layer1_rn", 4, 4,
                                    testing::SyntheticModel::kFeatures, 4);
  HostArena arena;
  layers::Exec ex{ctx, arena};
  Tensor tokens = test::random_tensor({1, 6, 4}, 1, 1.f, "stage.tokens");
  Tensor y = test::output_tensor({1, testing::SyntheticModel::kFeatures, 8, 12}, "stage.rn");
  for (auto [gh, gw, what] : {std::tuple{3, 3, "stage.tokens"}, std::tuple{3, 2, "stage.rn"}}) {
    try {
      fold.forward_into(ex, tokens, gh, gw, y);
      ADD_FAILURE() << "no error for " << gh << "x" << gw;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find(what), std::string::npos) << e.message();
    }
  }
}

// Weights each finite in the file whose folded products overflow f32 are refused at load (InvalidModel naming both
// convs), through the model's load as well as the layer's.
TEST(ResizeFoldErrors, OverflowingFoldIsRefusedAtLoad) {
  testing::SyntheticModel sm;
  sm.fill_tensor("head.resize.0.weight", 1e30f);
  sm.fill_tensor("head.scratch.layer1_rn.weight", 1e30f);
  const std::shared_ptr<const ModelFile> mf = sm.build();
  const auto expect_refused = [](const std::function<void()>& load) {
    try {
      load();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
      for (const char* part : {"head.resize.0", "head.scratch.layer1_rn", "overflow"})
        EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
    }
  };
  ops::Context ctx;
  expect_refused([&] {
    layers::ResizeConvFold(*mf, ctx, "head.resize.0", "head.scratch.layer1_rn", 4, 4,
                           testing::SyntheticModel::kFeatures, 4);
  });
  expect_refused([&] { Model::from_file(mf); });
}

// Not a check but the timing docs/PERFORMANCE.md ("Version 1.22") quotes, on DA2-S's and DA2-L's stage shapes at
// 37² (random weights): the fold against the two convs, best of 5 after two warm-ups, twice each, and the fold's
// load. Run: dacpp_tests --gtest_also_run_disabled_tests --gtest_filter='ResizeFoldBench.*'
TEST(ResizeFoldBench, DISABLED_CpuTimesAgainstTheTwoConvs) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  struct Shape4 {
    int s;
    int64_t cin, f;
  };
  constexpr int64_t kGrid = 37;
  for (const Shape4& k : {Shape4{4, 48, 64}, Shape4{2, 96, 64}, Shape4{4, 256, 256}, Shape4{2, 512, 256}}) {
    const std::string resize = k.s == 4 ? "head.resize.0" : "head.resize.1";
    const std::string conv = k.s == 4 ? "head.scratch.layer1_rn" : "head.scratch.layer2_rn";
    testing::SyntheticModel sm;
    sm.reshape_tensor(resize + ".weight", {k.cin, k.cin, k.s, k.s});
    sm.reshape_tensor(resize + ".bias", {k.cin});
    sm.reshape_tensor(conv + ".weight", {k.f, k.cin, 3, 3});
    const std::shared_ptr<const ModelFile> mf = sm.build();
    ops::Context ctx;
    HostArena arena;
    layers::Exec ex{ctx, arena};
    const Clock::time_point t_load = Clock::now();
    const layers::ResizeConvFold fold(*mf, ctx, resize, conv, k.cin, k.cin, k.f, k.s);
    const double load_ms = ms_since(t_load);
    Tensor tokens = test::random_tensor({1, kGrid * kGrid, k.cin}, 9, 1.f, "tokens");
    Tensor up = test::output_tensor({1, k.cin, k.s * kGrid, k.s * kGrid});
    Tensor want = test::output_tensor({1, k.f, k.s * kGrid, k.s * kGrid});
    Tensor got = test::output_tensor({1, k.f, k.s * kGrid, k.s * kGrid}, "got");
    const Tensor wt = mf->tensor_f32(resize + ".weight"), bt = mf->tensor_f32(resize + ".bias");
    const Tensor w3 = mf->tensor_f32(conv + ".weight");
    const auto two_convs = [&] {
      ops::conv_transpose2d_tokens(ctx, tokens, kGrid, kGrid, wt, bt, up, k.s);
      ops::conv2d(ctx, up, w3, Tensor(), want, {1, 1, 1, 1});
    };
    const auto folded = [&] { fold.forward_into(ex, tokens, kGrid, kGrid, got); };
    const auto best_ms = [&](const std::function<void()>& run) {
      run();
      run();
      double best = 1e30;
      for (int r = 0; r < 5; ++r) {
        const Clock::time_point t0 = Clock::now();
        run();
        best = std::min(best, ms_since(t0));
      }
      return best;
    };
    const double a1 = best_ms(two_convs), b1 = best_ms(folded), a2 = best_ms(two_convs), b2 = best_ms(folded);
    test::expect_close(got, want, 1e-4);
    std::printf("S %d, %ld -> %ld -> %ld: two convs %.2f / %.2f ms, folded %.2f / %.2f ms, fold at load %.1f ms\n", k.s,
                static_cast<long>(k.cin), static_cast<long>(k.cin), static_cast<long>(k.f), a1, a2, b1, b2, load_ms);
  }
}

}  // namespace
}  // namespace dacpp
