// Helpers of the CUDA-vs-CPU tests of the neural-network ops (attention, conv, rope): a CUDA context (or a skip when
// the machine has no GPU), inputs uploaded in the tested dtype with the host copy replaced by the rounded values
// (so the CPU reference sees exactly what the kernel sees), and device results read back as host f32.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/cuda/cuda_ops.h"
#include "core/error.h"
#include "ops/context.h"
#include "ops/op_test_util.h"

namespace dacpp::nntest {

// Relative-L2 tolerance of a dtype against the f32 CPU reference.
inline double tolerance(DType dt) { return dt == DType::F32 ? 1e-5 : 1e-2; }

inline const char* tag(DType dt) { return dt == DType::F32 ? "f32" : dt == DType::BF16 ? "bf16" : "f16"; }

class CudaOpTest {
 protected:
  // Creates the context or marks the test skipped (call from SetUp, then `if (IsSkipped()) return;`).
  void open_context() {
    try {
      ctx_ = std::make_unique<ops::Context>(Device::cuda(0), 4);
    } catch (const Error& e) {
      GTEST_SKIP() << "no usable CUDA device: " << e.what();
    }
  }

  ops::Context& ctx() { return *ctx_; }

  // Device copy of `host` (f32) in dtype dt; `host` is replaced by the rounded values.
  Tensor to_device(Tensor& host, DType dt) {
    Tensor dev = cuda::upload(ctx_->cuda(), host, dt);
    host = to_host(dev);
    return dev;
  }

  // A device tensor filled with NaN in dtype dt: outputs the op leaves unwritten fail the comparison.
  Tensor nan_output(const Shape& shape, DType dt, const std::string& name = "y") {
    return cuda::upload(ctx_->cuda(), test::output_tensor(shape, name), dt);
  }

  // A host f32 copy of a device tensor of any activation dtype (synchronizes).
  Tensor to_host(const Tensor& dev) {
    Tensor f32 = dev;
    if (dev.dtype() != DType::F32) {
      f32 = cuda::empty(ctx_->cuda(), dev.shape(), DType::F32, "readback");
      cuda::cast(ctx_->cuda(), dev, f32);
    }
    Tensor host = Tensor::empty(dev.shape(), DType::F32, dev.name());
    cuda::copy(ctx_->cuda(), f32, host);
    cuda::synchronize(ctx_->cuda(), "test readback");
    return host;
  }

  // Relative L2 of got (device) against want (host f32) within the dtype's tolerance; NaN fails.
  void expect_close(const Tensor& got_dev, const Tensor& want, DType dt, const std::string& what) {
    const Tensor got = to_host(got_dev);
    ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape())) << what;
    const test::Diff d = test::diff(got, want);
    EXPECT_LE(d.rel_l2, tolerance(dt)) << what << " (" << tag(dt) << ") max_abs=" << d.max_abs;
  }

  std::unique_ptr<ops::Context> ctx_;
};

}  // namespace dacpp::nntest
