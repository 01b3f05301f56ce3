// ops::resize_bilinear, resize_bilinear_rows and resize_bicubic on CUDA against the CPU backend (same taps, same
// summation order: f32 results agree to rounding).
#include <gtest/gtest.h>

#include "gpu/nn_cuda_test_util.h"
#include "ops/resize.h"
#include "ops/resize_rows.h"

namespace dacpp {
namespace {

class ResizeCudaTest : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }
  ops::Context cpu_{Device::cpu(), 2};
};

struct ResizeCase {
  Shape x;
  int64_t oh, ow;
  bool cubic, align_corners;
  double scale_h, scale_w;
};

TEST_F(ResizeCudaTest, MatchesCpu) {
  if (IsSkipped()) return;
  const ResizeCase cases[] = {
      {{1, 3, 7, 9}, 14, 20, false, false, 0, 0},     {{1, 3, 7, 9}, 14, 20, false, true, 0, 0},
      {{2, 2, 20, 30}, 7, 11, false, false, 0, 0},    {{1, 2, 10, 12}, 14, 16, true, false, 1 / 1.4, 1 / 1.4},
      {{1, 2, 10, 12}, 23, 17, true, true, 0, 0},     {{1, 4, 37, 37}, 518, 518, true, false, 0, 0},
      {{1, 1, 1, 1}, 3, 5, false, false, 0, 0},       {{1, 2, 16, 16}, 5, 5, true, false, 0, 0},
      {{2, 40, 19, 23}, 37, 300, false, true, 0, 0},  // 80 planes, 4 columns per thread
      {{1, 2, 30, 40}, 51, 1100, false, false, 0, 0}, // a row over 2 blocks, 4 columns per thread, partial row group
      {{1, 3, 30, 40}, 17, 1034, false, true, 0, 0},  // 2 columns per thread (1034 % 4 != 0), 2 blocks per row
      {{1, 3, 9, 9}, 13, 1033, true, false, 0, 0},    // bicubic, odd width (no vector stores), partial group
  };
  for (const ResizeCase& c : cases) {
    for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
      const std::string what = str_cat(c.cubic ? "bicubic " : "bilinear ", shape_str(c.x), " -> ", c.oh, "x", c.ow,
                                        " ac", c.align_corners, " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      const Shape ys{c.x[0], c.x[1], c.oh, c.ow};
      Tensor x = test::random_tensor(c.x, 14, 1.f, "x");
      Tensor xd = to_device(x, dt);
      Tensor y = nan_output(ys, dt), want = test::output_tensor(ys);
      if (c.cubic) {
        ops::resize_bicubic(ctx(), xd, y, c.align_corners, c.scale_h, c.scale_w);
        ops::resize_bicubic(cpu_, x, want, c.align_corners, c.scale_h, c.scale_w);
      } else {
        ops::resize_bilinear(ctx(), xd, y, c.align_corners);
        ops::resize_bilinear(cpu_, x, want, c.align_corners);
      }
      expect_close(y, want, dt, what);
    }
  }
}

// resize_bilinear_add (bias per channel, y's own values when accumulating) against the CPU: 4-column stores (148
// wide), 2-column stores, and unaligned scalar stores (an odd width).
TEST_F(ResizeCudaTest, AddMatchesCpu) {
  if (IsSkipped()) return;
  const std::pair<Shape, Shape> cases[] = {
      {{1, 8, 74, 74}, {1, 8, 148, 148}}, {{2, 3, 19, 19}, {2, 3, 37, 37}}, {{1, 4, 7, 9}, {1, 4, 14, 18}}};
  for (const auto& [xs, ys] : cases)
    for (DType dt : {DType::F32, DType::BF16, DType::F16})
      for (const bool accumulate : {true, false}) {
        const std::string what =
            str_cat(shape_str(xs), " -> ", shape_str(ys), " accumulate ", accumulate, " ", nntest::tag(dt));
        SCOPED_TRACE(what);
        Tensor x = test::random_tensor(xs, 15, 1.f, "x");
        Tensor bias = test::random_tensor({xs[1]}, 16, 1.f, "bias");
        Tensor prior = test::random_tensor(ys, 17, 1.f, "prior");
        Tensor xd = to_device(x, dt), bd = to_device(bias, DType::F32);
        Tensor y = to_device(prior, dt);
        ops::resize_bilinear_add(ctx(), xd, bd, y, /*align_corners=*/true, accumulate);
        Tensor want = to_host(to_device(prior, dt));  // the prior as the device holds it
        ops::resize_bilinear_add(cpu_, to_host(xd), bias, want, true, accumulate);
        expect_close(y, want, dt, what);
      }
}

TEST_F(ResizeCudaTest, RowsMatchCpu) {
  if (IsSkipped()) return;
  for (bool ac : {false, true}) {
    Tensor x = test::random_tensor({1, 2, 9, 11}, 15, 1.f, "x");
    Tensor xd = to_device(x, DType::F32);
    Tensor y = nan_output({1, 2, 12, 30}, DType::F32), want = test::output_tensor({1, 2, 12, 30});
    ops::resize_bilinear_rows(ctx(), xd, y, 5, 40, ac);
    ops::resize_bilinear_rows(cpu_, x, want, 5, 40, ac);
    expect_close(y, want, DType::F32, str_cat("rows ac", ac));
  }
}

}  // namespace
}  // namespace dacpp
