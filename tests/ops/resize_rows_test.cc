#include "ops/resize_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ops/op_test_util.h"
#include "ops/resize.h"

namespace dacpp {
namespace {

// Every band [row0, row0 + rows) equals the same rows of the full resize, bit for bit.
TEST(ResizeRows, BandsEqualRowsOfTheFullResize) {
  ops::Context ctx;
  const int64_t n = 2, c = 3, h = 9, w = 7, oh = 23, ow = 17;
  Tensor x = test::random_tensor({n, c, h, w}, 11, 1.f, "x");
  for (bool ac : {true, false}) {
    Tensor full = test::output_tensor({n, c, oh, ow});
    ops::resize_bilinear(ctx, x, full, ac);
    for (int64_t row0 : {0, 1, 5, 20}) {
      const int64_t rows = std::min<int64_t>(4, oh - row0);
      Tensor band = test::output_tensor({n, c, rows, ow});
      ops::resize_bilinear_rows(ctx, x, band, row0, oh, ac);
      for (int64_t p = 0; p < n * c; ++p) {
        const float* want = full.data<float>() + (p * oh + row0) * ow;
        const float* got = band.data<float>() + p * rows * ow;
        EXPECT_EQ(0, std::memcmp(want, got, sizeof(float) * rows * ow)) << "plane " << p << " row0 " << row0;
      }
    }
  }
}

TEST(ResizeRows, BandOutsideTheFullHeightIsRefused) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 2, 4, 4}, 3, 1.f, "x");
  Tensor band = test::output_tensor({1, 2, 3, 8});
  EXPECT_THROW(ops::resize_bilinear_rows(ctx, x, band, 6, 8, true), Error);
  EXPECT_THROW(ops::resize_bilinear_rows(ctx, x, band, -1, 8, true), Error);
  Tensor wrong_c = test::output_tensor({1, 3, 3, 8});
  EXPECT_THROW(ops::resize_bilinear_rows(ctx, x, wrong_c, 0, 8, true), Error);
}

}  // namespace
}  // namespace dacpp
