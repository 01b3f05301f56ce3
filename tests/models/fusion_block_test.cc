// layers::FeatureFusionBlock::forward_unresized (refinenet1 before its upsample, for ops::conv2d_upsampled) against
// forward(): resampling the unresized map bilinearly with align_corners gives forward()'s result, with and without
// the lateral input; forward_units() followed by out_conv() gives the unresized map; mix() and upsample_into() give
// forward()'s result (plus what y held, accumulating).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/arena.h"
#include "formats/gguf_test_util.h"
#include "layers/feature_fusion_block.h"
#include "ops/context.h"
#include "ops/elementwise.h"
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
    // The units alone, then out_conv: forward_unresized's map (a consumer that folds the 1×1 conv in).
    const Tensor units = block.forward_units(ex, top, lat);
    Tensor mixed = Tensor::empty(top.shape());
    block.out_conv().forward_into(ex, units, mixed);
    test::expect_close(mixed, small, 1e-6, 1e-6, lateral_unit ? "units, with the lateral unit" : "units, without it");
    // mix() then upsample_into(): forward()'s result, and with `accumulate` that plus what y held.
    const Tensor m = block.mix(ex, top, lat);
    Tensor fresh = Tensor::empty({2, f, 11, 13});
    block.upsample_into(ex, m, fresh, /*accumulate=*/false);
    test::expect_close(fresh, want, 1e-6, 1e-6, "mix + upsample_into");
    const Tensor prior = test::random_tensor({2, f, 11, 13}, 22);
    Tensor merged = prior.clone();
    block.upsample_into(ex, m, merged, /*accumulate=*/true);
    Tensor want_merged = Tensor::empty({2, f, 11, 13});
    ops::add(ctx, want, prior, want_merged);
    test::expect_close(merged, want_merged, 1e-6, 1e-6, "mix + upsample_into, accumulating");
  }
}

}  // namespace
}  // namespace dacpp
