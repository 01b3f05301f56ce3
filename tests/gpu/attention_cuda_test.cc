// ops::attention on CUDA against the CPU backend on the same (dtype-rounded) inputs: the flash tensor-core kernel
// (bf16/f16, D 32/64/128), the exact f32 kernel, and the fallback for other head dims; plus its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "backends/cuda/attention_variants.cuh"
#include "core/error.h"
#include "gpu/nn_cuda_test_util.h"
#include "ops/attention.h"

namespace dacpp {
namespace {

const char* hopper_name(cuda::HopperAttention k) {
  switch (k) {
    case cuda::HopperAttention::Wgmma: return "wgmma";
    case cuda::HopperAttention::Tma: return "tma";
    case cuda::HopperAttention::TmaOverlapped: return "tma overlapped";
    case cuda::HopperAttention::TmaOverlappedLean: return "tma overlapped lean";
    case cuda::HopperAttention::TmaOverlappedStaggered: return "tma overlapped staggered";
    case cuda::HopperAttention::TmaOverlappedTurns: return "tma overlapped in turns";
  }
  return "?";
}

struct AttnCase {
  int64_t b, h, nq, nk, d;
  DType dt;
};

class AttentionCudaTest : public nntest::CudaOpTest, public ::testing::TestWithParam<AttnCase> {
 protected:
  void SetUp() override { open_context(); }
};

TEST_P(AttentionCudaTest, MatchesCpu) {
  if (IsSkipped()) return;
  const AttnCase& c = GetParam();
  Tensor q = test::random_tensor({c.b, c.h, c.nq, c.d}, 1, 1.f, "q");
  Tensor k = test::random_tensor({c.b, c.h, c.nk, c.d}, 2, 1.f, "k");
  Tensor v = test::random_tensor({c.b, c.h, c.nk, c.d}, 3, 1.f, "v");
  Tensor qd = to_device(q, c.dt), kd = to_device(k, c.dt), vd = to_device(v, c.dt);
  Tensor out = nan_output({c.b, c.nq, c.h, c.d}, c.dt, "out");
  const float scale = 1.f / std::sqrt(static_cast<float>(c.d));
  ops::attention(ctx(), qd, kd, vd, scale, out);

  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({c.b, c.nq, c.h, c.d});
  ops::attention(cpu, q, k, v, scale, want);
  expect_close(out, want, c.dt, "attention");

  // Every tensor-core variant, whatever the per-shape choice, with key splits 1..4 (a split count above the number
  // of key tiles falls back to fewer).
  const auto check_splits = [&](const std::string& label, const auto& run) {
    for (int splits = 1; splits <= 4; ++splits) {
      Tensor o2 = nan_output({c.b, c.nq, c.h, c.d}, c.dt, "out_variant");
      run(o2, splits);
      expect_close(o2, want, c.dt, label + " /" + std::to_string(splits));
    }
  };
  const bool tc = c.dt != DType::F32 && (c.d == 32 || c.d == 64 || c.d == 128);
  if (!tc) return;
  // The mma.sync kernel: m-tiles per warp × warps.
  for (auto [m_tiles, n_warps] :
       {std::pair{1, 4}, std::pair{1, 2}, std::pair{1, 1}, std::pair{2, 4}, std::pair{2, 2}}) {
    const int mt = m_tiles, warps = n_warps;  // named copies: a lambda cannot capture structured bindings in C++17
    if (mt == 2 && c.d > 64) continue;
    check_splits("attention variant " + std::to_string(mt) + "x" + std::to_string(warps), [&](Tensor& o, int splits) {
      cuda::attention_variant(ctx().cuda(), qd, kd, vd, scale, o, mt, warps, splits);
    });
  }
  // The Hopper wgmma kernel (D = 64) where this GPU and build have it: warpgroups × keys per tile. Elsewhere, and
  // for another D or an unknown tiling, a typed error.
  const bool wgmma = cuda::attention_wgmma_available(ctx().cuda());
  const auto expect_wgmma_error = [&](int wg, int keys, const char* what) {
    try {
      cuda::attention_wgmma_variant(ctx().cuda(), qd, kd, vd, scale, out, wg, keys);
      ADD_FAILURE() << "attention_wgmma_variant accepted " << what;
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), wgmma ? ErrorCode::InvalidArgument : ErrorCode::Unsupported) << err.what();
    }
  };
  if (c.d != 64) return expect_wgmma_error(1, 64, "D != 64");
  if (!wgmma) return expect_wgmma_error(1, 64, "a GPU or build without sm_90a");
  expect_wgmma_error(4, 64, "4 warpgroups");
  expect_wgmma_error(1, 96, "96-key tiles");
  // The Hopper kernels: cp.async with the warpgroups in step, the TMA ring with free-running warpgroups, and the
  // TMA ring with each warpgroup overlapping its own tiles (3 or 6 stages, or 2; or the warpgroups started out of
  // step, or issuing their MMAs in turns).
  for (const auto kernel : {cuda::HopperAttention::Wgmma, cuda::HopperAttention::Tma,
                            cuda::HopperAttention::TmaOverlapped, cuda::HopperAttention::TmaOverlappedLean,
                            cuda::HopperAttention::TmaOverlappedStaggered, cuda::HopperAttention::TmaOverlappedTurns}) {
    for (auto [n_wg, n_keys] : {std::pair{1, 64}, std::pair{1, 128}, std::pair{2, 64}, std::pair{2, 128},
                                std::pair{3, 64}, std::pair{3, 128}}) {
      const int wg = n_wg, keys = n_keys;
      check_splits(str_cat("attention ", hopper_name(kernel), " ", wg, "x", keys), [&](Tensor& o, int splits) {
        cuda::attention_wgmma_variant(ctx().cuda(), qd, kd, vd, scale, o, wg, keys, splits, kernel);
      });
    }
  }
}

std::string attn_name(const ::testing::TestParamInfo<AttnCase>& i) {
  const AttnCase& c = i.param;
  return test::case_name(i.index, test::shape_tag({c.b, c.h, c.nq, c.nk, c.d}) + "_" + nntest::tag(c.dt));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionCudaTest,
    ::testing::Values(
        // exact f32 kernel
        AttnCase{1, 1, 1, 1, 8, DType::F32}, AttnCase{2, 3, 5, 7, 16, DType::F32},
        AttnCase{1, 6, 197, 197, 64, DType::F32}, AttnCase{2, 4, 37, 51, 64, DType::F32},
        AttnCase{1, 2, 100, 77, 128, DType::F32}, AttnCase{1, 1, 33, 40, 200, DType::F32},
        // flash kernel: tails of both tiles, one key, D 32/64/128
        AttnCase{1, 1, 1, 1, 64, DType::BF16}, AttnCase{1, 6, 197, 197, 64, DType::BF16},
        AttnCase{2, 4, 37, 51, 64, DType::BF16}, AttnCase{1, 2, 130, 300, 32, DType::BF16},
        AttnCase{1, 2, 100, 77, 128, DType::BF16}, AttnCase{1, 6, 1370, 1370, 64, DType::BF16},
        AttnCase{1, 6, 197, 197, 64, DType::F16}, AttnCase{2, 3, 65, 129, 64, DType::F16},
        AttnCase{1, 2, 64, 64, 128, DType::F16}, AttnCase{1, 1, 70, 20, 32, DType::F16},
        // fallback kernel for a head dim the flash kernel does not take
        AttnCase{1, 2, 50, 61, 48, DType::BF16}, AttnCase{1, 2, 50, 61, 80, DType::F16}),
    attn_name);

class AttentionCudaLarge : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }
};

// 16 views × 1300 tokens in one global attention: shared memory stays bounded whatever N.
TEST_F(AttentionCudaLarge, TwentyThousandTokensBf16) {
  if (IsSkipped()) return;
  const int64_t n = 20800, d = 64;
  Tensor q = test::random_tensor({1, 1, n, d}, 4, 1.f, "q"), k = test::random_tensor({1, 1, n, d}, 5, 1.f, "k");
  Tensor v = test::random_tensor({1, 1, n, d}, 6, 1.f, "v");
  Tensor qd = to_device(q, DType::BF16), kd = to_device(k, DType::BF16), vd = to_device(v, DType::BF16);
  Tensor out = nan_output({1, n, 1, d}, DType::BF16, "out");
  ops::attention(ctx(), qd, kd, vd, 0.125f, out);
  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({1, n, 1, d});
  ops::attention(cpu, q, k, v, 0.125f, want);
  expect_close(out, want, DType::BF16, "attention 20800 tokens");
}

TEST_F(AttentionCudaLarge, RejectsMixedDtypesAndHugeHeadDim) {
  if (IsSkipped()) return;
  Tensor q = test::random_tensor({1, 1, 4, 64}, 1), k = test::random_tensor({1, 1, 4, 64}, 2);
  Tensor qd = to_device(q, DType::BF16), kd = to_device(k, DType::F16), vd = to_device(k, DType::BF16);
  Tensor out = nan_output({1, 4, 1, 64}, DType::BF16);
  try {
    ops::attention(ctx(), qd, kd, vd, 0.125f, out);
    ADD_FAILURE() << "mixed dtypes accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
  Tensor big = test::random_tensor({1, 1, 2, 320}, 3);
  Tensor bd = to_device(big, DType::F32);
  Tensor bo = nan_output({1, 2, 1, 320}, DType::F32);
  try {
    ops::attention(ctx(), bd, bd, bd, 0.1f, bo);
    ADD_FAILURE() << "D = 320 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("320"), std::string::npos) << e.what();
  }
}

// The flash kernel's softmax needs a positive scale; any other scale is the general kernel's, with the same result.
TEST_F(AttentionCudaLarge, NonPositiveScaleMatchesCpu) {
  if (IsSkipped()) return;
  Tensor q = test::random_tensor({1, 2, 70, 64}, 4), k = test::random_tensor({1, 2, 90, 64}, 5),
         v = test::random_tensor({1, 2, 90, 64}, 6);
  Tensor qd = to_device(q, DType::BF16), kd = to_device(k, DType::BF16), vd = to_device(v, DType::BF16);
  ops::Context cpu(Device::cpu());
  for (float scale : {-0.125f, 0.f}) {
    Tensor out = nan_output({1, 70, 2, 64}, DType::BF16, "out");
    ops::attention(ctx(), qd, kd, vd, scale, out);
    Tensor want = test::output_tensor({1, 70, 2, 64});
    ops::attention(cpu, q, k, v, scale, want);
    expect_close(out, want, DType::BF16, "attention scale " + std::to_string(scale));
  }
}

// attention_qkv on CUDA (the flash kernel reading q / k / v in place from the fused projection for bf16 / f16 and
// D 32 / 64 / 128; the permute + general kernels otherwise) against the CPU op on the same rounded values.
TEST_F(AttentionCudaLarge, AttentionQkvMatchesCpu) {
  if (IsSkipped()) return;
  struct Case {
    int64_t b, n, h, d;
    DType dt;
  };
  for (const Case& c : {Case{1, 1370, 16, 64, DType::BF16}, Case{1, 1370, 6, 64, DType::F16},
                        Case{2, 197, 4, 32, DType::BF16}, Case{3, 130, 2, 64, DType::BF16},
                        Case{1, 100, 2, 128, DType::F16},
                        Case{1, 77, 3, 64, DType::F32}, Case{2, 50, 2, 48, DType::BF16}}) {
    SCOPED_TRACE(std::to_string(c.b) + "x" + std::to_string(c.n) + " h" + std::to_string(c.h) + " d" +
                 std::to_string(c.d) + " " + dtype_name(c.dt));
    Tensor qkv = test::random_tensor({c.b, c.n, 3 * c.h * c.d}, 9, 1.f, "qkv");
    Tensor qd = to_device(qkv, c.dt);
    Tensor out = nan_output({c.b, c.n, c.h, c.d}, c.dt, "out");
    const float scale = 1.f / std::sqrt(static_cast<float>(c.d));
    ops::attention_qkv(ctx(), qd, c.h, scale, out);
    ops::Context cpu(Device::cpu());
    Tensor want = test::output_tensor({c.b, c.n, c.h, c.d});
    ops::attention_qkv(cpu, qkv, c.h, scale, want);
    expect_close(out, want, c.dt, "attention_qkv");
    // Every Hopper tiling reading the fused projection in place (the TMA kernel's 4-D maps step over heads 64
    // elements apart and rows 3·H·D apart), whatever the per-shape choice; the last batch's rows past N and the
    // heads next to each head must not leak in.
    if (c.d != 64 || c.dt == DType::F32 || !cuda::attention_wgmma_available(ctx().cuda())) continue;
    for (const auto kernel : {cuda::HopperAttention::Wgmma, cuda::HopperAttention::Tma,
                              cuda::HopperAttention::TmaOverlapped, cuda::HopperAttention::TmaOverlappedLean,
                              cuda::HopperAttention::TmaOverlappedStaggered,
                              cuda::HopperAttention::TmaOverlappedTurns})
      for (const int wg : {1, 2, 3})
        for (const int keys : {64, 128})
          for (const int splits : {1, 3}) {
                  Tensor o2 = nan_output({c.b, c.n, c.h, c.d}, c.dt, "out_variant");
            cuda::attention_qkv_wgmma_variant(ctx().cuda(), qd, c.h, scale, o2, wg, keys, splits, kernel);
            expect_close(o2, want, c.dt,
                         str_cat("attention_qkv ", hopper_name(kernel), " ", wg, "x", keys, " /", splits));
          }
  }
}

// attention_qkv_rows on CUDA: a chunk of query rows against every token's keys and values (the flash kernels read
// the chunk's q rows in place: rows past the chunk read as zero, never the next chunk's; the permute + general
// kernels attend every row and copy the chunk out) against the CPU op on the same rounded values.
TEST_F(AttentionCudaLarge, AttentionQkvRowsMatchCpu) {
  if (IsSkipped()) return;
  struct Case {
    int64_t b, n, h, d, row0, nq;
    DType dt;
  };
  for (const Case& c : {Case{1, 1370, 16, 64, 0, 640, DType::BF16}, Case{1, 1370, 16, 64, 640, 730, DType::BF16},
                        Case{1, 1370, 16, 64, 512, 384, DType::F16}, Case{2, 197, 4, 32, 64, 133, DType::BF16},
                        Case{1, 100, 2, 128, 1, 50, DType::F16}, Case{1, 77, 3, 64, 10, 30, DType::F32},
                        Case{2, 50, 2, 48, 7, 23, DType::BF16}}) {
    SCOPED_TRACE(
        str_cat(c.b, "x", c.n, " h", c.h, " d", c.d, " rows [", c.row0, ", ", c.row0 + c.nq, ") ", dtype_name(c.dt)));
    Tensor qkv = test::random_tensor({c.b, c.n, 3 * c.h * c.d}, 12, 1.f, "qkv");
    Tensor qd = to_device(qkv, c.dt);
    Tensor out = nan_output({c.b, c.nq, c.h, c.d}, c.dt, "out");
    const float scale = 1.f / std::sqrt(static_cast<float>(c.d));
    ops::attention_qkv_rows(ctx(), qd, c.h, scale, c.row0, out);
    ops::Context cpu(Device::cpu());
    Tensor want = test::output_tensor({c.b, c.nq, c.h, c.d});
    ops::attention_qkv_rows(cpu, qkv, c.h, scale, c.row0, want);
    expect_close(out, want, c.dt, "attention_qkv_rows");
  }
}

// The TMA kernels' unsupported variants are typed errors like the wgmma kernel's (InvalidArgument on Hopper,
// Unsupported elsewhere), for both layouts.
TEST_F(AttentionCudaLarge, TmaVariantRefusals) {
  if (IsSkipped()) return;
  const bool hopper = cuda::attention_wgmma_available(ctx().cuda());
  const ErrorCode want = hopper ? ErrorCode::InvalidArgument : ErrorCode::Unsupported;
  Tensor qh = test::random_tensor({1, 2, 70, 64}, 4);
  Tensor q = to_device(qh, DType::BF16);
  Tensor out = nan_output({1, 70, 2, 64}, DType::BF16, "out");
  struct Bad {
    cuda::HopperAttention kernel;
    int wg, keys;
  };
  for (const Bad& bad : {Bad{cuda::HopperAttention::Tma, 4, 64}, Bad{cuda::HopperAttention::Tma, 1, 96},
                         Bad{cuda::HopperAttention::Tma, 0, 128}, Bad{cuda::HopperAttention::TmaOverlapped, 4, 128},
                         Bad{cuda::HopperAttention::TmaOverlapped, 1, 32},
                         Bad{cuda::HopperAttention::TmaOverlappedLean, 0, 64}}) {
    try {
      cuda::attention_wgmma_variant(ctx().cuda(), q, q, q, 0.125f, out, bad.wg, bad.keys, 1, bad.kernel);
      ADD_FAILURE() << hopper_name(bad.kernel) << " variant " << bad.wg << "x" << bad.keys << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), want) << e.what();
    }
  }
  Tensor qkv_host = test::random_tensor({1, 70, 3 * 2 * 32}, 5);  // D = 32
  Tensor qkv = to_device(qkv_host, DType::BF16);
  Tensor o32 = nan_output({1, 70, 2, 32}, DType::BF16, "out32");
  try {
    cuda::attention_qkv_wgmma_variant(ctx().cuda(), qkv, 2, 0.125f, o32, 1, 64, 1, cuda::HopperAttention::Tma);
    ADD_FAILURE() << "tma variant with D = 32 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want) << e.what();
  }
}

// A qkv projection starting 2 bytes past a 16-byte boundary: the flash kernel cannot read it in place, so the heads
// are permuted into scratch and the flash kernel runs on them, its split-KV partial results placed after them in the
// same scratch (a second scratch() call would have replaced the heads).
TEST_F(AttentionCudaLarge, AttentionQkvUnalignedUsesPermutedHeads) {
  if (IsSkipped()) return;
  const int64_t n = 1370, h = 6, d = 64, cols = 3 * h * d;
  Tensor host = test::random_tensor({n * cols + 8}, 11, 1.f, "qkv+pad");
  Tensor dev = to_device(host, DType::BF16);
  Tensor qkv_dev = Tensor::view(static_cast<char*>(dev.raw()) + 2, {1, n, cols}, DType::BF16, dev.device(),
                                dev.storage(), "qkv+2 bytes");
  Tensor qkv_host = Tensor::view(static_cast<float*>(host.raw()) + 1, {1, n, cols}, DType::F32, Device::cpu(),
                                 host.storage(), "qkv+1");
  Tensor out = nan_output({1, n, h, d}, DType::BF16, "out");
  ops::attention_qkv(ctx(), qkv_dev, h, 0.125f, out);
  ops::Context cpu(Device::cpu());
  Tensor want = test::output_tensor({1, n, h, d});
  ops::attention_qkv(cpu, qkv_host, h, 0.125f, want);
  expect_close(out, want, DType::BF16, "attention_qkv unaligned");
}

}  // namespace
}  // namespace dacpp
