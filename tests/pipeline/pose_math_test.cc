// Pose helpers: rigid inverse, QL decomposition, intrinsics rescale.
#include "pipeline/pose_math.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace dacpp::pipeline {
namespace {

TEST(PoseMath, QlDecompositionReconstructsWithLowerTriangularPositiveDiagonal) {
  const Mat3 a = {0.8, -0.3, 0.2, 0.1, 1.1, -0.4, 0.5, 0.2, 0.9};
  Mat3 q, l;
  ql_decompose(a, q, l, "test");
  const Mat3 back = mat3_mul(q, l);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(back[i], a[i], 1e-12) << i;
  EXPECT_EQ(l[1], 0.0);
  EXPECT_EQ(l[2], 0.0);
  EXPECT_EQ(l[5], 0.0);
  EXPECT_GT(l[0], 0);
  EXPECT_GT(l[4], 0);
  EXPECT_GT(l[8], 0);
  const Mat3 qtq = mat3_mul(mat3_transpose(q), q);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(qtq[i * 3 + j], i == j ? 1.0 : 0.0, 1e-12);
  EXPECT_NEAR(mat3_det(q), 1.0, 1e-12);  // det A > 0
}

TEST(PoseMath, QlDecompositionRejectsSingular) {
  const Mat3 a = {1, 2, 3, 2, 4, 6, 0, 1, 1};
  Mat3 q, l;
  EXPECT_THROW(ql_decompose(a, q, l, "test"), Error);
}

TEST(PoseMath, InvertExtrinsicsRoundTrips) {
  const double c = std::cos(0.4), s = std::sin(0.4);
  const Tensor w2c =
      Tensor::from_vector({1, 3, 4}, {float(c), float(-s), 0, 1.5f, float(s), float(c), 0, -2, 0, 0, 1, 3});
  const Tensor c2w = invert_extrinsics(w2c);
  // Camera centre = −Rᵀt.
  EXPECT_NEAR(c2w.data<float>()[3], -(c * 1.5 + s * -2), 1e-6);
  EXPECT_NEAR(c2w.data<float>()[11], -3.0, 1e-6);
  const Tensor back = invert_extrinsics(c2w);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(back.data<float>()[i], w2c.data<float>()[i], 1e-6) << i;
  EXPECT_THROW(invert_extrinsics(Tensor::zeros({1, 4, 4})), Error);
}

TEST(PoseMath, RescaleIntrinsicsToSourceSize) {
  const Tensor k = Tensor::from_vector({1, 3, 3}, {300, 0, 252, 0, 310, 189, 0, 0, 1});
  const Tensor r = rescale_intrinsics(k, 378, 504, 756, 1512);
  const float want[9] = {900, 0, 756, 0, 620, 378, 0, 0, 1};
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(r.data<float>()[i], want[i]) << i;
  EXPECT_THROW(rescale_intrinsics(k, 0, 504, 10, 10), Error);
}

}  // namespace
}  // namespace dacpp::pipeline
