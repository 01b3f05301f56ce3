#include "ops/elementwise.h"

#include <gtest/gtest.h>

#include <functional>

#include "ops/op_test_util.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

class UnaryTest : public ::testing::TestWithParam<ops::Unary> {};

TEST_P(UnaryTest, MatchesReference) {
  ops::Context ctx;
  for (const Shape& s : {Shape{1}, Shape{7, 3}, Shape{2, 37, 97}, Shape{3, 40000}}) {
    Tensor x = test::random_tensor(s, 5, 4.f, "x");
    Tensor y = test::output_tensor(s);
    ops::unary(ctx, GetParam(), x, y);
    test::expect_close(y, ref::unary(GetParam(), x), 1e-6, 1e-4, shape_str(s));
  }
}

TEST_P(UnaryTest, InPlace) {
  ops::Context ctx;
  Tensor x = test::random_tensor({5, 33}, 6, 3.f);
  Tensor want = ref::unary(GetParam(), x);
  ops::unary(ctx, GetParam(), x, x);
  test::expect_close(x, want, 1e-6, 1e-4);
}

std::string unary_name(const ::testing::TestParamInfo<ops::Unary>& i) {
  static const char* const kNames[] = {"Gelu", "Silu", "Relu", "Exp", "Sigmoid"};
  const size_t k = static_cast<size_t>(i.param);
  return k < sizeof(kNames) / sizeof(kNames[0]) ? kNames[k] : test::case_name(i.index, "");
}

INSTANTIATE_TEST_SUITE_P(Kinds, UnaryTest,
                         ::testing::Values(ops::Unary::Gelu, ops::Unary::Silu, ops::Unary::Relu, ops::Unary::Exp,
                                           ops::Unary::Sigmoid),
                         unary_name);

struct BinaryCase {
  Shape a, b;
};

class BinaryTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryTest, AddAndMulMatchReference) {
  ops::Context ctx;
  const BinaryCase& c = GetParam();
  Tensor a = test::random_tensor(c.a, 1, 1.f, "a"), b = test::random_tensor(c.b, 2, 1.f, "b");
  Tensor y = test::output_tensor(c.a);
  ops::add(ctx, a, b, y);
  test::expect_close(y, ref::add(a, b), 1e-6, 1e-6, "add " + shape_str(c.b));
  ops::mul(ctx, a, b, y);
  test::expect_close(y, ref::mul(a, b), 1e-6, 1e-6, "mul " + shape_str(c.b));
}

std::string binary_name(const ::testing::TestParamInfo<BinaryCase>& i) {
  return test::case_name(i.index, test::shape_tag(i.param.a) + "_by_" + test::shape_tag(i.param.b));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BinaryTest,
    ::testing::Values(BinaryCase{{5}, {5}}, BinaryCase{{2, 3, 4}, {2, 3, 4}}, BinaryCase{{2, 37, 64}, {64}},
                      BinaryCase{{2, 6, 5, 7}, {1, 6, 1, 1}}, BinaryCase{{2, 6, 5, 7}, {6, 1, 1}},
                      BinaryCase{{3, 4, 5}, {3, 1, 5}}, BinaryCase{{3, 4, 5}, {1}}, BinaryCase{{3, 4, 5}, {4, 1}},
                      BinaryCase{{2, 1, 3, 1, 4}, {1, 3, 1, 4}}, BinaryCase{{4, 70000}, {70000}},
                      BinaryCase{{70000, 3}, {70000, 1}}),
                         binary_name);

TEST(BinaryInPlaceTest, YAliasesA) {
  ops::Context ctx;
  Tensor a = test::random_tensor({4, 9}, 1), b = test::random_tensor({9}, 2);
  Tensor want = ref::add(a, b);
  ops::add(ctx, a, b, a);
  test::expect_close(a, want, 1e-6, 1e-6);
}

TEST(BinaryErrorTest, NonBroadcastableNamed) {
  ops::Context ctx;
  Tensor a = test::random_tensor({2, 3, 4}, 1, 1.f, "hidden"), b = test::random_tensor({3, 3}, 2, 1.f, "ls_gamma");
  Tensor y = test::output_tensor({2, 3, 4});
  try {
    ops::mul(ctx, a, b, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("ls_gamma"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[3,3]"), std::string::npos) << e.message();
  }
  Tensor big = test::random_tensor({5, 2, 3, 4}, 3, 1.f, "too_big");
  EXPECT_THROW(ops::add(ctx, a, big, y), Error);
}

// The LayerScale residual update: y = x + a ⊙ gamma, against mul then add of the reference, in place and not.
TEST(AddScaledTest, MatchesMulThenAdd) {
  ops::Context ctx;
  Tensor x = test::random_tensor({3, 5, 16}, 1), a = test::random_tensor({3, 5, 16}, 2);
  Tensor g = test::random_tensor({16}, 3);
  const Tensor want = ref::add(x, ref::mul(a, g));
  Tensor y = test::output_tensor({3, 5, 16});
  ops::add_scaled(ctx, x, a, g, y);
  test::expect_close(y, want, 1e-6, 1e-6);
  ops::add_scaled(ctx, x, a, Tensor(), y);  // no gamma: a plain sum
  test::expect_close(y, ref::add(x, a), 1e-6, 1e-6);
  ops::add_scaled(ctx, x, a, g, x);
  test::expect_close(x, want, 1e-6, 1e-6);
}

TEST(AddScaledTest, MismatchesNamed) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 8}, 1, 1.f, "stream"), a = test::random_tensor({2, 7}, 2, 1.f, "branch");
  Tensor g = test::random_tensor({7}, 3, 1.f, "ls1");
  try {
    ops::add_scaled(ctx, x, a, Tensor(), x);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("branch"), std::string::npos) << e.message();
  }
  Tensor a2 = test::random_tensor({2, 8}, 4, 1.f, "branch");
  try {
    ops::add_scaled(ctx, x, a2, g, x);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("ls1"), std::string::npos) << e.message();
  }
}

// A ViT's input tokens: each image's leading rows copied from lead, then table + its patch rows, element by element;
// without leading rows the same sums at row 0.
TEST(EmbedTokensTest, LeadRowsThenTablePlusPatches) {
  ops::Context ctx;
  const int64_t b = 3, l = 2, p = 5, e = 7;
  Tensor lead = test::random_tensor({l, e}, 1, 1.f, "lead"), table = test::random_tensor({p, e}, 2, 1.f, "table");
  Tensor patches = test::random_tensor({b, p, e}, 3, 1.f, "patches");
  Tensor y = test::output_tensor({b, l + p, e});
  ops::embed_tokens(ctx, lead, table, patches, y);
  Tensor y0 = test::output_tensor({b, p, e});
  ops::embed_tokens(ctx, Tensor(), table, patches, y0);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t c = 0; c < e; ++c) {
      for (int64_t r = 0; r < l; ++r)
        EXPECT_EQ(y.data<float>()[(i * (l + p) + r) * e + c], lead.data<float>()[r * e + c]) << i << "," << r;
      for (int64_t r = 0; r < p; ++r) {
        const float want = table.data<float>()[r * e + c] + patches.data<float>()[(i * p + r) * e + c];
        EXPECT_EQ(y.data<float>()[(i * (l + p) + l + r) * e + c], want) << i << "," << r << "," << c;
        EXPECT_EQ(y0.data<float>()[(i * p + r) * e + c], want) << i << "," << r << "," << c;
      }
    }
}

// A table or tokens of the wrong shape, and tokens aliasing the patches, are InvalidArgument naming the tensor.
TEST(EmbedTokensTest, MismatchesNamed) {
  ops::Context ctx;
  Tensor lead = test::random_tensor({1, 8}, 1, 1.f, "cls_row"), patches = test::random_tensor({2, 4, 8}, 2, 1.f, "p");
  Tensor good_table = test::random_tensor({4, 8}, 3, 1.f, "table");
  Tensor bad_table = test::random_tensor({5, 8}, 4, 1.f, "short_table");
  Tensor y = test::output_tensor({2, 5, 8}, "tokens"), bad_y = test::output_tensor({2, 4, 8}, "few_tokens");
  Tensor bad_lead = test::random_tensor({1, 7}, 5, 1.f, "narrow_lead");
  const auto expect_named = [&](const std::function<void()>& call, const char* name) {
    try {
      call();
      ADD_FAILURE() << "no error naming " << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find(name), std::string::npos) << e.message();
    }
  };
  expect_named([&] { ops::embed_tokens(ctx, lead, bad_table, patches, y); }, "short_table");
  expect_named([&] { ops::embed_tokens(ctx, lead, good_table, patches, bad_y); }, "few_tokens");
  expect_named([&] { ops::embed_tokens(ctx, bad_lead, good_table, patches, y); }, "narrow_lead");
  Tensor same = patches.reshape({2, 4, 8});
  expect_named([&] { ops::embed_tokens(ctx, Tensor(), good_table, patches, same); }, "tokens");
}

}  // namespace
}  // namespace dacpp
