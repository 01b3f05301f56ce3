// ops::rope2d on CUDA against the CPU op on the same (dtype-rounded) inputs, positions uploaded as i32.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_ops.h"
#include "gpu/nn_cuda_test_util.h"
#include "ops/rope.h"

namespace dacpp {
namespace {

struct RopeCase {
  int64_t b, h, n, d;
  DType dt;
};

class RopeCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<RopeCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(RopeCudaTest, MatchesCpu) {
  if (IsSkipped()) return;
  const RopeCase& c = GetParam();
  Tensor pos = Tensor::empty({c.n, 2}, DType::I32, "positions");
  for (int64_t i = 0; i < c.n; ++i) {  // a 37-column patch grid, plus a camera-token-like (0, 0) first
    pos.data<int32_t>()[2 * i] = static_cast<int32_t>(i == 0 ? 0 : 1 + (i - 1) / 37);
    pos.data<int32_t>()[2 * i + 1] = static_cast<int32_t>(i == 0 ? 0 : 1 + (i - 1) % 37);
  }
  Tensor pos_dev = cuda::empty(ctx().cuda(), {c.n, 2}, DType::I32, "positions");
  cuda::copy(ctx().cuda(), pos, pos_dev);
  Tensor x = test::random_tensor({c.b, c.h, c.n, c.d}, 9, 1.f, "q");
  Tensor xd = to_device(x, c.dt);
  ops::rope2d(ctx(), xd, pos_dev, 100.f);

  ops::Context cpu(Device::cpu());
  ops::rope2d(cpu, x, pos, 100.f);
  // bf16/f16 outputs round once more than the f32 reference; f32 differs only by sin/cos ulps.
  expect_close(xd, x, c.dt, "rope2d");
}

std::string rope_name(const ::testing::TestParamInfo<RopeCase>& i) {
  const RopeCase& c = i.param;
  return test::case_name(i.index, test::shape_tag({c.b, c.h, c.n, c.d}) + "_" + nntest::tag(c.dt));
}

INSTANTIATE_TEST_SUITE_P(Shapes, RopeCudaTest,
                         ::testing::Values(RopeCase{1, 6, 1370, 64, DType::F32}, RopeCase{2, 3, 50, 16, DType::F32},
                                           RopeCase{1, 6, 1370, 64, DType::BF16},
                                           RopeCase{2, 4, 200, 128, DType::F16}, RopeCase{1, 1, 3, 4, DType::F32}),
                         rope_name);

}  // namespace
}  // namespace dacpp
