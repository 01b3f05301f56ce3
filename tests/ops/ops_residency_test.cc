// Residency and backend-failure behaviour shared by every op: a tensor claimed to live on another device is refused
// with Error{Backend} naming it (and never dereferenced: its pointer is bogus), and an injected oneDNN failure
// ("dnnl.call") surfaces as Error{Backend} while the same Context keeps working afterwards.
#include <gtest/gtest.h>

#include <functional>

#include "core/fault.h"
#include "ops/attention.h"
#include "ops/conv2d.h"
#include "ops/elementwise.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/op_test_util.h"
#include "ops/permute.h"
#include "ops/resize.h"
#include "ops/upsample_conv_head.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

const char* const kName = "blocks.3.attn.proj.weight";

// A tensor that claims to be on cuda:0 at an address no host code may touch.
Tensor on_cuda(const Shape& s) {
  return Tensor::view(reinterpret_cast<void*>(uintptr_t{0x10}), s, DType::F32, Device::cuda(), nullptr, kName);
}

void expect_refused(const char* what, const std::function<void()>& call) {
  SCOPED_TRACE(what);
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Backend) << e.message();
    EXPECT_NE(e.message().find(kName), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("cuda:0"), std::string::npos) << e.message();
  }
}

TEST(OpsResidencyTest, DenseOpsRefuseOffDeviceTensors) {
  ops::Context ctx;
  Tensor x = test::random_tensor({4, 8}, 1), w = test::random_tensor({6, 8}, 2), y = test::output_tensor({4, 6});
  Tensor w_dev = on_cuda({6, 8}), b_dev = on_cuda({6}), y_dev = on_cuda({4, 6});
  expect_refused("linear w", [&] { ops::linear(ctx, x, w_dev, Tensor(), y); });
  expect_refused("linear bias", [&] { ops::linear(ctx, x, w, b_dev, y); });
  expect_refused("linear y", [&] { ops::linear(ctx, x, w, Tensor(), y_dev); });
  Tensor g = test::random_tensor({8}, 3), y8 = test::output_tensor({4, 8}), g_dev = on_cuda({8});
  Tensor y8_dev = on_cuda({4, 8});
  expect_refused("layer_norm gamma", [&] { ops::layer_norm(ctx, x, g_dev, g, 1e-6f, y8); });
  expect_refused("layer_norm y", [&] { ops::layer_norm(ctx, x, g, g, 1e-6f, y8_dev); });
  Tensor q = test::random_tensor({1, 2, 3, 4}, 4), o = test::output_tensor({1, 3, 2, 4});
  Tensor k_dev = on_cuda({1, 2, 3, 4});
  expect_refused("attention k", [&] { ops::attention(ctx, q, k_dev, q, 0.5f, o); });
  Tensor qkv_dev = on_cuda({1, 3, 3 * 2 * 4});
  expect_refused("attention_qkv qkv", [&] { ops::attention_qkv(ctx, qkv_dev, 2, 0.5f, o); });
  Tensor qkv = test::random_tensor({1, 3, 3 * 2 * 4}, 5), o_dev = on_cuda({1, 2, 2, 4});
  expect_refused("attention_qkv_rows qkv", [&] { ops::attention_qkv_rows(ctx, qkv_dev, 2, 0.5f, 1, o); });
  expect_refused("attention_qkv_rows out", [&] { ops::attention_qkv_rows(ctx, qkv, 2, 0.5f, 1, o_dev); });
}

TEST(OpsResidencyTest, ConvAndResizeRefuseOffDeviceTensors) {
  ops::Context ctx;
  Tensor x = test::random_tensor({1, 2, 5, 5}, 1), y = test::output_tensor({1, 3, 5, 5});
  Tensor w_dev = on_cuda({3, 2, 3, 3}), x_dev = on_cuda({1, 2, 5, 5});
  expect_refused("conv2d w", [&] { ops::conv2d(ctx, x, w_dev, Tensor(), y, {1, 1, 1, 1}); });
  Tensor yt = test::output_tensor({1, 3, 10, 10}), wt_dev = on_cuda({2, 3, 2, 2});
  expect_refused("conv_transpose2d w", [&] { ops::conv_transpose2d(ctx, x, wt_dev, Tensor(), yt, 2); });
  Tensor tokens = test::random_tensor({1, 25, 2}, 5), tokens_dev = on_cuda({1, 25, 2});
  Tensor wt = test::random_tensor({2, 3, 2, 2}, 6);
  expect_refused("conv_transpose2d_tokens w",
                 [&] { ops::conv_transpose2d_tokens(ctx, tokens, 5, 5, wt_dev, Tensor(), yt, 2); });
  Tensor cols = test::output_tensor({25, 3 * 8}), cols_dev = on_cuda({25, 3 * 8});
  expect_refused("im2col3x3_tokens tokens", [&] { ops::im2col3x3_tokens(ctx, tokens_dev, 5, 5, 1, 1, true, cols); });
  expect_refused("im2col3x3_tokens y", [&] { ops::im2col3x3_tokens(ctx, tokens, 5, 5, 1, 1, true, cols_dev); });
  expect_refused("conv_transpose2d_tokens x",
                 [&] { ops::conv_transpose2d_tokens(ctx, tokens_dev, 5, 5, wt, Tensor(), yt, 2); });
  Tensor yr = test::output_tensor({1, 2, 9, 9});
  expect_refused("resize_bilinear x", [&] { ops::resize_bilinear(ctx, x_dev, yr, false); });
  expect_refused("resize_bicubic x", [&] { ops::resize_bicubic(ctx, x_dev, yr, false); });
  Tensor yu = test::output_tensor({1, 3, 9, 9});
  expect_refused("conv2d_upsampled w", [&] { ops::conv2d_upsampled(ctx, x, w_dev, Tensor(), yu); });
  expect_refused("conv2d_upsampled x", [&] {
    ops::conv2d_upsampled(ctx, x_dev, test::random_tensor({3, 2, 3, 3}, 2), Tensor(), yu);
  });
  Tensor w3 = test::random_tensor({4, 2, 3, 3}, 3), w1 = test::random_tensor({1, 4, 1, 1}, 4);
  Tensor w1_dev = on_cuda({1, 4, 1, 1}), yh = test::output_tensor({1, 1, 9, 9});
  expect_refused("upsample_conv_head w1", [&] { ops::upsample_conv_head(ctx, x, w3, Tensor(), w1_dev, Tensor(), yh); });
  expect_refused("upsample_conv_head x", [&] { ops::upsample_conv_head(ctx, x_dev, w3, Tensor(), w1, Tensor(), yh); });
}

TEST(OpsResidencyTest, ElementwiseAndPermuteRefuseOffDeviceTensors) {
  ops::Context ctx;
  Tensor a = test::random_tensor({3, 4}, 1), y = test::output_tensor({3, 4}), a_dev = on_cuda({3, 4});
  Tensor b_dev = on_cuda({4}), yp = test::output_tensor({4, 3});
  expect_refused("unary x", [&] { ops::unary(ctx, ops::Unary::Gelu, a_dev, y); });
  expect_refused("add b", [&] { ops::add(ctx, a, b_dev, y); });
  expect_refused("mul a", [&] { ops::mul(ctx, a_dev, a, y); });
  expect_refused("permute x", [&] { ops::permute(ctx, a_dev, {1, 0}, yp); });
}

TEST(OpsContextTest, CudaContextUnsupportedWithoutCuda) {
  if (DACPP_TESTS_CUDA_BUILD) GTEST_SKIP() << "a CUDA build: its context's errors are dacpp_gpu_tests' (CudaRuntimeTest)";
  try {
    ops::Context ctx(Device::cuda());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(e.message().find("without CUDA"), std::string::npos) << e.message();
  }
}

// Runs `call` with the next "dnnl.call" armed to fail, expects Error{Backend}, then runs it again cleanly.
void fault_then_recover(const char* what, const std::function<void()>& call) {
  SCOPED_TRACE(what);
  fault::configure("dnnl.call");
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Backend) << e.message();
    EXPECT_NE(e.message().find("dnnl.call"), std::string::npos) << e.message();
  }
  fault::configure("");
  EXPECT_NO_THROW(call());
}

TEST(OpsFaultTest, InjectedOneDnnFailureIsBackendErrorAndContextRecovers) {
  ops::Context ctx;
  Tensor x = test::random_tensor({4, 8}, 1), w = test::random_tensor({6, 8}, 2), y = test::output_tensor({4, 6});
  fault_then_recover("linear", [&] { ops::linear(ctx, x, w, Tensor(), y); });
  test::expect_close(y, ref::linear(x, w, Tensor(), ops::Activation::None));
  Tensor g = test::random_tensor({8}, 3), y8 = test::output_tensor({4, 8});
  fault_then_recover("layer_norm", [&] { ops::layer_norm(ctx, x, g, g, 1e-6f, y8); });
  test::expect_close(y8, ref::layer_norm(x, g, g, 1e-6f));
  Tensor q = test::random_tensor({1, 2, 3, 4}, 4), o = test::output_tensor({1, 3, 2, 4});
  fault_then_recover("attention", [&] { ops::attention(ctx, q, q, q, 0.5f, o); });
  test::expect_close(o, ref::attention(q, q, q, 0.5f));
  Tensor xc = test::random_tensor({1, 2, 5, 5}, 5), wc = test::random_tensor({3, 2, 3, 3}, 6);
  Tensor yc = test::output_tensor({1, 3, 5, 5});
  fault_then_recover("conv2d", [&] { ops::conv2d(ctx, xc, wc, Tensor(), yc, {1, 1, 1, 1}); });
  test::expect_close(yc, ref::conv2d(xc, wc, Tensor(), 1, 1, 1, 1, false));
  Tensor wt = test::random_tensor({2, 3, 2, 2}, 7), yt = test::output_tensor({1, 3, 10, 10});
  fault_then_recover("conv_transpose2d", [&] { ops::conv_transpose2d(ctx, xc, wt, Tensor(), yt, 2); });
  test::expect_close(yt, ref::conv_transpose2d(xc, wt, Tensor(), 2));
  Tensor tokens = ref::permute(xc, {0, 2, 3, 1}).reshape({1, 25, 2});
  fault_then_recover("conv_transpose2d_tokens",
                     [&] { ops::conv_transpose2d_tokens(ctx, tokens, 5, 5, wt, Tensor(), yt, 2); });
  test::expect_close(yt, ref::conv_transpose2d(xc, wt, Tensor(), 2));
  Tensor yu = test::output_tensor({4, 8});
  fault_then_recover("unary", [&] { ops::unary(ctx, ops::Unary::Silu, x, yu); });
  test::expect_close(yu, ref::unary(ops::Unary::Silu, x), 1e-6, 1e-5);
}

}  // namespace
}  // namespace dacpp
