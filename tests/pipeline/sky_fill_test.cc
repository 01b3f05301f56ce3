// pipeline::fill_sky_depth: the 99th percentile (torch.quantile, linear) of the non-sky depth into the sky pixels,
// only when both sets have more than 10 pixels; one set over a whole [S, H, W] batch.
#include "pipeline/sky_fill.h"

#include <gtest/gtest.h>

#include <vector>

namespace dacpp {
namespace {

// depth i+1 at pixel i; the last `sky` pixels are sky (score 0.9), the rest ground (score 0.1).
void make(int64_t n, int64_t sky, const Shape& shape, Tensor& depth, Tensor& score) {
  depth = Tensor::empty(shape, DType::F32, "depth");
  score = Tensor::empty(shape, DType::F32, "sky");
  for (int64_t i = 0; i < n; ++i) {
    depth.data<float>()[i] = static_cast<float>(i + 1);
    score.data<float>()[i] = i >= n - sky ? 0.9f : 0.1f;
  }
}

TEST(SkyFill, SkyGetsThe99thPercentileOfGround) {
  Tensor depth, score;
  make(120, 20, {10, 12}, depth, score);  // ground depths 1..100
  ASSERT_TRUE(pipeline::fill_sky_depth(depth, score));
  // torch.quantile(1..100, 0.99): rank 98.01 between 99 and 100 -> 99.01
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(depth.data<float>()[i], static_cast<float>(i + 1));
  for (int64_t i = 100; i < 120; ++i) EXPECT_NEAR(depth.data<float>()[i], 99.01f, 1e-5f);
}

TEST(SkyFill, BatchIsOneSet) {
  Tensor depth, score;
  make(120, 20, {2, 6, 10}, depth, score);  // the sky is all in view 1; the quantile still spans both views
  ASSERT_TRUE(pipeline::fill_sky_depth(depth, score));
  EXPECT_NEAR(depth.data<float>()[119], 99.01f, 1e-5f);
}

TEST(SkyFill, TooFewPixelsLeavesDepthAlone) {
  for (int64_t sky : {int64_t{10}, int64_t{110}}) {  // 10 sky pixels, then 10 ground pixels
    Tensor depth, score;
    make(120, sky, {120}, depth, score);
    EXPECT_FALSE(pipeline::fill_sky_depth(depth, score)) << sky;
    for (int64_t i = 0; i < 120; ++i) EXPECT_EQ(depth.data<float>()[i], static_cast<float>(i + 1));
  }
}

TEST(SkyFill, MismatchedShapesAreRejected) {
  Tensor depth = Tensor::zeros({4, 5}, DType::F32, "depth"), score = Tensor::zeros({5, 4}, DType::F32, "sky");
  EXPECT_THROW(pipeline::fill_sky_depth(depth, score), Error);
}

}  // namespace
}  // namespace dacpp
