// ops::upsample_conv_head on CUDA (one fused kernel: bilinear upsample + 3×3 conv + ReLU + 1×1 conv) against the CPU
// op on the same dtype-rounded inputs, and against the unfused CUDA ops (resize, conv2d, conv2d), on the DPT heads'
// channel counts (32 / 64 / 128: both chunk widths, several chunks), partial tiles, batch 2, a one-pixel source, an
// identity resize and DA2's full 296² → 518²; its refusals are Unsupported errors that say why. Then
// ops::conv2d_upsampled likewise.
#include <gtest/gtest.h>

#include <functional>

#include "backends/cuda/cuda_ops_nn.h"
#include "gpu/nn_cuda_test_util.h"
#include "ops/conv2d.h"
#include "ops/resize.h"
#include "ops/upsample_conv_head.h"

namespace dacpp {
namespace {

struct HeadCase {
  int64_t n, c, h, w, oh, ow;
  bool bias;
  DType dt;
};

class UpsampleConvHeadCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<HeadCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(UpsampleConvHeadCudaTest, MatchesCpuAndTheUnfusedOps) {
  if (IsSkipped()) return;
  const HeadCase& k = GetParam();
  Tensor x = test::random_tensor({k.n, k.c, k.h, k.w}, 1, 1.f, "x");
  Tensor w3 = test::random_tensor({32, k.c, 3, 3}, 2, 0.3f, "w3");
  Tensor w1 = test::random_tensor({1, 32, 1, 1}, 3, 0.5f, "w1");
  Tensor b3 = k.bias ? test::random_tensor({32}, 4, 0.5f, "b3") : Tensor();
  Tensor b1 = k.bias ? test::random_tensor({1}, 5, 0.5f, "b1") : Tensor();
  Tensor xd = to_device(x, k.dt), w3d = to_device(w3, k.dt), w1d = to_device(w1, k.dt);
  Tensor b3d = k.bias ? to_device(b3, DType::F32) : Tensor(), b1d = k.bias ? to_device(b1, DType::F32) : Tensor();
  Tensor y = nan_output({k.n, 1, k.oh, k.ow}, k.dt);
  ASSERT_TRUE(ops::upsample_conv_head_fused(ctx(), xd, w3d, y));
  ops::upsample_conv_head(ctx(), xd, w3d, b3d, w1d, b1d, y);

  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({k.n, 1, k.oh, k.ow});
  ops::upsample_conv_head(cpu, x, w3, b3, w1, b1, want);
  expect_close(y, want, k.dt, "upsample_conv_head vs the CPU");

  // The unfused CUDA ops on the same device tensors: the upsampled map is rounded identically in both, so only the
  // hidden map's rounding (the unfused path stores it in the dtype) separates them.
  Tensor up = nan_output({k.n, k.c, k.oh, k.ow}, k.dt, "up");
  ops::resize_bilinear(ctx(), xd, up, /*align_corners=*/true);
  Tensor hidden = nan_output({k.n, 32, k.oh, k.ow}, k.dt, "hidden");
  ops::conv2d(ctx(), up, w3d, b3d, hidden, ops::Conv2dParams{1, 1, 1, 1}, ops::Activation::Relu);
  Tensor y2 = nan_output({k.n, 1, k.oh, k.ow}, k.dt, "y2");
  ops::conv2d(ctx(), hidden, w1d, b1d, y2);
  const test::Diff d = test::diff(to_host(y), to_host(y2));
  const test::Diff ref = test::diff(to_host(y2), want);
  EXPECT_LE(d.rel_l2, 5e-3) << "fused vs unfused CUDA (the unfused path is " << ref.rel_l2 << " from the CPU)";

  // Each path on its own (the op above runs the one tuning chose): the fused kernel, and taps first where the scale
  // lets it run ((in - 1) / (out - 1) <= 10 / 17 per axis), refused as Unsupported elsewhere.
  const auto fits = [](int64_t in, int64_t out) { return out <= 1 || 17 * (in - 1) <= 10 * (out - 1); };
  const bool taps_apply = fits(k.h, k.oh) && fits(k.w, k.ow);
  for (const cuda::HeadPath path : {cuda::HeadPath::Fused, cuda::HeadPath::TapsFirst}) {
    const char* name = path == cuda::HeadPath::Fused ? "fused" : "taps first";
    Tensor yp = nan_output({k.n, 1, k.oh, k.ow}, k.dt, "y_path");
    if (path == cuda::HeadPath::TapsFirst && !taps_apply) {
      try {
        cuda::upsample_conv_head_path(ctx().cuda(), path, xd, w3d, b3d, w1d, b1d, yp);
        ADD_FAILURE() << "taps first accepted a scale it cannot stage";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::Unsupported) << e.what();
        EXPECT_NE(std::string(e.what()).find("taps first"), std::string::npos) << e.what();
      }
      continue;
    }
    cuda::upsample_conv_head_path(ctx().cuda(), path, xd, w3d, b3d, w1d, b1d, yp);
    expect_close(yp, want, k.dt, std::string(name) + " vs the CPU");
    const test::Diff dp = test::diff(to_host(yp), to_host(y2));
    EXPECT_LE(dp.rel_l2, 5e-3) << name << " vs unfused CUDA";
    // The head's activation in the store (ops::HeadFinal): ReLU, and exp (DA3 mono's depth), against the CPU op
    // with the same activation.
    for (const ops::HeadFinal final : {ops::HeadFinal::Relu, ops::HeadFinal::Exp}) {
      const std::string what = str_cat(name, final == ops::HeadFinal::Relu ? " + ReLU" : " + exp", " vs the CPU");
      Tensor ya = nan_output({k.n, 1, k.oh, k.ow}, k.dt, "y_final");
      cuda::upsample_conv_head_path(ctx().cuda(), path, xd, w3d, b3d, w1d, b1d, ya, static_cast<int>(final));
      Tensor want_a = test::output_tensor({k.n, 1, k.oh, k.ow});
      ops::upsample_conv_head(cpu, x, w3, b3, w1, b1, want_a, final);
      expect_close(ya, want_a, k.dt, what);
    }
  }
}

std::string head_name(const ::testing::TestParamInfo<HeadCase>& i) {
  const HeadCase& k = i.param;
  return test::case_name(
      i.index, test::shape_tag({k.n, k.c, k.h, k.w, k.oh, k.ow}) + (k.bias ? "_b" : "") + "_" + nntest::tag(k.dt));
}

std::vector<HeadCase> head_cases() {
  return {
      {1, 128, 37, 37, 259, 259, true, DType::BF16},    // two 64-channel chunks, ×7, partial tiles both ways
      {2, 64, 20, 27, 70, 101, true, DType::BF16},      // batch 2, one chunk, odd sizes
      {1, 32, 15, 12, 43, 50, true, DType::F16},        // 32-channel chunks (DA2-S)
      {1, 96, 9, 9, 9, 9, false, DType::BF16},          // three 32-channel chunks, identity resize, no biases
      {1, 64, 1, 1, 5, 7, true, DType::F16},            // a one-pixel source
      {1, 128, 2, 3, 8, 48, true, DType::F16},          // one tile wide exactly
      {1, 128, 296, 296, 518, 518, true, DType::BF16},  // DA2's output stage at 518²
      {2, 64, 48, 72, 84, 126, true, DType::F16},       // DA3's 504×336 output stage, batch 2
      {3, 32, 37, 37, 65, 65, false, DType::BF16},      // ×1.75 with 32 channels (DA2-S's), odd batch, no biases
      {1, 64, 40, 11, 69, 19, true, DType::BF16},       // taps first with its patch full (13 source rows)
      {1, 64, 60, 130, 20, 40, true, DType::BF16},      // downsampled: the halo gathers its taps (no staged patch)
      {2, 64, 24, 40, 38, 66, true, DType::BF16},       // scale 0.6 across: 31 source columns, the separable fill
      {1, 32, 30, 45, 44, 66, true, DType::F16},        // scale 0.68 across: 35 columns, the staged patch instead
      {1, 64, 40, 60, 40, 60, false, DType::BF16},      // identity over 60 columns: the staged patch, 51 columns
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, UpsampleConvHeadCudaTest, ::testing::ValuesIn(head_cases()), head_name);

class UpsampleConvHeadRefusalTest : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }
  void expect_unsupported(DType dt, int64_t c, int64_t hidden, const char* what) {
    Tensor x = test::random_tensor({1, c, 4, 4}, 1, 1.f, "x");
    Tensor w3 = test::random_tensor({hidden, c, 3, 3}, 2, 1.f, "w3");
    Tensor w1 = test::random_tensor({1, hidden, 1, 1}, 3, 1.f, "w1");
    Tensor xd = to_device(x, dt), w3d = to_device(w3, dt), w1d = to_device(w1, dt);
    Tensor y = nan_output({1, 1, 8, 8}, dt);
    EXPECT_FALSE(ops::upsample_conv_head_fused(ctx(), xd, w3d, y)) << what;
    try {
      ops::upsample_conv_head(ctx(), xd, w3d, Tensor(), w1d, Tensor(), y);
      ADD_FAILURE() << "the fused kernel accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Unsupported) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("upsample_conv_head"), std::string::npos) << e.what();
    }
  }
};

TEST_F(UpsampleConvHeadRefusalTest, OperandsTheKernelLacksAreUnsupported) {
  if (IsSkipped()) return;
  expect_unsupported(DType::F32, 64, 32, "f32");
  expect_unsupported(DType::BF16, 48, 32, "48 input channels");
  expect_unsupported(DType::BF16, 64, 16, "16 hidden channels");
}

// Two output channels or an added map (the CPU's DualDPT form) are not CUDA's: refused as Unsupported, and
// upsample_conv_head_fused says so first (DualDptHead then runs its bands).
TEST_F(UpsampleConvHeadRefusalTest, TwoOutputsOrAnAddAreTheCpusOnly) {
  if (IsSkipped()) return;
  const DType dt = DType::BF16;
  Tensor x = test::random_tensor({1, 64, 4, 4}, 1, 1.f, "x"), w3 = test::random_tensor({32, 64, 3, 3}, 2, 1.f, "w3");
  Tensor w1 = test::random_tensor({2, 32, 1, 1}, 3, 1.f, "w1"), w1one = test::random_tensor({1, 32, 1, 1}, 3, 1.f);
  Tensor cols = test::random_tensor({64, 8}, 4), rows = test::random_tensor({64, 8}, 5);
  Tensor xd = to_device(x, dt), w3d = to_device(w3, dt), w1d = to_device(w1, dt), w1oned = to_device(w1one, dt);
  Tensor y2 = nan_output({1, 2, 8, 8}, dt);
  EXPECT_FALSE(ops::upsample_conv_head_fused(ctx(), xd, w3d, y2));
  EXPECT_THROW(ops::upsample_conv_head(ctx(), xd, w3d, Tensor(), w1d, Tensor(), y2), Error);
  Tensor y1 = nan_output({1, 1, 8, 8}, dt);
  const ops::UpsampledAdd add{to_device(cols, DType::F32), to_device(rows, DType::F32)};
  try {
    ops::upsample_conv_head(ctx(), xd, w3d, Tensor(), w1oned, Tensor(), y1, ops::HeadFinal::None, &add);
    ADD_FAILURE() << "CUDA took an added map";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported) << e.what();
  }
}

// ops::conv2d_upsampled (the Hopper TMA conv whose padded input copy is made by upsampling x on the fly, or taps
// first: a GEMM at the source resolution, then the blends, whichever the tuner finds faster) against the CPU
// (resize, then conv) and the unfused CUDA ops, where this GPU and build run it fused; and each path on its own
// (cuda::conv2d_upsampled_tma / conv2d_upsampled_taps) wherever that path applies.
struct UpConvCase {
  int64_t n, c, h, w, oh, ow, o;
  bool bias, relu;
  DType dt;
};

class Conv2dUpsampledCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<UpConvCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(Conv2dUpsampledCudaTest, MatchesCpuAndTheUnfusedOps) {
  if (IsSkipped()) return;
  const UpConvCase& k = GetParam();
  Tensor x = test::random_tensor({k.n, k.c, k.h, k.w}, 1, 1.f, "x");
  Tensor w = test::random_tensor({k.o, k.c, 3, 3}, 2, 0.3f, "w");
  Tensor b = k.bias ? test::random_tensor({k.o}, 3, 0.5f, "bias") : Tensor();
  Tensor xd = to_device(x, k.dt), wd = to_device(w, k.dt);
  Tensor bd = k.bias ? to_device(b, DType::F32) : Tensor();
  Tensor y = nan_output({k.n, k.o, k.oh, k.ow}, k.dt);
  const ops::Activation act = k.relu ? ops::Activation::Relu : ops::Activation::None;
  const cuda::Epilogue e = k.relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
  const bool fused = ops::conv2d_upsampled_fused(ctx(), xd, wd, y);
  const bool taps = cuda::conv2d_upsampled_taps_refusal(xd, wd, y, e).empty();
  if (!fused) {
    try {
      ops::conv2d_upsampled(ctx(), xd, wd, bd, y, act);
      ADD_FAILURE() << "conv2d_upsampled ran where conv2d_upsampled_fused says it cannot";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), ErrorCode::Unsupported) << err.what();
    }
  }
  if (!fused && !taps) GTEST_SKIP() << "neither the TMA conv (an sm_90 GPU, an sm_90a build) nor taps first applies";

  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({k.n, k.o, k.oh, k.ow});
  ops::conv2d_upsampled(cpu, x, w, b, want, act);
  Tensor up = nan_output({k.n, k.c, k.oh, k.ow}, k.dt, "up");
  ops::resize_bilinear(ctx(), xd, up, /*align_corners=*/true);
  Tensor unfused = nan_output({k.n, k.o, k.oh, k.ow}, k.dt, "unfused");
  ops::conv2d(ctx(), up, wd, bd, unfused, ops::Conv2dParams{1, 1, 1, 1}, act);
  const Tensor unfused_host = to_host(unfused);
  const auto check = [&](const char* path, const std::function<void(Tensor&)>& run) {
    Tensor got = nan_output({k.n, k.o, k.oh, k.ow}, k.dt, "y");
    run(got);
    expect_close(got, want, k.dt, std::string(path) + " vs the CPU");
    const test::Diff d = test::diff(to_host(got), unfused_host);
    EXPECT_LE(d.rel_l2, 5e-3) << path << " vs resize + conv2d on CUDA";
  };
  if (fused) {
    check("conv2d_upsampled", [&](Tensor& out) { ops::conv2d_upsampled(ctx(), xd, wd, bd, out, act); });
    check("tma", [&](Tensor& out) { cuda::conv2d_upsampled_tma(ctx().cuda(), xd, wd, bd, out, e); });
  }
  if (taps) {
    check("taps first", [&](Tensor& out) { cuda::conv2d_upsampled_taps(ctx().cuda(), xd, wd, bd, out, e); });
    // A borrowed weight (no owned storage): its tap rows made ahead of z in the call's scratch.
    const Tensor w_view = Tensor::view(wd.raw(), wd.shape(), wd.dtype(), wd.device(), nullptr, "w (borrowed)");
    check("taps first, borrowed weight",
          [&](Tensor& out) { cuda::conv2d_upsampled_taps(ctx().cuda(), xd, w_view, bd, out, e); });
  }
}

std::string upconv_name(const ::testing::TestParamInfo<UpConvCase>& i) {
  const UpConvCase& k = i.param;
  return test::case_name(i.index, test::shape_tag({k.n, k.c, k.h, k.w, k.oh, k.ow, k.o}) + (k.bias ? "_b" : "") +
                                      (k.relu ? "_relu" : "") + "_" + nntest::tag(k.dt));
}

std::vector<UpConvCase> upconv_cases() {
  return {
      {1, 256, 148, 148, 296, 296, 128, true, false, DType::BF16},  // DA2-L's out1 after refinenet1
      {1, 128, 148, 148, 296, 296, 64, true, false, DType::BF16},   // DA2-B's
      {1, 64, 74, 74, 148, 148, 32, true, false, DType::F16},       // DA2-S-like 64 -> 32: taps first only
      {3, 40, 21, 17, 40, 33, 96, true, true, DType::BF16},         // batch 3, three chunks of 32: taps first only
      {2, 64, 19, 23, 40, 50, 64, true, true, DType::F16},          // batch 2, odd ×2.1 upsample, 64 channels
      {1, 128, 37, 37, 74, 74, 128, false, true, DType::BF16},      // no bias, ReLU
      {1, 64, 5, 7, 5, 7, 64, true, false, DType::BF16},            // identity resize
      {1, 256, 260, 260, 520, 520, 64, true, false, DType::BF16},   // padded copy over 128 MiB: row bands
      {1, 64, 40, 150, 19, 70, 64, true, false, DType::BF16},       // downsampled: runs of 64 pixels gather their taps
      {1, 64, 9, 200, 30, 210, 64, false, false, DType::F16},       // wide source, barely upsampled columns
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dUpsampledCudaTest, ::testing::ValuesIn(upconv_cases()), upconv_name);

// ops::conv2d_upsampled after a 1×1 conv (ops::Pointwise), folded into taps first's GEMM, against the CPU (the 1×1
// conv, resize, conv) and the unfolded CUDA ops (1×1 conv2d, then taps first). The fold is made once per pair of
// weights: a second 1×1 weight with the same 3×3 weight must get its own, and a borrowed 1×1 or 3×3 weight (no owned
// storage) one of its own each call.
struct FoldCase {
  int64_t n, c0, c, h, w, oh, ow, o;
  bool pre_bias, bias, relu;
  DType dt;
};

class Conv2dUpsampledFoldCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<FoldCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(Conv2dUpsampledFoldCudaTest, MatchesCpuAndTheUnfoldedOps) {
  if (IsSkipped()) return;
  const FoldCase& k = GetParam();
  Tensor x = test::random_tensor({k.n, k.c0, k.h, k.w}, 1, 1.f, "x");
  Tensor w = test::random_tensor({k.o, k.c, 3, 3}, 2, 0.3f, "w");
  Tensor b = k.bias ? test::random_tensor({k.o}, 3, 0.5f, "bias") : Tensor();
  Tensor xd = to_device(x, k.dt), wd = to_device(w, k.dt);
  Tensor bd = k.bias ? to_device(b, DType::F32) : Tensor();
  const ops::Activation act = k.relu ? ops::Activation::Relu : ops::Activation::None;
  const cuda::Epilogue e = k.relu ? cuda::Epilogue::Relu : cuda::Epilogue::None;
  ops::Context cpu(Device::cpu());
  for (const uint32_t seed : {6u, 9u}) {  // two 1×1 weights for one 3×3 weight: two folds
    Tensor pw = test::random_tensor({k.c, k.c0, 1, 1}, seed, 0.3f, "pre.w");
    Tensor pb = k.pre_bias ? test::random_tensor({k.c}, seed + 1, 0.5f, "pre.bias") : Tensor();
    Tensor pwd = to_device(pw, k.dt), pbd = k.pre_bias ? to_device(pb, DType::F32) : Tensor();
    const ops::Pointwise pre{pwd, pbd};
    Tensor y = nan_output({k.n, k.o, k.oh, k.ow}, k.dt);
    ASSERT_TRUE(ops::conv2d_upsampled_folds(ctx(), xd, pre, wd, y));
    Tensor want = test::output_tensor({k.n, k.o, k.oh, k.ow});
    ops::conv2d_upsampled(cpu, x, ops::Pointwise{pw, pb}, w, b, want, act);
    Tensor mixed = nan_output({k.n, k.c, k.h, k.w}, k.dt, "mixed");
    ops::conv2d(ctx(), xd, pwd, pbd, mixed);
    Tensor unfolded = nan_output({k.n, k.o, k.oh, k.ow}, k.dt, "unfolded");
    cuda::conv2d_upsampled_taps(ctx().cuda(), mixed, wd, bd, unfolded, e);
    const Tensor unfolded_host = to_host(unfolded);
    for (int call = 0; call < 2; ++call) {  // the second call reads the kept fold
      ops::conv2d_upsampled(ctx(), xd, pre, wd, bd, y, act);
      const std::string what = str_cat("1x1 seed ", seed, ", call ", call);
      expect_close(y, want, k.dt, what + " vs the CPU");
      EXPECT_LE(test::diff(to_host(y), unfolded_host).rel_l2, 5e-3) << what << " vs the unfolded CUDA ops";
    }
    // A borrowed view of the same 1×1 weight: folded into scratch, same values.
    Tensor borrowed = Tensor::view(pwd.raw(), pwd.shape(), pwd.dtype(), pwd.device(), nullptr, "pre.w view");
    Tensor yb = nan_output({k.n, k.o, k.oh, k.ow}, k.dt, "yb");
    ops::conv2d_upsampled(ctx(), xd, ops::Pointwise{borrowed, pbd}, wd, bd, yb, act);
    EXPECT_EQ(test::diff(to_host(yb), to_host(y)).max_abs, 0.0) << "seed " << seed << ": borrowed 1x1 weight";
    // A borrowed 3×3 weight with the model's 1×1 weight and bias: likewise.
    Tensor w_view = Tensor::view(wd.raw(), wd.shape(), wd.dtype(), wd.device(), nullptr, "w view");
    ops::conv2d_upsampled(ctx(), xd, pre, w_view, bd, yb, act);
    EXPECT_EQ(test::diff(to_host(yb), to_host(y)).max_abs, 0.0) << "seed " << seed << ": borrowed 3x3 weight";
  }
}

std::string fold_name(const ::testing::TestParamInfo<FoldCase>& i) {
  const FoldCase& k = i.param;
  return test::case_name(i.index, test::shape_tag({k.n, k.c0, k.c, k.h, k.w, k.oh, k.ow, k.o}) +
                                      (k.pre_bias ? "_pb" : "") + (k.bias ? "_b" : "") + (k.relu ? "_relu" : "") + "_" +
                                      nntest::tag(k.dt));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dUpsampledFoldCudaTest,
    ::testing::Values(FoldCase{1, 256, 256, 148, 148, 296, 296, 128, true, true, false, DType::BF16},  // DA2-L
                      FoldCase{1, 128, 128, 148, 148, 296, 296, 64, true, true, false, DType::F16},    // DA2-B
                      FoldCase{1, 64, 64, 37, 37, 74, 74, 32, true, true, false, DType::BF16},         // DA2-S-like
                      FoldCase{3, 40, 24, 21, 17, 40, 33, 96, false, true, true, DType::BF16},  // C0 != C, 3 chunks
                      FoldCase{2, 64, 96, 19, 23, 40, 50, 64, true, false, true, DType::F16}),
    fold_name);

TEST_F(UpsampleConvHeadRefusalTest, UpsampledConvOperandsItLacksAreUnsupported) {
  if (IsSkipped()) return;
  const auto expect = [&](DType dt, int64_t c, int64_t o, const char* what) {
    Tensor x = test::random_tensor({1, c, 4, 4}, 1, 1.f, "x");
    Tensor w = test::random_tensor({o, c, 3, 3}, 2, 1.f, "w");
    Tensor xd = to_device(x, dt), wd = to_device(w, dt);
    Tensor y = nan_output({1, o, 8, 8}, dt);
    EXPECT_FALSE(ops::conv2d_upsampled_fused(ctx(), xd, wd, y)) << what;
    try {
      ops::conv2d_upsampled(ctx(), xd, wd, Tensor(), y);
      ADD_FAILURE() << "conv2d_upsampled accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Unsupported) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("conv2d_upsampled"), std::string::npos) << e.what();
    }
  };
  expect(DType::F32, 64, 64, "f32");
  expect(DType::BF16, 32, 64, "32 input channels");
  expect(DType::BF16, 64, 96, "96 output channels");
  // Taps first on its own: each reason it refuses, named.
  const auto expect_taps = [&](int64_t c, int64_t o, int64_t h, int64_t oh, cuda::Epilogue act, const char* what) {
    Tensor x = test::random_tensor({1, c, h, h}, 1, 1.f, "x");
    Tensor w = test::random_tensor({o, c, 3, 3}, 2, 1.f, "w");
    Tensor xd = to_device(x, DType::BF16), wd = to_device(w, DType::BF16);
    Tensor y = nan_output({1, o, oh, oh}, DType::BF16);
    EXPECT_FALSE(cuda::conv2d_upsampled_taps_refusal(xd, wd, y, act).empty()) << what;
    try {
      cuda::conv2d_upsampled_taps(ctx().cuda(), xd, wd, Tensor(), y, act);
      ADD_FAILURE() << "taps first accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Unsupported) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("taps first"), std::string::npos) << e.what();
    }
  };
  expect_taps(64, 48, 4, 8, cuda::Epilogue::None, "48 output channels");
  expect_taps(36, 64, 4, 8, cuda::Epilogue::None, "36 input channels");
  expect_taps(64, 64, 4, 8, cuda::Epilogue::Gelu, "a GELU epilogue");
  expect_taps(64, 64, 8, 8, cuda::Epilogue::None, "no upsampling (scale 1)");
  // After a 1×1 conv (ops::Pointwise): operands taps first refuses are not folded, and the op says why.
  const auto expect_fold = [&](DType dt, int64_t c0, int64_t h, int64_t oh, const char* what) {
    Tensor x = test::random_tensor({1, c0, h, h}, 1, 1.f, "x");
    Tensor pw = test::random_tensor({64, c0, 1, 1}, 3, 1.f, "pre.w");
    Tensor w = test::random_tensor({64, 64, 3, 3}, 2, 1.f, "w");
    Tensor xd = to_device(x, dt), pwd = to_device(pw, dt), wd = to_device(w, dt);
    Tensor y = nan_output({1, 64, oh, oh}, dt);
    const ops::Pointwise pre{pwd, Tensor()};
    EXPECT_FALSE(ops::conv2d_upsampled_folds(ctx(), xd, pre, wd, y)) << what;
    try {
      ops::conv2d_upsampled(ctx(), xd, pre, wd, Tensor(), y);
      ADD_FAILURE() << "the fold accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Unsupported) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("taps first"), std::string::npos) << e.what();
    }
  };
  expect_fold(DType::F32, 64, 4, 8, "f32");
  expect_fold(DType::BF16, 36, 4, 8, "36 channels into the 1x1 conv");
  expect_fold(DType::BF16, 64, 8, 8, "no upsampling (scale 1)");
}

}  // namespace
}  // namespace dacpp
