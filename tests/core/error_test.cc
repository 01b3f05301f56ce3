#include "core/error.h"

#include <gtest/gtest.h>

namespace dacpp {
namespace {

TEST(Error, CarriesCodeAndMessage) {
  try {
    DACPP_THROW(ErrorCode::InvalidModel, "model '", "m.gguf", "': key ", 42, " missing");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_STREQ(e.what(), "model 'm.gguf': key 42 missing");
  }
}

TEST(Error, CheckThrowsOnlyWhenFalse) {
  EXPECT_NO_THROW(DACPP_CHECK(1 + 1 == 2, ErrorCode::Internal, "never"));
  EXPECT_THROW(DACPP_CHECK(1 + 1 == 3, ErrorCode::InvalidArgument, "bad"), Error);
}

TEST(Error, AssertIsInternalAndNamesTheCondition) {
  try {
    DACPP_ASSERT(2 < 1, "extra");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal);
    EXPECT_NE(std::string(e.what()).find("2 < 1"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("error_test.cc"), std::string::npos);
  }
}

TEST(Error, ExitStatusMapping) {
  EXPECT_EQ(error_code_exit_status(ErrorCode::InvalidArgument), 2);
  EXPECT_EQ(error_code_exit_status(ErrorCode::InvalidModel), 3);
  EXPECT_EQ(error_code_exit_status(ErrorCode::Unsupported), 4);
  EXPECT_EQ(error_code_exit_status(ErrorCode::Backend), 5);
  EXPECT_EQ(error_code_exit_status(ErrorCode::OutOfMemory), 6);
  EXPECT_EQ(error_code_exit_status(ErrorCode::Internal), 1);
  EXPECT_STREQ(error_code_tag(ErrorCode::OutOfMemory), "E_OOM");
  EXPECT_STREQ(error_code_name(ErrorCode::NotFound), "NotFound");
}

}  // namespace
}  // namespace dacpp
