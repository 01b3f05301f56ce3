#include "ops/permute.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

struct PermuteCase {
  Shape x;
  std::vector<int> perm;
};

class PermuteTest : public ::testing::TestWithParam<PermuteCase> {};

TEST_P(PermuteTest, MatchesReference) {
  ops::Context ctx;
  const PermuteCase& c = GetParam();
  Tensor x = test::random_tensor(c.x, 1, 1.f, "x");
  Shape ys;
  for (int p : c.perm) ys.push_back(c.x[p]);
  Tensor y = test::output_tensor(ys);
  ops::permute(ctx, x, c.perm, y);
  test::expect_close(y, ref::permute(x, c.perm), 0, 0);
}

std::string permute_name(const ::testing::TestParamInfo<PermuteCase>& i) {
  std::string perm;
  for (int p : i.param.perm) perm += std::to_string(p);
  return test::case_name(i.index, test::shape_tag(i.param.x) + "_perm" + perm);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PermuteTest,
    ::testing::Values(PermuteCase{{7}, {0}}, PermuteCase{{3, 5}, {1, 0}}, PermuteCase{{2, 3, 4}, {0, 2, 1}},
                      PermuteCase{{2, 37, 6, 64}, {0, 2, 1, 3}}, PermuteCase{{2, 5, 3, 7}, {0, 2, 3, 1}},
                      PermuteCase{{1, 9, 11, 4}, {0, 3, 1, 2}}, PermuteCase{{2, 1, 3, 1, 5}, {4, 3, 2, 1, 0}},
                      PermuteCase{{2, 3, 2, 3, 2, 3}, {5, 0, 3, 1, 4, 2}}, PermuteCase{{3, 4, 5}, {0, 1, 2}},
                      PermuteCase{{1, 197, 3, 6, 64}, {2, 0, 3, 1, 4}}),
                         permute_name);

TEST(PermuteErrorTest, BadPermAndShape) {
  ops::Context ctx;
  Tensor x = test::random_tensor({2, 3, 4}, 1, 1.f, "qkv");
  Tensor y = test::output_tensor({4, 3, 2}, "qkv_t");
  EXPECT_THROW(ops::permute(ctx, x, {0, 0, 1}, y), Error);
  EXPECT_THROW(ops::permute(ctx, x, {0, 1}, y), Error);
  EXPECT_THROW(ops::permute(ctx, x, {0, 1, 3}, y), Error);
  try {
    ops::permute(ctx, x, {1, 0, 2}, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("qkv_t"), std::string::npos) << e.message();
  }
  Tensor x7 = test::random_tensor({1, 1, 1, 1, 1, 1, 2}, 1);
  Tensor y7 = test::output_tensor({1, 1, 1, 1, 1, 1, 2});
  EXPECT_THROW(ops::permute(ctx, x7, {0, 1, 2, 3, 4, 5, 6}, y7), Error);
}

}  // namespace
}  // namespace dacpp
