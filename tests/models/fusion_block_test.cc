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

TEST(FeatureFusionBlock, UnresizedThenUpsampledEqualsForward) {
  constexpr int64_t f = 4;
  std::vector<Tensor> owned;
  std::vector<TensorRecord> recs;
  size_t bytes = 0;
  uint32_t seed = 1;
  const auto add = [&](const std::string& name, const Shape& shape, float amp) {
    owned.push_back(test::random_tensor(shape, seed++, amp));
    recs.push_back({name, DType::F32, owned.back().shape(), owned.back().raw(), owned.back().nbytes()});
    bytes += owned.back().nbytes();
  };
  for (const char* unit : {"rc1", "rc2"})
    for (const char* conv : {".c1", ".c2"}) {
      add(std::string(unit) + conv + ".weight", {f, f, 3, 3}, 0.3f);
      add(std::string(unit) + conv + ".bias", {f}, 0.2f);
    }
  add("out.weight", {f, f, 1, 1}, 0.5f);
  add("out.bias", {f}, 0.2f);
  const ModelFile mf("fusion.gguf", std::map<std::string, MetaValue>{}, recs, nullptr, bytes);
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

}  // namespace
}  // namespace dacpp
