// layers::FeatureFusionBlock::forward_unresized (refinenet1 before its upsample, for ops::conv2d_upsampled) against
// forward(): resampling the unresized map bilinearly with align_corners gives forward()'s result, with and without
// the lateral input.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/arena.h"
#include "formats/gguf_test_util.h"
#include "layers/feature_fusion_block.h"
#include "ops/context.h"
#include "ops/op_test_util.h"
#include "ops/resize.h"

namespace dacpp {
namespace {

constexpr int64_t f = 4;

// Random f32 weights of fusion blocks under the given name prefixes ("" or "b0." ...), held for a ModelFile.
struct FusionWeights {
  std::vector<Tensor> owned;
  std::vector<TensorRecord> recs;
  size_t bytes = 0;
  uint32_t seed;

  FusionWeights(const std::vector<std::string>& prefixes, uint32_t first_seed, float out_bias) : seed(first_seed) {
    for (const std::string& p : prefixes) {
      for (const char* unit : {"rc1", "rc2"})
        for (const char* conv : {".c1", ".c2"}) {
          add(p + unit + conv + ".weight", {f, f, 3, 3}, 0.3f);
          add(p + unit + conv + ".bias", {f}, 0.2f);
        }
      add(p + "out.weight", {f, f, 1, 1}, 0.5f);
      add(p + "out.bias", {f}, out_bias);
    }
  }
  void add(const std::string& name, const Shape& shape, float amp) {
    owned.push_back(test::random_tensor(shape, seed++, amp));
    recs.push_back({name, DType::F32, owned.back().shape(), owned.back().raw(), owned.back().nbytes()});
    bytes += owned.back().nbytes();
  }
  ModelFile file(const std::string& name) const {
    return ModelFile(name, std::map<std::string, MetaValue>{}, recs, nullptr, bytes);
  }
};

TEST(FeatureFusionBlock, UnresizedThenUpsampledEqualsForward) {
  const FusionWeights w({""}, 1, 0.2f);
  const ModelFile mf = w.file("fusion.gguf");
  ops::Context ctx(Device::cpu(), 2);
  HostArena arena(1 << 20);
  layers::Exec ex{ctx, arena};
  const Tensor top = test::random_tensor({2, f, 5, 7}, 20);
  const Tensor lateral = test::random_tensor({2, f, 5, 7}, 21);
  for (bool lateral_unit : {true, false}) {
    const layers::FeatureFusionBlock block(mf, "rc1", "rc2", "out", f, lateral_unit);
    const Tensor lat = lateral_unit ? lateral : Tensor();
    const Tensor want = block.forward(ex, top, lat, 11, 13);
    const Tensor small = block.forward_unresized(ex, top, lat);
    ASSERT_EQ(shape_str(small.shape()), shape_str(top.shape()));
    Tensor got = Tensor::empty({2, f, 11, 13});
    ops::resize_bilinear(ctx, small, got, /*align_corners=*/true);
    test::expect_close(got, want, 1e-6, 1e-6, lateral_unit ? "with the lateral unit" : "without it");
  }
}

// The DPT chain as the heads run it (each block's upsample and its 1×1 conv's bias deferred to the next block's
// add_upsampled) against the blocks' plain forward() chained through resized maps.
TEST(FeatureFusionBlock, DeferredChainEqualsResizedChain) {
  const FusionWeights w({"b0.", "b1.", "b2."}, 40, 0.4f);
  const ModelFile mf = w.file("chain.gguf");
  ops::Context ctx(Device::cpu(), 2);
  HostArena arena(4 << 20);
  layers::Exec ex{ctx, arena};
  std::vector<layers::FeatureFusionBlock> chain;
  for (int k = 0; k < 3; ++k)
    chain.emplace_back(mf, str_cat("b", k, ".rc1"), str_cat("b", k, ".rc2"), str_cat("b", k, ".out"), f,
                       /*lateral_unit=*/k < 2);
  // rn maps of a 4 : 2 : 1-ish pyramid with odd sizes (b2 is the deepest, no lateral unit).
  const Tensor rn0 = test::random_tensor({2, f, 13, 11}, 50), rn1 = test::random_tensor({2, f, 7, 6}, 51),
               rn2 = test::random_tensor({2, f, 4, 3}, 52);
  Tensor plain = chain[2].forward(ex, rn2, Tensor(), rn1.dim(2), rn1.dim(3));
  plain = chain[1].forward(ex, plain, rn1, rn0.dim(2), rn0.dim(3));
  const Tensor want = chain[0].forward(ex, plain, rn0, 0, 0);

  using Deferred = layers::FeatureFusionBlock::Deferred;
  Deferred path = chain[2].forward_deferred(ex, Deferred{rn2, Tensor()}, Tensor());
  ASSERT_EQ(shape_str(path.map.shape()), shape_str(rn2.shape()));
  ASSERT_TRUE(path.bias.defined());
  path = chain[1].forward_deferred(ex, path, rn1);
  ASSERT_EQ(shape_str(path.map.shape()), shape_str(rn1.shape()));
  test::expect_close(chain[0].forward(ex, path, rn0, 0, 0), want, 1e-5, 1e-5, "deferred chain");
  Tensor got = Tensor::empty(want.shape());
  ops::resize_bilinear(ctx, chain[0].forward_unresized(ex, path, rn0), got, /*align_corners=*/true);
  test::expect_close(got, want, 1e-5, 1e-5, "deferred chain, last block unresized");

  // A deferred map with a bias and no lateral input to give its size is refused.
  try {
    chain[1].forward_deferred(ex, path, Tensor());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  }
}

}  // namespace
}  // namespace dacpp
