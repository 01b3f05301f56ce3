#include "core/tensor.h"

#include <gtest/gtest.h>

#include "core/fault.h"

namespace dacpp {
namespace {

TEST(Tensor, EmptyHasShapeAndAlignment) {
  Tensor t = Tensor::empty({2, 3, 5}, DType::F32, "x");
  EXPECT_EQ(t.numel(), 30);
  EXPECT_EQ(t.nbytes(), 120u);
  EXPECT_EQ(t.dim(-1), 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  EXPECT_EQ(t.name(), "x");
}

TEST(Tensor, ReshapeSharesStorageAndChecksNumel) {
  Tensor t = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = t.reshape({3, 2});
  EXPECT_EQ(r.data<float>(), t.data<float>());
  EXPECT_THROW(t.reshape({4, 2}), Error);
}

TEST(Tensor, Slice0ViewsRows) {
  Tensor t = Tensor::from_vector({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor s = t.slice0(1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(s.data<float>()[0], 3.f);
  EXPECT_THROW(t.slice0(2, 4), Error);
}

TEST(Tensor, DeviceTensorRefusesHostAccessNamingIt) {
  float fake = 0;
  Tensor t = Tensor::view(&fake, {1}, DType::F32, Device::cuda(0), nullptr, "vit.norm.weight");
  try {
    (void)t.data<float>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Backend);
    EXPECT_NE(std::string(e.what()).find("vit.norm.weight"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos);
  }
}

TEST(Tensor, DtypeMismatchIsAnError) {
  Tensor t = Tensor::empty({4}, DType::I32, "ids");
  EXPECT_THROW((void)t.data<float>(), Error);
  EXPECT_NO_THROW((void)t.data<int32_t>());
}

TEST(Tensor, BlockTypesNeedWholeBlocks) {
  EXPECT_NO_THROW(Tensor::empty({2, 32}, DType::Q8_0));
  EXPECT_THROW(Tensor::empty({2, 31}, DType::Q8_0), Error);
  EXPECT_EQ(Tensor::empty({1, 256}, DType::Q4_K).nbytes(), 144u);
}

TEST(Tensor, NegativeOrOverflowingShapesAreRejected) {
  EXPECT_THROW(Tensor::empty({-1, 2}), Error);
  EXPECT_THROW(Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}), Error);
}

TEST(Tensor, InjectedHostAllocFailureIsOutOfMemory) {
  fault::configure("host.alloc:2");
  EXPECT_NO_THROW(Tensor::empty({8}));
  try {
    Tensor::empty({8}, DType::F32, "activations");
    fault::configure("");
    FAIL();
  } catch (const Error& e) {
    fault::configure("");
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("host.alloc"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("activations"), std::string::npos);
  }
  EXPECT_NO_THROW(Tensor::empty({8}));  // the next allocation works again
}

}  // namespace
}  // namespace dacpp
