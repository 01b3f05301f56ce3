#include "ops/linear.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_context.h"
#include "ops/op_test_util.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

struct LinearCase {
  Shape x;
  int64_t n;
  bool bias;
  ops::Activation act;
};

class LinearTest : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearTest, MatchesReference) {
  const LinearCase& c = GetParam();
  ops::Context ctx;
  const int64_t k = c.x.back();
  Tensor x = test::random_tensor(c.x, 1, 1.f, "x");
  Tensor w = test::random_tensor({c.n, k}, 2, 0.5f, "w");
  Tensor b = c.bias ? test::random_tensor({c.n}, 3, 1.f, "b") : Tensor();
  Shape ys = c.x;
  ys.back() = c.n;
  Tensor y = test::output_tensor(ys);
  ops::linear(ctx, x, w, b, y, c.act);
  test::expect_close(y, ref::linear(x, w, b, c.act));
}

std::string linear_name(const ::testing::TestParamInfo<LinearCase>& i) {
  static const char* const kActs[] = {"", "_relu", "_gelu"};
  const LinearCase& c = i.param;
  return test::case_name(i.index, test::shape_tag(c.x) + "_n" + std::to_string(c.n) + (c.bias ? "_bias" : "") +
                                      kActs[static_cast<int>(c.act)]);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LinearTest,
    ::testing::Values(LinearCase{{1, 1}, 1, false, ops::Activation::None},
                      LinearCase{{7, 13}, 5, true, ops::Activation::None},
                      LinearCase{{2, 3, 17}, 33, true, ops::Activation::Gelu},
                      LinearCase{{5, 64}, 31, false, ops::Activation::Relu},
                      LinearCase{{1, 197, 384}, 1152, true, ops::Activation::None},
                      LinearCase{{1, 101, 96}, 384, true, ops::Activation::Gelu}),
                         linear_name);

TEST(LinearPlanTest, PrimitiveCreatedOncePerShape) {
  ops::Context ctx;
  Tensor x = test::random_tensor({4, 8}, 1), w = test::random_tensor({6, 8}, 2), y = test::output_tensor({4, 6});
  ops::linear(ctx, x, w, Tensor(), y);
  const uint64_t after_first = ctx.cpu().plans_created();
  for (int i = 0; i < 3; ++i) ops::linear(ctx, x, w, Tensor(), y);
  EXPECT_EQ(ctx.cpu().plans_created(), after_first);
  Tensor x2 = test::random_tensor({5, 8}, 3), y2 = test::output_tensor({5, 6});
  ops::linear(ctx, x2, w, Tensor(), y2);
  EXPECT_EQ(ctx.cpu().plans_created(), after_first + 1);
  test::expect_close(y2, ref::linear(x2, w, Tensor(), ops::Activation::None));
}

TEST(LinearPlanTest, CacheIsBoundedLru) {
  ops::Context ctx(Device::cpu(), 0, /*prim_cache_capacity=*/2);
  Tensor w = test::random_tensor({3, 4}, 2);
  for (int64_t m = 1; m <= 5; ++m) {
    Tensor x = test::random_tensor({m, 4}, 1), y = test::output_tensor({m, 3});
    ops::linear(ctx, x, w, Tensor(), y);
    test::expect_close(y, ref::linear(x, w, Tensor(), ops::Activation::None));
  }
  EXPECT_EQ(ctx.cpu().plan_count(), 2u);
  EXPECT_EQ(ctx.cpu().plans_created(), 5u);
}

TEST(LinearErrorTest, KMismatchNamesTensors) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 8}, 1, 1.f, "tokens");
  Tensor w = test::random_tensor({4, 9}, 2, 1.f, "blocks.0.mlp.fc1.weight");
  Tensor y = test::output_tensor({2, 4});
  try {
    ops::linear(ctx, x, w, Tensor(), y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("blocks.0.mlp.fc1.weight"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[4,9]"), std::string::npos) << e.message();
  }
}

TEST(LinearErrorTest, BiasShapeMismatch) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 8}, 1), w = test::random_tensor({4, 8}, 2), y = test::output_tensor({2, 4});
  Tensor b = test::random_tensor({5}, 3, 1.f, "fc.bias");
  try {
    ops::linear(ctx, x, w, b, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("fc.bias"), std::string::npos) << e.message();
  }
}

// linear_add: y += x · wᵀ + b into an f32 y, for plain f32 and bf16 weights and a packed bf16 weight, against y's
// old values plus linear's result on the same operands.
TEST(LinearAddTest, AddsTheProductToY) {
  for (const bool bias : {false, true}) {
    ops::Context ctx;
    const Tensor x = test::random_tensor({3, 5, 24}, 1, 1.f, "x"), w = test::random_tensor({40, 24}, 2, 0.5f, "w");
    const Tensor b = bias ? test::random_tensor({40}, 3, 1.f, "b") : Tensor();
    const Tensor y0 = test::random_tensor({3, 5, 40}, 4, 2.f, "stream");
    struct Form {
      const char* what;
      ops::LinearWeight w;
      double tol;
    };
    std::vector<Form> forms = {{"f32", ops::LinearWeight(w), 1e-6},
                               {"bf16", ops::LinearWeight(test::to_bf16(w)), 1e-6}};
    if (std::optional<ops::LinearWeight> packed = ops::pack_linear_weight(w, DType::BF16))
      forms.push_back({"packed bf16", *packed, 1e-6});
    for (const Form& f : forms) {
      SCOPED_TRACE(std::string(f.what) + (bias ? " with bias" : ""));
      Tensor product = test::output_tensor(y0.shape());
      ops::linear(ctx, x, f.w, b, product);
      Tensor want = y0.clone();
      for (int64_t i = 0; i < want.numel(); ++i) want.data<float>()[i] += product.data<float>()[i];
      Tensor y = y0.clone();
      ops::linear_add(ctx, x, f.w, b, y);
      test::expect_close(y, want, f.tol, f.tol);
      ops::linear_add(ctx, x, f.w, b, y);  // the cached plan adds again
      for (int64_t i = 0; i < want.numel(); ++i) want.data<float>()[i] += product.data<float>()[i];
      test::expect_close(y, want, f.tol, f.tol);
    }
  }
}

TEST(LinearAddTest, TheStreamMustBeF32AndShaped) {
  ops::Context ctx;
  const Tensor x = test::random_tensor({2, 8}, 1), w = test::random_tensor({4, 8}, 2, 1.f, "blocks.0.attn.proj.weight");
  Tensor narrow = test::output_tensor({2, 3}, "stream");
  Tensor bf = test::to_bf16(test::random_tensor({2, 4}, 3, 1.f, "stream"));
  for (Tensor* y : {&narrow, &bf}) {
    try {
      ops::linear_add(ctx, x, ops::LinearWeight(w), Tensor(), *y);
      ADD_FAILURE() << "no error for " << shape_str(y->shape()) << " " << dtype_name(y->dtype());
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.message();
      EXPECT_NE(e.message().find("linear_add"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
}  // namespace dacpp
