// ops::linear, layer_norm, unary, add / mul and permute on CUDA against the CPU backend on the same (dtype-rounded)
// inputs, in f32 (tol 1e-5 rel L2) and bf16 / f16 (tol 1e-2).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/fault.h"
#include "gpu/nn_cuda_test_util.h"
#include "ops/elementwise.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/permute.h"

namespace dacpp {
namespace {

const DType kDTypes[] = {DType::F32, DType::BF16, DType::F16};

class CoreOpsCudaTest : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }
  ops::Context cpu_{Device::cpu(), 2};
};

struct LinearCase {
  Shape x;
  int64_t n;
  bool bias;
  ops::Activation act;
};

// A case's operands: random host x, w (scale w_scale) and bias (seeds seed, seed + 1, seed + 2), their device copies
// in dt (the host ones rounded to what the device sees), the output shape and the CPU's result.
struct LinearOperands {
  Tensor x, w, b, xd, wd, bd, want;
  Shape ys;
};

class LinearCudaTest : public CoreOpsCudaTest {
 protected:
  LinearOperands operands(const LinearCase& c, DType dt, uint32_t seed, float w_scale) {
    LinearOperands o;
    o.x = test::random_tensor(c.x, seed, 1.f, "x");
    o.w = test::random_tensor({c.n, c.x.back()}, seed + 1, w_scale, "w");
    o.b = c.bias ? test::random_tensor({c.n}, seed + 2, 0.5f, "bias") : Tensor();
    o.xd = to_device(o.x, dt);
    o.wd = to_device(o.w, dt);
    o.bd = c.bias ? to_device(o.b, DType::F32) : Tensor();
    o.ys = c.x;
    o.ys.back() = c.n;
    o.want = test::output_tensor(o.ys);
    ops::linear(cpu_, o.x, o.w, o.b, o.want, c.act);
    return o;
  }
};

TEST_F(LinearCudaTest, LinearMatchesCpu) {
  if (IsSkipped()) return;
  const LinearCase cases[] = {
      {{1, 8}, 4, true, ops::Activation::None},        {{37, 64}, 48, true, ops::Activation::Gelu},
      {{2, 37, 64}, 48, false, ops::Activation::Relu}, {{130, 384}, 1152, true, ops::Activation::None},
      {{5, 7}, 3, true, ops::Activation::Relu},        {{65, 96}, 40, false, ops::Activation::Gelu},
      {{3, 256}, 1024, true, ops::Activation::Relu},
  };
  for (const LinearCase& c : cases) {
    for (DType dt : kDTypes) {
      const std::string what = str_cat("linear x", shape_str(c.x), " n", c.n, " bias", c.bias, " act",
                                        static_cast<int>(c.act), " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      const LinearOperands o = operands(c, dt, 1, 0.2f);
      Tensor y = nan_output(o.ys, dt);
      ops::linear(ctx(), o.xd, o.wd, o.bd, y, c.act);
      expect_close(y, o.want, dt, what);
    }
  }
}

// linear_add on CUDA (the GEMM accumulating into an f32 stream: beta 1, an f32 D, an f32 bias) against the CPU's
// stream + linear: bf16 / f16 / f32 operands, with and without bias, a bias view that is not 16-byte aligned (added
// by a pass after the GEMM), DA2-L's proj / fc2 shapes (tuned on the caller's stream, which must come back intact),
// and a second call reusing the plan.
TEST_F(LinearCudaTest, LinearAddMatchesCpu) {
  if (IsSkipped()) return;
  const LinearCase cases[] = {
      {{1, 8}, 4, true, ops::Activation::None},          {{37, 64}, 48, true, ops::Activation::None},
      {{2, 37, 64}, 48, false, ops::Activation::None},   {{1370, 1024}, 1024, true, ops::Activation::None},
      {{1370, 4096}, 1024, true, ops::Activation::None},
  };
  for (const LinearCase& c : cases) {
    for (DType dt : kDTypes) {
      const std::string what =
          str_cat("linear_add x", shape_str(c.x), " n", c.n, " bias", c.bias, " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      const LinearOperands o = operands(c, dt, 31, 0.05f);
      Tensor stream = test::random_tensor(o.ys, 34, 3.f, "stream");
      Tensor want = stream.clone(), want2 = stream.clone();
      for (int64_t i = 0; i < want.numel(); ++i) {
        want.data<float>()[i] += o.want.data<float>()[i];
        want2.data<float>()[i] += 2 * o.want.data<float>()[i];
      }
      Tensor sd = to_device(stream, DType::F32);
      ops::linear_add(ctx(), o.xd, ops::LinearWeight(o.wd), o.bd, sd);
      expect_close(sd, want, dt, what);
      ops::linear_add(ctx(), o.xd, ops::LinearWeight(o.wd), o.bd, sd);
      expect_close(sd, want2, dt, what + ", second call");
    }
  }
  // An f32 bias at an odd offset in a larger buffer: cuBLASLt cannot read it, a pass adds it.
  for (DType dt : kDTypes) {
    const LinearCase c{{9, 32}, 20, false, ops::Activation::None};
    const LinearOperands o = operands(c, dt, 35, 0.2f);
    Tensor bias = test::random_tensor({21}, 38, 0.5f, "bias buffer");
    Tensor bd = to_device(bias, DType::F32);
    const Tensor b_view = Tensor::view(static_cast<float*>(bd.raw()) + 1, {20}, DType::F32, bd.device(), nullptr,
                                       "bias (unaligned view)");
    Tensor b_host = Tensor::empty({20}, DType::F32, "bias");
    for (int i = 0; i < 20; ++i) b_host.data<float>()[i] = bias.data<float>()[i + 1];
    Tensor want = test::random_tensor(o.ys, 39, 1.f, "stream");
    Tensor sd = to_device(want, DType::F32);
    ops::linear_add(cpu_, o.x, ops::LinearWeight(o.w), b_host, want);
    ops::linear_add(ctx(), o.xd, ops::LinearWeight(o.wd), b_view, sd);
    expect_close(sd, want, dt, str_cat("linear_add, unaligned bias, ", nntest::tag(dt)));
  }
}

// Tuning an accumulating GEMM times its candidates on the caller's D after copying D aside (each timed run adds to
// it). When that copy cannot be allocated (injected device.alloc: the copy is the call's first device allocation)
// the call is an OutOfMemory error naming the copy, D still holds what it held (no candidate ran), and nothing is
// left half-made: the same call afterwards tunes the shape and adds the product once.
TEST_F(LinearCudaTest, AccumulatedDCopyOutOfMemoryIsTyped) {
  if (IsSkipped()) return;
  const LinearCase c{{299, 160}, 136, true, ops::Activation::None};  // a shape no other test tunes
  const LinearOperands o = operands(c, DType::BF16, 45, 0.05f);
  Tensor stream = test::random_tensor(o.ys, 48, 3.f, "stream");
  Tensor want = stream.clone();
  for (int64_t i = 0; i < want.numel(); ++i) want.data<float>()[i] += o.want.data<float>()[i];
  Tensor sd = to_device(stream, DType::F32);
  fault::configure("device.alloc");
  try {
    ops::linear_add(ctx(), o.xd, ops::LinearWeight(o.wd), o.bd, sd);
    ADD_FAILURE() << "linear_add tuned without its copy of D";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.message();
    EXPECT_NE(e.message().find("a copy of the accumulated D"), std::string::npos) << e.message();
  }
  fault::configure("");
  expect_close(sd, stream, DType::F32, "D after the failed call");
  ops::linear_add(ctx(), o.xd, ops::LinearWeight(o.wd), o.bd, sd);
  expect_close(sd, want, DType::BF16, "linear_add after the failed call");
}

// A K whose rows are not 16 bytes apart (a 3×14×14 patch embedding's 588; 295 in f32, odd) over enough rows
// takes the padded operands (x's rows copied to a multiple of 16 bytes, w's derived once): with the model's weight,
// a second call reusing the derived rows, and a borrowed weight (no owned storage: its rows behind x's in scratch).
TEST_F(LinearCudaTest, PaddedRowsMatchCpu) {
  if (IsSkipped()) return;
  const LinearCase cases[] = {
      {{1369, 588}, 384, true, ops::Activation::None},
      {{2, 300, 588}, 96, false, ops::Activation::Gelu},
      {{700, 295}, 130, true, ops::Activation::Relu},
  };
  for (const LinearCase& c : cases) {
    for (DType dt : kDTypes) {
      const std::string what = str_cat("padded linear x", shape_str(c.x), " n", c.n, " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      LinearOperands o = operands(c, dt, 21, 0.05f);
      for (int call = 0; call < 2; ++call) {
        Tensor y = nan_output(o.ys, dt);
        ops::linear(ctx(), o.xd, o.wd, o.bd, y, c.act);
        expect_close(y, o.want, dt, str_cat(what, " call ", call));
      }
      const Tensor w_view =
          Tensor::view(o.wd.raw(), o.wd.shape(), o.wd.dtype(), o.wd.device(), nullptr, "w (borrowed)");
      Tensor y = nan_output(o.ys, dt);
      ops::linear(ctx(), o.xd, w_view, o.bd, y, c.act);
      expect_close(y, o.want, dt, what + ", borrowed weight");
    }
  }
}

// Every cuBLASLt candidate the tuning may choose gives the linear's result (not only the one this process's tuning
// happened to pick): shapes with few output tiles and a long K, with the fused bias / GELU / ReLU epilogues.
TEST_F(LinearCudaTest, EveryGemmCandidateMatchesCpu) {
  if (IsSkipped()) return;
  const LinearCase cases[] = {
      {{1369, 2304}, 256, true, ops::Activation::None},  // a DPT head 3×3 conv's im2col GEMM, 37² (K = 9·256)
      {{1370, 4096}, 1024, true, ops::Activation::None},  // ViT-L fc2
      {{361, 1024}, 512, true, ops::Activation::Gelu},
      {{200, 3072}, 96, false, ops::Activation::Relu},
  };
  for (const LinearCase& c : cases) {
    for (DType dt : {DType::BF16, DType::F16, DType::F32}) {
      const LinearOperands o = operands(c, dt, 11, 0.05f);
      const auto act = static_cast<cuda::Epilogue>(c.act);
      Tensor probe = nan_output(o.ys, dt);
      const std::vector<std::string> labels =
          cuda::linear_gemm_candidates(ctx().cuda(), o.xd, o.wd, o.bd, probe, act);
      ASSERT_FALSE(labels.empty());
      for (size_t i = 0; i < labels.size(); ++i) {
        const std::string what = str_cat("linear x", shape_str(c.x), " n", c.n, " ", nntest::tag(dt), " ", labels[i]);
        SCOPED_TRACE(what);
        Tensor y = nan_output(o.ys, dt);
        cuda::linear_with_gemm_candidate(ctx().cuda(), o.xd, o.wd, o.bd, y, act, i);
        expect_close(y, o.want, dt, what);
      }
      Tensor y = nan_output(o.ys, dt);
      EXPECT_THROW(cuda::linear_with_gemm_candidate(ctx().cuda(), o.xd, o.wd, o.bd, y, act, labels.size()), Error);
    }
  }
}

// An f32 bias that is not 16-byte aligned (a view into a packed buffer) takes the unfused bias path.
TEST_F(CoreOpsCudaTest, LinearWithMisalignedBias) {
  if (IsSkipped()) return;
  for (ops::Activation act : {ops::Activation::None, ops::Activation::Relu, ops::Activation::Gelu}) {
    Tensor x = test::random_tensor({9, 32}, 4, 1.f, "x"), w = test::random_tensor({20, 32}, 5, 0.2f, "w");
    Tensor packed = test::random_tensor({21}, 6, 0.5f, "packed");
    Tensor b = packed.slice0(1, 21);
    Tensor xd = to_device(x, DType::F32), wd = to_device(w, DType::F32), pd = to_device(packed, DType::F32);
    Tensor bd = pd.slice0(1, 21);
    Tensor y = nan_output({9, 20}, DType::F32), want = test::output_tensor({9, 20});
    ops::linear(ctx(), xd, wd, bd, y, act);
    ops::linear(cpu_, x, w, b, want, act);
    expect_close(y, want, DType::F32, str_cat("misaligned bias act ", static_cast<int>(act)));
  }
}

TEST_F(CoreOpsCudaTest, LayerNormMatchesCpu) {
  if (IsSkipped()) return;
  const Shape shapes[] = {{4, 384}, {3, 37, 1024}, {5, 30}, {7, 1536}, {2, 3, 8}, {1, 1}};
  for (const Shape& s : shapes) {
    for (DType dt : kDTypes) {
      const std::string what = str_cat("layer_norm ", shape_str(s), " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      Tensor x = test::random_tensor(s, 7, 2.f, "x");
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] += 0.75f;  // a non-zero mean
      Tensor g = test::random_tensor({s.back()}, 8, 1.f, "gamma"), b = test::random_tensor({s.back()}, 9, 1.f, "beta");
      Tensor xd = to_device(x, dt), gd = to_device(g, DType::F32), bd = to_device(b, DType::F32);
      Tensor y = nan_output(s, dt), want = test::output_tensor(s);
      ops::layer_norm(ctx(), xd, gd, bd, 1e-6f, y);
      ops::layer_norm(cpu_, x, g, b, 1e-6f, want);
      expect_close(y, want, dt, what);
      ops::layer_norm(ctx(), xd, gd, bd, 1e-6f, xd);  // in place
      expect_close(xd, want, dt, what + " in place");
    }
  }
}

// The f32 residual stream normalised into bf16 / f16 activations (y in another dtype than x).
TEST_F(CoreOpsCudaTest, LayerNormF32IntoHalfMatchesCpu) {
  if (IsSkipped()) return;
  for (const Shape& s : {Shape{3, 37, 1024}, Shape{5, 30}, Shape{2, 384}}) {
    for (DType dt : {DType::BF16, DType::F16}) {
      const std::string what = str_cat("layer_norm f32 -> ", nntest::tag(dt), " ", shape_str(s));
      SCOPED_TRACE(what);
      Tensor x = test::random_tensor(s, 17, 2.f, "x");
      Tensor g = test::random_tensor({s.back()}, 18, 1.f, "gamma"), b = test::random_tensor({s.back()}, 19, 1.f, "beta");
      Tensor xd = to_device(x, DType::F32), gd = to_device(g, DType::F32), bd = to_device(b, DType::F32);
      Tensor y = nan_output(s, dt), want = test::output_tensor(s);
      ops::layer_norm(ctx(), xd, gd, bd, 1e-6f, y);
      ops::layer_norm(cpu_, x, g, b, 1e-6f, want);
      expect_close(y, want, dt, what);
    }
  }
}

// layer_norm_drop_leading (a ViT's patch tokens without the class token, one launch for the batch): f32 into every
// dtype, and same-dtype, against the CPU's per-image norms.
TEST_F(CoreOpsCudaTest, LayerNormDropLeadingMatchesCpu) {
  if (IsSkipped()) return;
  for (const Shape& s : {Shape{3, 38, 1024}, Shape{2, 7, 30}, Shape{4, 2, 384}}) {
    for (int64_t skip : {0, 1, 2}) {
      for (DType dt : kDTypes) {
        for (bool f32_in : {true, false}) {
          const std::string what = str_cat("layer_norm_drop_leading ", shape_str(s), " skip ", skip, " ",
                                           f32_in ? "f32 -> " : "", nntest::tag(dt));
          SCOPED_TRACE(what);
          const Shape ys{s[0], s[1] - skip, s[2]};
          Tensor x = test::random_tensor(s, 27, 2.f, "x");
          Tensor g = test::random_tensor({s[2]}, 28, 1.f, "gamma"), b = test::random_tensor({s[2]}, 29, 1.f, "beta");
          Tensor xd = to_device(x, f32_in ? DType::F32 : dt), gd = to_device(g, DType::F32);
          Tensor bd = to_device(b, DType::F32);
          Tensor y = nan_output(ys, dt), want = test::output_tensor(ys);
          ops::layer_norm_drop_leading(ctx(), xd, skip, gd, bd, 1e-6f, y);
          ops::layer_norm_drop_leading(cpu_, x, skip, g, b, 1e-6f, want);  // x: the uploaded values
          expect_close(y, want, dt, what);
        }
      }
    }
  }
}

// x += a ⊙ gamma: same dtype, and a bf16 / f16 branch into an f32 stream (the ViT residual update); in place and not.
TEST_F(CoreOpsCudaTest, AddScaledMatchesCpu) {
  if (IsSkipped()) return;
  struct Pair {
    DType x, a;
  };
  const Pair pairs[] = {{DType::F32, DType::F32}, {DType::F32, DType::BF16}, {DType::F32, DType::F16},
                        {DType::BF16, DType::BF16}, {DType::F16, DType::F16}};
  // [2, 37, 64]: the 8-wide vector kernel; [3, 5, 7]: the scalar one.
  for (const Shape& s : {Shape{2, 37, 64}, Shape{3, 5, 7}}) {
    for (const Pair& pr : pairs) {
      for (bool with_gamma : {true, false}) {
        const std::string what = str_cat("add_scaled ", shape_str(s), " x ", nntest::tag(pr.x), " a ",
                                         nntest::tag(pr.a), " gamma ", with_gamma);
        SCOPED_TRACE(what);
        Tensor x = test::random_tensor(s, 21, 1.f, "x"), a = test::random_tensor(s, 22, 1.f, "a");
        Tensor g = with_gamma ? test::random_tensor({s.back()}, 23, 0.5f, "gamma") : Tensor();
        Tensor xd = to_device(x, pr.x), ad = to_device(a, pr.a);
        Tensor gd = with_gamma ? to_device(g, DType::F32) : Tensor();
        Tensor want = test::output_tensor(s);
        ops::add_scaled(cpu_, x, a, g, want);
        Tensor y = nan_output(s, pr.x);
        ops::add_scaled(ctx(), xd, ad, gd, y);
        expect_close(y, want, pr.x, what);
        ops::add_scaled(ctx(), xd, ad, gd, xd);  // in place on x
        expect_close(xd, want, pr.x, what + " in place");
      }
    }
  }
  // Rejected: a of another shape; gamma of the wrong length.
  const Shape s{2, 37, 64};
  Tensor x = test::random_tensor(s, 24, 1.f, "x");
  Tensor xd = to_device(x, DType::F32);
  Tensor bad = nan_output({2, 37, 63}, DType::BF16, "a_bad");
  EXPECT_THROW(ops::add_scaled(ctx(), xd, bad, Tensor(), xd), Error);
  Tensor a = test::random_tensor(s, 25, 1.f, "a"), g = test::random_tensor({63}, 26, 1.f, "gamma_bad");
  Tensor ad = to_device(a, DType::BF16), gd = to_device(g, DType::F32);
  EXPECT_THROW(ops::add_scaled(ctx(), xd, ad, gd, xd), Error);
}

// The fused residual update + norm (a pre-norm block's x += ls ⊙ attn(…); h = norm2(x)) against the CPU's
// add_scaled then layer_norm: the updated stream x and the normalised y, bf16 / f16 / f32 branches, with and
// without LayerScale; rows of 384 / 768 / 1024 / 1536: the register-resident kernel, [2, 640]: the 4-wide loop,
// [5, 30] with an odd row length: the scalar one.
TEST_F(CoreOpsCudaTest, AddScaledLayerNormMatchesCpu) {
  if (IsSkipped()) return;
  for (const Shape& s : {Shape{3, 37, 1024}, Shape{5, 30}, Shape{4, 7, 33}, Shape{2, 9, 384}, Shape{11, 768},
                         Shape{3, 1536}, Shape{2, 640}}) {
    for (DType dt : {DType::BF16, DType::F16, DType::F32}) {
      for (bool with_ls : {true, false}) {
        const std::string what =
            str_cat("add_scaled_layer_norm ", shape_str(s), " ", nntest::tag(dt), " ls ", with_ls);
        SCOPED_TRACE(what);
        Tensor x = test::random_tensor(s, 41, 2.f, "x"), a = test::random_tensor(s, 42, 1.f, "a");
        Tensor ls = with_ls ? test::random_tensor({s.back()}, 43, 0.5f, "ls") : Tensor();
        Tensor g = test::random_tensor({s.back()}, 44, 1.f, "gamma");
        Tensor b = test::random_tensor({s.back()}, 45, 1.f, "beta");
        Tensor xd = to_device(x, DType::F32), ad = to_device(a, dt), gd = to_device(g, DType::F32),
               bd = to_device(b, DType::F32);
        Tensor lsd = with_ls ? to_device(ls, DType::F32) : Tensor();
        // The reference on the CPU from the same (dtype-rounded: to_device rounds the host copy) branch.
        Tensor x_want = test::output_tensor(s), y_want = test::output_tensor(s);
        ops::add_scaled(cpu_, x, a, ls, x_want);
        ops::layer_norm(cpu_, x_want, g, b, 1e-6f, y_want);
        Tensor y = nan_output(s, dt);
        ops::add_scaled_layer_norm(ctx(), xd, ad, lsd, gd, bd, 1e-6f, y);
        expect_close(xd, x_want, DType::F32, what + " stream");
        expect_close(y, y_want, dt, what + " norm");
      }
    }
  }
  // y may not alias the stream.
  Tensor x = test::random_tensor({2, 64}, 46, 1.f, "x"), a = test::random_tensor({2, 64}, 47, 1.f, "a");
  Tensor g = test::random_tensor({64}, 48, 1.f, "gamma");
  Tensor xd = to_device(x, DType::F32), ad = to_device(a, DType::F32), gd = to_device(g, DType::F32);
  EXPECT_THROW(ops::add_scaled_layer_norm(ctx(), xd, ad, Tensor(), gd, gd, 1e-6f, xd), Error);
}

// The norms of a stream a GEMM has already added to (ops::add_scaled_layer_norm without a branch): y = norm(x) and
// the collected norm in one pass, x unchanged, against the CPU's layer_norm and layer_norm_drop_leading; rows of
// 1024 / 384 take the register-resident kernel (no a read, no x store), 64 the row kernels.
TEST_F(CoreOpsCudaTest, StreamNormsWithoutABranchMatchCpu) {
  if (IsSkipped()) return;
  for (const Shape& s : {Shape{2, 37, 1024}, Shape{1, 19, 384}, Shape{2, 9, 64}}) {
    for (DType dt : {DType::BF16, DType::F16, DType::F32}) {
      for (bool collect : {false, true}) {
        const std::string what =
            str_cat("stream norms ", shape_str(s), " ", nntest::tag(dt), collect ? " with collected norm" : "");
        SCOPED_TRACE(what);
        const int64_t c = s.back(), skip = 1;
        const Shape kept{s[0], s[1] - skip, c};
        Tensor x = test::random_tensor(s, 61, 2.f, "x");
        Tensor g = test::random_tensor({c}, 62, 1.f, "gamma"), b = test::random_tensor({c}, 63, 1.f, "beta");
        Tensor g2 = test::random_tensor({c}, 64, 1.f, "gamma2"), b2 = test::random_tensor({c}, 65, 1.f, "beta2");
        Tensor xd = to_device(x, DType::F32), gd = to_device(g, DType::F32), bd = to_device(b, DType::F32);
        Tensor g2d = to_device(g2, DType::F32), b2d = to_device(b2, DType::F32);
        Tensor y_want = test::output_tensor(s), f_want = test::output_tensor(kept);
        ops::layer_norm(cpu_, x, g, b, 1e-6f, y_want);
        ops::layer_norm_drop_leading(cpu_, x, skip, g2, b2, 1e-5f, f_want);
        Tensor y = nan_output(s, dt);
        const ops::DropLeadingNorm also{g2d, b2d, 1e-5f, skip, nan_output(kept, dt)};
        ops::add_scaled_layer_norm(ctx(), xd, Tensor(), Tensor(), gd, bd, 1e-6f, y, collect ? &also : nullptr);
        expect_close(xd, x, DType::F32, what + " stream unchanged");
        expect_close(y, y_want, dt, what + " norm");
        if (collect) expect_close(also.y, f_want, dt, what + " collected norm");
      }
    }
  }
}

// The fused update with a collected layer's output norm beside it (ops::DropLeadingNorm: norm(x)[:, skip:], its
// own gamma, beta and eps) against the CPU's add_scaled, layer_norm and layer_norm_drop_leading: with the next
// block's norm (y) and without it (the last block), skip 1 and 5 over a batch of 2; rows of 1024 / 384 / 768 take
// the register-resident kernel, 64 the row kernels and a separate drop-leading launch.
TEST_F(CoreOpsCudaTest, AddScaledLayerNormCollectMatchesCpu) {
  if (IsSkipped()) return;
  for (const Shape& s : {Shape{2, 37, 1024}, Shape{2, 19, 384}, Shape{1, 11, 768}, Shape{2, 9, 64}}) {
    for (DType dt : {DType::BF16, DType::F16, DType::F32}) {
      for (int64_t skip : {1, 5}) {
        for (bool with_y : {true, false}) {
          const std::string what = str_cat("add_scaled_layer_norm collect ", shape_str(s), " ", nntest::tag(dt),
                                           " skip ", skip, " y ", with_y);
          SCOPED_TRACE(what);
          const int64_t c = s.back();
          const Shape kept{s[0], s[1] - skip, c};
          Tensor x = test::random_tensor(s, 51, 2.f, "x"), a = test::random_tensor(s, 52, 1.f, "a");
          Tensor ls = test::random_tensor({c}, 53, 0.5f, "ls");
          Tensor g = test::random_tensor({c}, 54, 1.f, "gamma"), b = test::random_tensor({c}, 55, 1.f, "beta");
          Tensor g2 = test::random_tensor({c}, 56, 1.f, "gamma2"), b2 = test::random_tensor({c}, 57, 1.f, "beta2");
          Tensor xd = to_device(x, DType::F32), ad = to_device(a, dt), lsd = to_device(ls, DType::F32);
          Tensor gd = to_device(g, DType::F32), bd = to_device(b, DType::F32);
          Tensor g2d = to_device(g2, DType::F32), b2d = to_device(b2, DType::F32);
          Tensor x_want = test::output_tensor(s), y_want = test::output_tensor(s), f_want = test::output_tensor(kept);
          ops::add_scaled(cpu_, x, a, ls, x_want);
          ops::layer_norm(cpu_, x_want, g, b, 1e-6f, y_want);
          ops::layer_norm_drop_leading(cpu_, x_want, skip, g2, b2, 1e-5f, f_want);
          Tensor y = with_y ? nan_output(s, dt) : Tensor();
          const ops::DropLeadingNorm also{g2d, b2d, 1e-5f, skip, nan_output(kept, dt)};
          ops::add_scaled_layer_norm(ctx(), xd, ad, lsd, with_y ? gd : Tensor(), with_y ? bd : Tensor(), 1e-6f, y,
                                     &also);
          expect_close(xd, x_want, DType::F32, what + " stream");
          if (with_y) expect_close(y, y_want, dt, what + " norm");
          expect_close(also.y, f_want, dt, what + " collected norm");
        }
      }
    }
  }
  // Refused: no output at all; a second output of the wrong shape or aliasing y.
  Tensor x = test::random_tensor({1, 5, 64}, 58, 1.f, "x"), a = test::random_tensor({1, 5, 64}, 59, 1.f, "a");
  Tensor g = test::random_tensor({64}, 60, 1.f, "gamma");
  Tensor xd = to_device(x, DType::F32), ad = to_device(a, DType::F32), gd = to_device(g, DType::F32);
  Tensor none, y = nan_output({1, 5, 64}, DType::F32);
  EXPECT_THROW(ops::add_scaled_layer_norm(ctx(), xd, ad, Tensor(), gd, gd, 1e-6f, none), Error);
  const ops::DropLeadingNorm wrong{gd, gd, 1e-6f, 1, nan_output({1, 5, 64}, DType::F32)};
  EXPECT_THROW(ops::add_scaled_layer_norm(ctx(), xd, ad, Tensor(), gd, gd, 1e-6f, y, &wrong), Error);
  const ops::DropLeadingNorm same{gd, gd, 1e-6f, 0, y};
  EXPECT_THROW(ops::add_scaled_layer_norm(ctx(), xd, ad, Tensor(), gd, gd, 1e-6f, y, &same), Error);
}

TEST_F(CoreOpsCudaTest, UnaryMatchesCpu) {
  if (IsSkipped()) return;
  const ops::Unary kinds[] = {ops::Unary::Gelu, ops::Unary::Silu, ops::Unary::Relu, ops::Unary::Exp,
                              ops::Unary::Sigmoid};
  for (const Shape& s : {Shape{3, 1000}, Shape{7, 13}}) {
    for (ops::Unary k : kinds) {
      for (DType dt : kDTypes) {
        const std::string what = str_cat("unary ", static_cast<int>(k), " ", shape_str(s), " ", nntest::tag(dt));
        SCOPED_TRACE(what);
        Tensor x = test::random_tensor(s, 10, 3.f, "x");
        Tensor xd = to_device(x, dt);
        Tensor y = nan_output(s, dt), want = test::output_tensor(s);
        ops::unary(ctx(), k, xd, y);
        ops::unary(cpu_, k, x, want);
        expect_close(y, want, dt, what);
      }
    }
  }
}

TEST_F(CoreOpsCudaTest, BinaryBroadcastMatchesCpu) {
  if (IsSkipped()) return;
  const Shape a_shape{2, 5, 8, 16};
  const Shape b_shapes[] = {{2, 5, 8, 16}, {16}, {1, 16}, {5, 1, 1}, {1}, {2, 1, 8, 1}, {8, 16}, {5, 8, 1}};
  for (const Shape& bs : b_shapes) {
    for (bool add : {true, false}) {
      for (DType dt : kDTypes) {
        const std::string what = str_cat(add ? "add" : "mul", " b", shape_str(bs), " ", nntest::tag(dt));
        SCOPED_TRACE(what);
        Tensor a = test::random_tensor(a_shape, 11, 1.f, "a"), b = test::random_tensor(bs, 12, 1.f, "b");
        Tensor ad = to_device(a, dt), bd = to_device(b, dt);
        Tensor y = nan_output(a_shape, dt), want = test::output_tensor(a_shape);
        if (add) {
          ops::add(ctx(), ad, bd, y);
          ops::add(cpu_, a, b, want);
        } else {
          ops::mul(ctx(), ad, bd, y);
          ops::mul(cpu_, a, b, want);
        }
        expect_close(y, want, dt, what);
        if (add) {
          ops::add(ctx(), ad, bd, ad);  // in place on a
          expect_close(ad, want, dt, what + " in place");
        }
      }
    }
  }
}

// An f32 stream plus a bf16 / f16 operand (the pos-embed table and the patch tokens): its shape (the 8-wide kernel;
// an odd size takes the scalar one) and a row broadcast, in place and not.
TEST_F(CoreOpsCudaTest, MixedAddIntoAnF32StreamMatchesCpu) {
  if (IsSkipped()) return;
  const std::pair<Shape, Shape> shapes[] = {{{37, 64}, {37, 64}}, {{3, 7, 5}, {3, 7, 5}}, {{6, 32}, {32}}};
  for (const auto& [as, bs] : shapes)
    for (DType dt : {DType::BF16, DType::F16}) {
      const std::string what = str_cat("a", shape_str(as), " f32 + b", shape_str(bs), " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      Tensor a = test::random_tensor(as, 13, 1.f, "a"), b = test::random_tensor(bs, 14, 1.f, "b");
      Tensor ad = to_device(a, DType::F32), bd = to_device(b, dt);
      Tensor want = test::output_tensor(as);
      ops::add(cpu_, a, to_host(bd), want);  // b as the device holds it (rounded to dt)
      Tensor y = nan_output(as, DType::F32);
      ops::add(ctx(), ad, bd, y);
      test::expect_close(to_host(y), want, 1e-6, 1e-6, what);
      ops::add(ctx(), ad, bd, ad);
      test::expect_close(to_host(ad), want, 1e-6, 1e-6, what + " in place");
    }
}

// A ViT's input tokens in one pass (ops::embed_tokens): the class row and the f32 table + bf16 / f16 / f32 patch
// rows, for a batch of 3, against the CPU op on the same (rounded) patches. E = 64 takes the 4-wide kernel, E = 6
// the scalar one; no leading rows as well as one and two.
TEST_F(CoreOpsCudaTest, EmbedTokensMatchesCpu) {
  if (IsSkipped()) return;
  for (const int64_t e : {64, 6})
    for (const int64_t l : {1, 0, 2})
      for (DType dt : {DType::BF16, DType::F16, DType::F32}) {
        const int64_t b = 3, p = 37;
        const std::string what = str_cat("embed_tokens E ", e, " L ", l, " ", nntest::tag(dt));
        SCOPED_TRACE(what);
        Tensor lead = l > 0 ? test::random_tensor({l, e}, 31, 1.f, "lead") : Tensor();
        Tensor table = test::random_tensor({p, e}, 32, 1.f, "table");
        Tensor patches = test::random_tensor({b, p, e}, 33, 1.f, "patches");
        Tensor pd = to_device(patches, dt);  // patches now holds the values as the device does (rounded to dt)
        Tensor ld = l > 0 ? to_device(lead, DType::F32) : Tensor(), td = to_device(table, DType::F32);
        Tensor want = test::output_tensor({b, l + p, e});
        ops::embed_tokens(cpu_, lead, table, patches, want);
        Tensor y = nan_output({b, l + p, e}, DType::F32);
        ops::embed_tokens(ctx(), ld, td, pd, y);
        const Tensor got = to_host(y);
        EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.nbytes()), 0) << what;  // one f32 sum per element
      }
  // Off the device: the host table is named.
  Tensor small = test::random_tensor({1, 4, 8}, 34, 1.f, "patches");
  Tensor pd = to_device(small, DType::BF16);
  Tensor y = nan_output({1, 4, 8}, DType::F32);
  try {
    ops::embed_tokens(ctx(), Tensor(), test::random_tensor({4, 8}, 35, 1.f, "host_table"), pd, y);
    ADD_FAILURE() << "a host table was accepted";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::Backend) << err.what();
    EXPECT_NE(std::string(err.what()).find("host_table"), std::string::npos) << err.what();
  }
}

TEST_F(CoreOpsCudaTest, PermuteMatchesCpu) {
  if (IsSkipped()) return;
  struct Case {
    Shape x;
    std::vector<int> perm;
  };
  const Case cases[] = {
      {{2, 6, 4, 8}, {2, 0, 1, 3}},  {{2, 6, 4, 8}, {0, 2, 3, 1}},       {{2, 6, 4, 8}, {3, 2, 1, 0}},
      {{2, 3, 4, 5}, {0, 2, 1, 3}},  {{2, 10, 3, 4, 16}, {2, 0, 3, 1, 4}}, {{3, 7}, {1, 0}},
      {{5}, {0}},                    {{1, 2, 3, 4, 5, 6}, {5, 4, 3, 2, 1, 0}}, {{4, 6, 2}, {1, 0, 2}},
  };
  for (const Case& c : cases) {
    for (DType dt : kDTypes) {
      const std::string what = str_cat("permute ", shape_str(c.x), " ", nntest::tag(dt));
      SCOPED_TRACE(what);
      Shape ys(c.x.size());
      for (size_t i = 0; i < ys.size(); ++i) ys[i] = c.x[c.perm[i]];
      Tensor x = test::random_tensor(c.x, 13, 1.f, "x");
      Tensor xd = to_device(x, dt);
      Tensor y = nan_output(ys, dt), want = test::output_tensor(ys);
      ops::permute(ctx(), xd, c.perm, y);
      ops::permute(cpu_, x, c.perm, want);
      const test::Diff d = test::diff(to_host(y), want);
      EXPECT_EQ(d.max_abs, 0.0) << what;  // a permutation moves bytes: exact
    }
  }
}

}  // namespace
}  // namespace dacpp
