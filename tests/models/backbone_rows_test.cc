// Dinov2::row_cuts: where a one-image forward runs its transformer blocks in row chunks (RunnerOptions::row_chunks)
// and where it must run them whole. The chunked forward's values: ModelParity.StagesMatchOfficialCodeInRowChunks
// (against the official code) and RowChunkedForward below (against the whole rows).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model.h"
#include "engine/runner.h"
#include "models/dinov2.h"
#include "models/model_config.h"
#include "models/model_test_util.h"
#include "util/random_input.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

using Cuts = std::vector<int64_t>;
using testing::SyntheticModel;

class BackboneRows : public ::testing::Test {
 protected:
  // The cuts for `chunks` asked, tokens [images, n, E] of which `skip` lead.
  Cuts cuts(const models::Dinov2& vit, int chunks, int64_t n, int64_t images = 1, int64_t skip = 1) {
    layers::Exec ex{ctx_, arena_};
    models::RunState rs{ex, pos_};
    rs.row_chunks = chunks;
    const Tensor x = Tensor::empty({images, n, vit.config().embed_dim}, DType::F32, "tokens");
    return vit.row_cuts(rs, x, skip);
  }

  ops::Context ctx_;
  HostArena arena_;
  models::PosEmbedCache pos_;
};

TEST_F(BackboneRows, ChunksOfOneImageOnRowTiles) {
  const std::shared_ptr<const ModelFile> mf = SyntheticModel().build();
  const models::Dinov2 vit(*mf, models::ModelConfig::from_file(*mf).vit);
  EXPECT_EQ(cuts(vit, 1, 1370), Cuts{});
  // DA2 at 518²: 1 + 37² tokens; cuts at the nearest multiples of 128.
  EXPECT_EQ(cuts(vit, 2, 1370), (Cuts{0, 640, 1370}));
  EXPECT_EQ(cuts(vit, 3, 1370), (Cuts{0, 512, 896, 1370}));
  EXPECT_EQ(cuts(vit, 4, 1370), (Cuts{0, 384, 640, 1024, 1370}));
  // Too short for row tiles: even cuts.
  EXPECT_EQ(cuts(vit, 2, 131), (Cuts{0, 65, 131}));
  EXPECT_EQ(cuts(vit, 4, 17), (Cuts{0, 4, 8, 12, 17}));
  // More than kMaxRowChunks asked: kMaxRowChunks.
  EXPECT_EQ(cuts(vit, 9, 17).size(), static_cast<size_t>(models::RunState::kMaxRowChunks) + 1);
}

TEST_F(BackboneRows, WholeRowsWhereChunksDoNotApply) {
  const std::shared_ptr<const ModelFile> mf = SyntheticModel().build();
  const models::Dinov2 vit(*mf, models::ModelConfig::from_file(*mf).vit);
  EXPECT_EQ(cuts(vit, 2, 1370, /*images=*/2), Cuts{}) << "a batch's rows are not one contiguous range";
  EXPECT_EQ(cuts(vit, 2, 9, 1, /*skip=*/5), Cuts{}) << "the first chunk holds no patch row";
  EXPECT_EQ(cuts(vit, 4, 3), (Cuts{}));
  // RoPE from the first block on: the projection is rotated per head before attention, so no block attends in
  // place from it.
  SyntheticModel rope;
  rope.set_u32("vit.rope_start", 0);
  const std::shared_ptr<const ModelFile> rmf = rope.build();
  const models::Dinov2 rvit(*rmf, models::ModelConfig::from_file(*rmf).vit);
  EXPECT_EQ(cuts(rvit, 2, 1370), Cuts{});
}

// The synthetic DA2 and DA3-mono models at 70×84 (31 tokens) in 1-4 chunks: the same depth (and sky) as the whole
// rows, up to rounding.
TEST(RowChunkedForward, MatchesTheWholeRows) {
  for (bool da3 : {false, true}) {
    SCOPED_TRACE(da3 ? "DA3 mono" : "DA2");
    const std::shared_ptr<const Model> model = Model::from_file(SyntheticModel(da3).build());
    const Tensor x = testing::random_input(70, 84, 5);
    const ForwardResult want = Runner(model, testing::runner_options(2)).forward(x);
    for (int chunks = 2; chunks <= models::RunState::kMaxRowChunks; ++chunks) {
      SCOPED_TRACE(std::to_string(chunks) + " chunks");
      RunnerOptions o = testing::runner_options(2);
      o.row_chunks = chunks;
      const ForwardResult got = Runner(model, o).forward(x);
      EXPECT_LT(testing::rel_l2(got.depth, want.depth), 1e-6);
      if (want.sky.defined()) {
        EXPECT_LT(testing::rel_l2(got.sky, want.sky), 1e-6);
      }
    }
  }
}

TEST(RowChunkedForward, OutOfRangeIsRefused) {
  const std::shared_ptr<const Model> model = Model::from_file(SyntheticModel().build());
  for (int chunks : {0, -1, models::RunState::kMaxRowChunks + 1}) {
    RunnerOptions o = testing::runner_options(2);
    o.row_chunks = chunks;
    try {
      Runner runner(model, o);
      ADD_FAILURE() << "row_chunks " << chunks << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find("row_chunks"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
}  // namespace dacpp
