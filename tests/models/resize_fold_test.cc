// layers::ResizeConvFold against the two convs it folds: the transposed conv (kernel = stride) of the tokens as a
// map, then the 3×3, pad-1 conv without bias. The DPT heads' use of it is checked against the official code by
// ModelParity (the CPU folds by default).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>

#include "core/arena.h"
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

}  // namespace
}  // namespace dacpp
