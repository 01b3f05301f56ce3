// layers::Conv2d's channels-last entry points (the DPT projections) and layers::PatchEmbed (the ViT patch embedding)
// against Conv2d::forward() on the NCHW map, and their InvalidArgument errors for convs and inputs they do not take.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/arena.h"
#include "formats/gguf_test_util.h"
#include "layers/conv2d.h"
#include "layers/patch_embed.h"
#include "ops/context.h"
#include "ops/op_test_util.h"
#include "ops/permute.h"

namespace dacpp {
namespace {

// A ModelFile holding "c.weight" [out, in, k, k] and "c.bias" [out] (random, owned by the test).
class Conv2dLayerTest : public ::testing::Test {
 protected:
  layers::Conv2d make(const layers::ConvSpec& spec) {
    w_ = test::random_tensor({spec.out, spec.in, spec.kernel, spec.kernel}, 1, 0.3f);
    b_ = test::random_tensor({spec.out}, 2, 0.5f);
    std::vector<TensorRecord> recs = {
        {"c.weight", DType::F32, w_.shape(), w_.raw(), w_.nbytes()},
        {"c.bias", DType::F32, b_.shape(), b_.raw(), b_.nbytes()},
    };
    mf_ = std::make_unique<ModelFile>("conv.gguf", std::map<std::string, MetaValue>{}, recs, nullptr,
                                      w_.nbytes() + b_.nbytes());
    return layers::Conv2d(*mf_, "c", spec);
  }

  ops::Context ctx_{Device::cpu(), 2};
  HostArena arena_{1 << 20};
  layers::Exec ex_{ctx_, arena_};
  Tensor w_, b_;
  std::unique_ptr<ModelFile> mf_;
};

TEST_F(Conv2dLayerTest, TokensMatchTheNchwConv) {
  const layers::Conv2d conv = make({24, 40, 1, 1, 0});
  const int64_t b = 2, gh = 5, gw = 7;
  Tensor tokens = test::random_tensor({b, gh * gw, 24}, 3);
  Tensor map = Tensor::empty({b, 24, gh * gw});
  ops::permute(ctx_, tokens, {0, 2, 1}, map);
  const Tensor want = conv.forward(ex_, map.reshape({b, 24, gh, gw}));
  const Tensor got = conv.forward_tokens(ex_, tokens, gh, gw);
  test::expect_close(got, want, 1e-6, 1e-5, "forward_tokens");
}

// The patch embedding against the same weights' NCHW conv permuted to tokens: 3·4·4 = 48 columns (no padding) and
// 3·3·3 = 27 (weight rows and patch rows padded with zeros to 32).
TEST_F(Conv2dLayerTest, PatchEmbedMatchesTheNchwConv) {
  for (const int k : {4, 3}) {
    const layers::Conv2d conv = make({3, 16, k, k, 0});
    const layers::PatchEmbed embed(*mf_, "c", 3, 16, k);
    const int64_t n = 2, gh = 3, gw = 2;
    Tensor x = test::random_tensor({n, 3, gh * k, gw * k}, 4);
    const Tensor map = conv.forward(ex_, x);  // [n, 16, gh, gw]
    Tensor want = Tensor::empty({n, gh * gw, 16});
    ops::permute(ctx_, map.reshape({n, 16, gh * gw}), {0, 2, 1}, want);
    const Tensor got = embed.forward(ex_, x);
    test::expect_close(got, want, 1e-6, 1e-5, "patch embedding, kernel " + std::to_string(k));
  }
}

TEST_F(Conv2dLayerTest, TokensRejectOtherConvsAndShapes) {
  const layers::Conv2d conv3 = make({8, 8, 3, 1, 1});
  Tensor tokens = test::random_tensor({1, 6, 8}, 5);
  gguf_test::expect_error([&] { conv3.forward_tokens(ex_, tokens, 2, 3); }, ErrorCode::InvalidArgument,
                     {"conv 'c.weight'", "1×1", "kernel 3"});
  const layers::Conv2d conv1 = make({8, 4, 1, 1, 0});
  gguf_test::expect_error([&] { conv1.forward_tokens(ex_, tokens, 3, 3); }, ErrorCode::InvalidArgument,
                     {"tokens", "[1,6,8]", "expected [B, 3·3, 8]"});
  Tensor wrong_c = test::random_tensor({1, 6, 5}, 6);
  gguf_test::expect_error([&] { conv1.forward_tokens(ex_, wrong_c, 2, 3); }, ErrorCode::InvalidArgument,
                     {"expected [B, 2·3, 8]"});
}

// An input whose sides are not multiples of the kernel, or with other channels, is InvalidArgument naming the layer;
// a weight of another shape than the one declared is InvalidModel at load.
TEST_F(Conv2dLayerTest, PatchEmbedRejectsOtherShapes) {
  make({3, 8, 4, 4, 0});
  const layers::PatchEmbed embed(*mf_, "c", 3, 8, 4);
  Tensor ragged = test::random_tensor({1, 3, 10, 8}, 8);
  gguf_test::expect_error([&] { embed.forward(ex_, ragged); }, ErrorCode::InvalidArgument,
                          {"patch embedding 'c.weight'", "[1,3,10,8]", "multiples of 4"});
  Tensor four = test::random_tensor({1, 4, 8, 8}, 9);
  gguf_test::expect_error([&] { embed.forward(ex_, four); }, ErrorCode::InvalidArgument, {"expected [N, 3, H, W]"});
  gguf_test::expect_error([&] { layers::PatchEmbed(*mf_, "c", 3, 8, 2); }, ErrorCode::InvalidModel, {"c.weight"});
}

}  // namespace
}  // namespace dacpp
