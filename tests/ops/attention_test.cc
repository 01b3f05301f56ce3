#include "ops/attention.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "backends/cpu/attention_fused_cpu.h"
#include "backends/cpu/cpu_context.h"
#include "backends/cpu/cpu_ops.h"
#include "core/fault.h"
#include "engine/device_select.h"
#include "ops/op_test_util.h"
#include "ops/permute.h"
#include "reference/reference.h"

namespace dacpp {
namespace {

struct AttnCase {
  int64_t b, h, nq, nk, d;
  size_t work_limit;  // 0: default
};

class AttentionTest : public ::testing::TestWithParam<AttnCase> {};

// f32: the fused AVX-512 kernel where the CPU has it (head dims that are multiples of 16) and oneDNN's primitives,
// each against the reference.
TEST_P(AttentionTest, MatchesReference) {
  const AttnCase& c = GetParam();
  Tensor q = test::random_tensor({c.b, c.h, c.nq, c.d}, 1, 1.f, "q");
  Tensor k = test::random_tensor({c.b, c.h, c.nk, c.d}, 2, 1.f, "k");
  Tensor v = test::random_tensor({c.b, c.h, c.nk, c.d}, 3, 1.f, "v");
  const float scale = 1.f / std::sqrt(static_cast<float>(c.d));
  const Tensor want = ref::attention(q, k, v, scale);
  for (const bool fused : {false, true}) {
    SCOPED_TRACE(fused ? "fused kernel" : "oneDNN primitives");
    ops::Context ctx;
    if (c.work_limit) ctx.cpu().set_work_limit_bytes(c.work_limit);
    ctx.cpu().set_fused_attention(fused);
    Tensor out = test::output_tensor({c.b, c.nq, c.h, c.d});
    ops::attention(ctx, q, k, v, scale, out);
    test::expect_close(out, want);
  }
}

std::string attention_name(const ::testing::TestParamInfo<AttnCase>& i) {
  const AttnCase& c = i.param;
  return test::case_name(i.index, "b" + std::to_string(c.b) + "h" + std::to_string(c.h) + "q" + std::to_string(c.nq) +
                                      "k" + std::to_string(c.nk) + "d" + std::to_string(c.d) +
                                      (c.work_limit ? "_chunked" : ""));
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionTest,
                         ::testing::Values(AttnCase{1, 1, 1, 1, 8, 0}, AttnCase{2, 3, 5, 7, 16, 0},
                                           AttnCase{1, 6, 197, 197, 64, 0}, AttnCase{2, 4, 37, 51, 64, 0},
                                           // forced chunking: query rows split, heads split, and odd tails of both
                                           AttnCase{2, 3, 100, 90, 32, 90 * 4 * 3 * 33},
                                           AttnCase{1, 5, 61, 77, 64, 77 * 4 * 40}, AttnCase{1, 2, 50, 64, 8, 1},
                                           AttnCase{1, 2, 31, 129, 128, 0}, AttnCase{2, 3, 7, 1, 48, 0},
                                           AttnCase{1, 16, 97, 65, 64, 0}, AttnCase{1, 1, 200, 63, 16, 0},
                                           AttnCase{1, 2, 3, 300, 96, 0}),
                         attention_name);

// A bf16 model's attention (bf16 q, k, v and probabilities; f32 scores, softmax and accumulation): the fused
// AVX512-BF16 kernel where the CPU has it and oneDNN's primitives, against the f32 reference at a bf16
// bound, and the two paths against each other. Shapes with tails of every kind: query rows off the 6-row tiles and
// the 30-row blocks, keys off the 64-key groups and odd, head dims 16 to 128, queries fewer and more than keys.
TEST_P(AttentionTest, Bf16ProductsWithinTheBf16Bound) {
  const AttnCase& c = GetParam();
  if (!cpu::bf16_support().refusal.empty()) GTEST_SKIP() << cpu::bf16_support().refusal;
  Tensor q = test::random_tensor({c.b, c.h, c.nq, c.d}, 1, 1.f, "q");
  Tensor k = test::random_tensor({c.b, c.h, c.nk, c.d}, 2, 1.f, "k");
  Tensor v = test::random_tensor({c.b, c.h, c.nk, c.d}, 3, 1.f, "v");
  const float scale = 1.f / std::sqrt(static_cast<float>(c.d));
  const Tensor want = ref::attention(q, k, v, scale);
  Tensor paths[2] = {test::output_tensor({c.b, c.nq, c.h, c.d}), test::output_tensor({c.b, c.nq, c.h, c.d})};
  for (int fused = 0; fused < 2; ++fused) {
    SCOPED_TRACE(fused ? "fused kernel" : "oneDNN primitives");
    ops::Context ctx;
    if (c.work_limit) ctx.cpu().set_work_limit_bytes(c.work_limit);
    ctx.cpu().set_bf16_products(true);
    ctx.cpu().set_fused_attention(fused != 0);
    ops::attention(ctx, q, k, v, scale, paths[fused]);
    test::expect_close(paths[fused], want, 2e-2, 2e-2);
  }
  test::expect_close(paths[1], paths[0], 2e-2, 2e-2);
}

// The fused kernels are taken where the CPU reports AVX-512 (and AVX512-BF16 for bf16) and oneDNN may use it, for
// the head dims they have tiles for, and not otherwise.
TEST(AttentionFusedTest, TakenExactlyWhereTheCpuAndHeadDimAllow) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string word; cpuinfo >> word;) flags.insert(word);
  const auto has = [&](const char* flag) { return flags.count(flag) != 0; };
  const bool avx512 = has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq") &&
                      cpu::bf16_support().isa.rfind("avx512_core", 0) == 0;
  const bool bf16 = avx512 && has("avx512_bf16") && cpu::bf16_support().native && cpu::bf16_support().refusal.empty();
  for (const int64_t d : {16, 32, 48, 64, 96, 128}) {
    EXPECT_EQ(cpu::fused_attention_fits(d, false), avx512) << "d " << d;
    EXPECT_EQ(cpu::fused_attention_fits(d, true), bf16) << "d " << d;
  }
  for (const int64_t d : {0, 8, 24, 63, 144, 256})
    for (const bool b : {false, true}) EXPECT_FALSE(cpu::fused_attention_fits(d, b)) << "d " << d;
}

// The fused kernel's only failure is its scratch (packed K and V, then the per-thread blocks): each allocation
// failing in turn is an OutOfMemory error naming it, raised before any parallel region, and the next call on the
// same context succeeds.
TEST(AttentionFusedTest, ScratchFailureIsOutOfMemoryAndTheContextRecovers) {
  for (const bool bf16 : {false, true}) {
    if (!cpu::fused_attention_fits(64, bf16)) continue;
    SCOPED_TRACE(bf16 ? "bf16" : "f32");
    Tensor q = test::random_tensor({1, 2, 70, 64}, 1), k = test::random_tensor({1, 2, 70, 64}, 2);
    Tensor v = test::random_tensor({1, 2, 70, 64}, 3);
    for (const int n : {1, 2}) {
      ops::Context ctx;
      ctx.cpu().set_bf16_products(bf16);
      Tensor out = test::output_tensor({1, 70, 2, 64});
      fault::configure("host.alloc:" + std::to_string(n));
      try {
        ops::attention(ctx, q, k, v, 0.125f, out);
        ADD_FAILURE() << "allocation " << n << ": no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.message();
        EXPECT_NE(e.message().find("cpu scratch"), std::string::npos) << e.message();
      }
      fault::configure("");
      ops::attention(ctx, q, k, v, 0.125f, out);
      test::expect_close(out, ref::attention(q, k, v, 0.125f), bf16 ? 2e-2 : 1e-5, bf16 ? 2e-2 : 1e-4);
    }
  }
}

// oneDNN's path chunks the scores to the work limit.
TEST(AttentionLargeTest, ThousandsOfTokensBoundedScratch) {
  ops::Context ctx;
  ctx.cpu().set_fused_attention(false);
  ctx.cpu().set_work_limit_bytes(size_t{8} << 20);
  const int64_t n = 1401, h = 2, d = 64;
  Tensor q = test::random_tensor({1, h, n, d}, 1), k = test::random_tensor({1, h, n, d}, 2);
  Tensor v = test::random_tensor({1, h, n, d}, 3), out = test::output_tensor({1, n, h, d});
  ops::attention(ctx, q, k, v, 0.125f, out);
  test::expect_close(out, ref::attention(q, k, v, 0.125f));
  EXPECT_GT(ctx.cpu().plans_created(), 1u);  // 8 MiB < h·n·n floats: the work was chunked
}

// oneDNN's brgemm matmul takes only dense batches: given a chunk's query rows of several heads in place, or the
// token-major output through strides, it falls back to gemm:jit, whose bf16 is far slower than brgemm on AMX. Where
// the CPU has bf16 kernels, a bf16 model's two products run on brgemm — at DA2-L's shape, whose 8 MiB chunks are
// 16 heads of 95 rows, and with one head. (f32 keeps the strided operands: gemm:jit is as fast there.)
TEST(AttentionImplTest, Bf16ProductsRunOnBrgemm) {
  const CpuInfo info = cpu_info();
  if (!info.bf16) GTEST_SKIP() << "no oneDNN bf16 kernels on this CPU; isa " << info.isa;
  ops::Context ctx;
  ctx.cpu().set_work_limit_bytes(size_t{8} << 20);
  for (const int64_t heads : {16, 1}) {
    const std::string impls = cpu::attention_impls(ctx.cpu(), heads, 1370, 1370, 64, true);
    EXPECT_EQ(impls.find("gemm:jit"), std::string::npos) << heads << " heads: " << impls;
    EXPECT_NE(impls.find("brg"), std::string::npos) << impls;
  }
}

TEST(AttentionErrorTest, HeadDimMismatchNamed) {
  ops::Context ctx;
  Tensor q = test::random_tensor({1, 2, 3, 8}, 1, 1.f, "blk.q"), k = test::random_tensor({1, 2, 3, 4}, 2, 1.f, "blk.k");
  Tensor v = test::random_tensor({1, 2, 3, 4}, 3), out = test::output_tensor({1, 3, 2, 8});
  try {
    ops::attention(ctx, q, k, v, 1.f, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("blk.k"), std::string::npos) << e.message();
  }
}

// attention_qkv on a fused projection [B, N, 3·H·D] is attention() on its split heads, bit for bit.
TEST(AttentionQkvTest, EqualsAttentionOnTheSplitHeads) {
  for (auto [b, n, h, d] : {std::array<int64_t, 4>{1, 37, 6, 64}, {2, 5, 3, 16}, {1, 1, 1, 8}}) {
    SCOPED_TRACE(std::to_string(b) + "x" + std::to_string(n) + " h" + std::to_string(h) + " d" + std::to_string(d));
    ops::Context ctx;
    Tensor qkv = test::random_tensor({b, n, 3 * h * d}, 7, 1.f, "qkv");
    Tensor split = test::output_tensor({3, b, h, n, d});
    ops::permute(ctx, qkv.reshape({b, n, 3, h, d}), {2, 0, 3, 1, 4}, split);
    const Shape hs{b, h, n, d};
    Tensor want = test::output_tensor({b, n, h, d}), got = test::output_tensor({b, n, h, d});
    const float scale = 1.f / std::sqrt(static_cast<float>(d));
    ops::attention(ctx, split.slice0(0, 1).reshape(hs), split.slice0(1, 2).reshape(hs),
                   split.slice0(2, 3).reshape(hs), scale, want);
    ops::attention_qkv(ctx, qkv, h, scale, got);
    ASSERT_EQ(std::memcmp(got.raw(), want.raw(), want.nbytes()), 0);
    test::expect_close(got, ref::attention(split.slice0(0, 1).reshape(hs), split.slice0(1, 2).reshape(hs),
                                           split.slice0(2, 3).reshape(hs), scale));
  }
}

TEST(AttentionQkvTest, BadShapesAreNamed) {
  ops::Context ctx;
  Tensor qkv = test::random_tensor({1, 4, 3 * 2 * 8}, 1, 1.f, "blk.qkv");
  Tensor out = test::output_tensor({1, 4, 2, 8}), wrong = test::output_tensor({1, 4, 2, 7});
  for (auto [heads, o] : {std::pair<int64_t, Tensor*>{5, &out}, {0, &out}, {2, &wrong}}) {
    try {
      ops::attention_qkv(ctx, qkv, heads, 1.f, *o);
      ADD_FAILURE() << "no error for " << heads << " heads";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find(heads == 2 ? "out" : "blk.qkv"), std::string::npos) << e.message();
    }
  }
}

// attention_qkv_rows: a chunk's queries against every token's keys and values are those rows of attention_qkv,
// bit for bit (the rows of one image apart: [b, row0 : row0 + nq]); with f32 and with bf16 products (a bf16 model).
TEST(AttentionQkvRowsTest, EqualsTheRowsOfTheWhole) {
  for (auto [b, n, h, d, bf16] :
       {std::array<int64_t, 5>{1, 37, 6, 64, 0}, {2, 21, 3, 16, 0}, {1, 37, 6, 64, 1}, {2, 21, 3, 16, 1}}) {
    if (bf16 && !cpu::bf16_support().refusal.empty()) continue;
    ops::Context ctx;
    ctx.cpu().set_bf16_products(bf16 != 0);
    Tensor qkv = test::random_tensor({b, n, 3 * h * d}, 11, 1.f, "qkv");
    Tensor whole = test::output_tensor({b, n, h, d});
    const float scale = 1.f / std::sqrt(static_cast<float>(d));
    ops::attention_qkv(ctx, qkv, h, scale, whole);
    for (auto [row0, nq] : {std::pair<int64_t, int64_t>{0, 5}, {5, n - 5}, {n - 1, 1}, {3, 0}, {0, n}}) {
      SCOPED_TRACE(str_cat(b, "x", n, " h", h, bf16 ? " bf16" : "", " rows [", row0, ", ", row0 + nq, ")"));
      Tensor got = test::output_tensor({b, nq, h, d});
      ops::attention_qkv_rows(ctx, qkv, h, scale, row0, got);
      const size_t row_bytes = static_cast<size_t>(h * d) * sizeof(float);
      for (int64_t i = 0; i < b; ++i)
        ASSERT_EQ(std::memcmp(static_cast<const char*>(got.raw()) + i * nq * row_bytes,
                              static_cast<const char*>(whole.raw()) + (i * n + row0) * row_bytes, nq * row_bytes),
                  0)
            << "image " << i;
    }
  }
}

TEST(AttentionQkvRowsTest, RowsOutsideTheSequenceAreRefused) {
  ops::Context ctx;
  Tensor qkv = test::random_tensor({1, 6, 3 * 2 * 8}, 1, 1.f, "blk.qkv");
  for (auto [row0, nq] : {std::pair<int64_t, int64_t>{-1, 2}, {5, 2}, {7, 0}, {0, 7}}) {
    Tensor out = test::output_tensor({1, nq, 2, 8});
    try {
      ops::attention_qkv_rows(ctx, qkv, 2, 1.f, row0, out);
      ADD_FAILURE() << "no error for rows [" << row0 << ", " << row0 + nq << ")";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find("not within the 6 tokens of qkv 'blk.qkv'"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
}  // namespace dacpp
