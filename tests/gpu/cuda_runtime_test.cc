// The CUDA backend's runtime: context and activation dtype, copies and casts across residencies, weight upload,
// the caching allocator and device arena, residency and dtype refusals, the kernel probe, every CUDA fault site
// (typed error, context usable afterwards) and a real out-of-memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>

#include "backends/cuda/cuda_context.h"
#include "backends/cuda/tma_map.h"
#include "core/arena.h"
#include "core/fault.h"
#include "gpu/nn_cuda_test_util.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/lanes.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"

namespace dacpp {
namespace {

class CudaRuntimeTest : public nntest::CudaOpTest, public ::testing::Test {
 protected:
  void SetUp() override { open_context(); }
  void TearDown() override { fault::configure(""); }

  // Runs `call`, expects Error{code} whose message contains every string in `parts`.
  static void expect_error(ErrorCode code, const std::vector<std::string>& parts, const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.message();
      for (const std::string& p : parts) EXPECT_NE(e.message().find(p), std::string::npos) << p << " in " << e.message();
    }
  }

  // A small GELU on the device checked against the CPU: proves the context still works.
  void expect_context_usable() {
    Tensor x = test::random_tensor({4, 64}, 21, 1.f, "x");
    Tensor xd = to_device(x, DType::F32), y = nan_output({4, 64}, DType::F32);
    ops::unary(ctx(), ops::Unary::Gelu, xd, y);
    ops::Context cpu(Device::cpu(), 1);
    Tensor want = test::output_tensor({4, 64});
    ops::unary(cpu, ops::Unary::Gelu, x, want);
    expect_close(y, want, DType::F32, "context usable");
  }
};

TEST_F(CudaRuntimeTest, ContextReportsDeviceAndActivationDtype) {
  if (IsSkipped()) return;
  EXPECT_EQ(ctx().act_dtype(), DType::F32);
  const std::string d = cuda::describe(ctx().cuda());
  EXPECT_NE(d.find("sm_"), std::string::npos) << d;
  ops::Context bf(Device::cuda(0), 1, 16, DType::BF16);
  EXPECT_EQ(bf.act_dtype(), DType::BF16);
  expect_error(ErrorCode::InvalidArgument, {"i8"}, [] { ops::Context bad(Device::cuda(0), 1, 16, DType::I8); });
  expect_error(ErrorCode::Backend, {"cuda:4096"}, [] { ops::Context bad(Device::cuda(4096), 1, 16); });
  ops::Context cpu(Device::cpu(), 1);
  expect_error(ErrorCode::Backend, {"cpu"}, [&] { cpu.cuda(); });
}

TEST_F(CudaRuntimeTest, CopyRoundTripsEveryResidencyPair) {
  if (IsSkipped()) return;
  Tensor h = test::random_tensor({3, 5, 7}, 22, 1.f, "h");
  Tensor d1 = cuda::empty(ctx().cuda(), h.shape(), DType::F32, "d1");
  Tensor d2 = cuda::empty(ctx().cuda(), h.shape(), DType::F32, "d2");
  Tensor back = test::output_tensor(h.shape()), h2 = test::output_tensor(h.shape());
  ops::copy(ctx(), h, d1);     // h2d
  ops::copy(ctx(), d1, d2);    // d2d
  ops::copy(ctx(), d2, back);  // d2h
  ops::copy(ctx(), back, h2);  // h2h
  EXPECT_EQ(test::diff(back, h).max_abs, 0.0);
  EXPECT_EQ(test::diff(h2, h).max_abs, 0.0);
  Tensor wrong = test::output_tensor({3, 5, 6});
  expect_error(ErrorCode::InvalidArgument, {"dst"}, [&] { ops::copy(ctx(), d1, wrong); });
  int fake = 0;
  Tensor other = Tensor::view(&fake, h.shape(), DType::F32, Device::cuda(1), nullptr, "other.gpu");
  expect_error(ErrorCode::Backend, {"other.gpu", "cuda:1"}, [&] { ops::copy(ctx(), h, other); });
}

TEST_F(CudaRuntimeTest, CastBetweenFloatTypes) {
  if (IsSkipped()) return;
  Tensor h = test::random_tensor({1000}, 23, 4.f, "h");
  Tensor f32 = cuda::upload(ctx().cuda(), h, DType::F32);
  Tensor bf = cuda::empty(ctx().cuda(), h.shape(), DType::BF16, "bf");
  Tensor f16 = cuda::empty(ctx().cuda(), h.shape(), DType::F16, "f16");
  Tensor back = cuda::empty(ctx().cuda(), h.shape(), DType::F32, "back");
  ops::cast(ctx(), f32, bf);
  ops::cast(ctx(), bf, f16);
  ops::cast(ctx(), f16, back);
  const test::Diff d = test::diff(to_host(back), h);
  EXPECT_LE(d.rel_l2, 1e-2);
  EXPECT_GT(d.max_abs, 0.0);  // bf16 really rounded
  // Upload straight to bf16 equals the device cast of the f32 upload.
  Tensor bf_up = cuda::upload(ctx().cuda(), h, DType::BF16);
  EXPECT_EQ(test::diff(to_host(bf_up), to_host(bf)).max_abs, 0.0);
  EXPECT_EQ(bf_up.name(), "h");
  EXPECT_EQ(bf_up.device(), Device::cuda(0));
  expect_error(ErrorCode::InvalidArgument, {"i32"}, [&] {
    Tensor i = cuda::empty(ctx().cuda(), h.shape(), DType::I32, "i");
    ops::cast(ctx(), f32, i);
  });
}

TEST_F(CudaRuntimeTest, AllocatorReusesFreedBlocksAndAligns) {
  if (IsSkipped()) return;
  void* first = nullptr;
  {
    Tensor t = cuda::empty(ctx().cuda(), {1000}, DType::F32, "t");
    first = t.raw();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 256, 0u);
  }
  const cuda::MemoryStats before = cuda::memory_stats(ctx().cuda());
  EXPECT_GE(before.cached_bytes, 4000u);
  Tensor again = cuda::empty(ctx().cuda(), {1000}, DType::F32, "again");
  EXPECT_EQ(again.raw(), first);  // same size class, served from the cache
  const cuda::MemoryStats after = cuda::memory_stats(ctx().cuda());
  EXPECT_EQ(after.live_bytes, before.live_bytes + 4096);  // 4000 bytes round to 4096
  EXPECT_EQ(after.cached_bytes, before.cached_bytes - 4096);
  cuda::release_cached(ctx().cuda());
  EXPECT_EQ(cuda::memory_stats(ctx().cuda()).cached_bytes, 0u);
  HostArena arena = cuda::make_arena(ctx().cuda(), size_t{1} << 20);
  EXPECT_EQ(arena.device(), Device::cuda(0));
  Tensor a = arena.alloc({3}, DType::F32, "a"), b = arena.alloc({70}, DType::BF16, "b");
  EXPECT_EQ(a.device(), Device::cuda(0));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw()) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw()) % 256, 0u);
  Tensor h = test::random_tensor({3}, 24, 1.f, "h"), back = test::output_tensor({3});
  ops::copy(ctx(), h, a);
  ops::copy(ctx(), a, back);
  EXPECT_EQ(test::diff(back, h).max_abs, 0.0);
}

// Lanes (ops::Lanes): outside a capture every lane is the context's stream, in order; during a capture lanes 1..n-1
// get streams of their own (parallel branches of the graph) and are joined back. Both give the serial result, with
// a GEMM on a side lane (its own cuBLASLt workspace) and a lane left for ~Lanes to join. An error inside a lane
// during a capture unwinds to a clean abort and a usable context; DACPP_LANES=0 and the CPU give one lane.
TEST_F(CudaRuntimeTest, LanesBranchInACaptureAndJoinBack) {
  if (IsSkipped()) return;
  cuda::CudaContext& c = ctx().cuda();
  Tensor xh = test::random_tensor({64, 96}, 31, 1.f, "x"), wh = test::random_tensor({128, 96}, 32, 0.1f, "w");
  Tensor bh = test::random_tensor({128}, 33, 0.1f, "b");
  Tensor x = to_device(xh, DType::F32), w = to_device(wh, DType::F32), b = to_device(bh, DType::F32);
  Tensor g = nan_output({64, 96}, DType::F32, "g"), r = nan_output({64, 96}, DType::F32, "r");
  Tensor l = nan_output({64, 128}, DType::F32, "l"), sum = nan_output({64, 96}, DType::F32, "sum");
  Tensor out = nan_output({64, 128}, DType::F32, "out");
  const auto enqueue = [&] {
    {
      ops::Lanes lanes(ctx(), 3);
      EXPECT_EQ(lanes.count(), 3);
      {
        const auto on = lanes.on(1);
        ops::unary(ctx(), ops::Unary::Gelu, x, g);
      }
      {
        const auto on = lanes.on(2);
        ops::linear(ctx(), x, w, b, l);  // joined only when `lanes` ends
      }
      ops::unary(ctx(), ops::Unary::Relu, x, r);
      lanes.join(1);
      ops::add(ctx(), g, r, sum);
    }
    ops::unary(ctx(), ops::Unary::Relu, l, out);
  };
  ops::Context cpu(Device::cpu(), 1);
  Tensor gw = test::output_tensor({64, 96}), rw = test::output_tensor({64, 96}), sw = test::output_tensor({64, 96});
  Tensor lw = test::output_tensor({64, 128}), ow = test::output_tensor({64, 128});
  ops::unary(cpu, ops::Unary::Gelu, xh, gw);
  ops::unary(cpu, ops::Unary::Relu, xh, rw);
  ops::add(cpu, gw, rw, sw);
  ops::linear(cpu, xh, wh, bh, lw);
  ops::unary(cpu, ops::Unary::Relu, lw, ow);

  enqueue();  // eager: the lanes' scratch and workspaces are made here, before any capture
  expect_close(sum, sw, DType::F32, "eager lanes: sum");
  expect_close(out, ow, DType::F32, "eager lanes: out");
  for (Tensor* t : {&g, &r, &l, &sum, &out}) *t = nan_output(t->shape(), DType::F32, t->name());
  cuda::begin_capture(c);
  enqueue();
  cuda::GraphPtr graph = cuda::end_capture(c);  // Backend (unjoined work) if a lane had not been joined back
  cuda::launch(c, *graph);
  expect_close(sum, sw, DType::F32, "captured lanes: sum");
  expect_close(out, ow, DType::F32, "captured lanes: out");

  cuda::begin_capture(c);
  try {
    ops::Lanes lanes(ctx(), 3);
    const auto on = lanes.on(2);
    ops::unary(ctx(), ops::Unary::Gelu, x, g);
    DACPP_THROW(ErrorCode::Internal, "thrown inside lane 2");
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("lane 2"), std::string::npos);
    cuda::abort_capture(c);
  }
  expect_context_usable();
  ops::Lanes again(ctx(), 2);  // the aborted fork left no lanes behind
  EXPECT_EQ(again.count(), 2);

  ASSERT_EQ(setenv("DACPP_LANES", "0", 1), 0);
  ops::Context off(Device::cuda(0), 1);
  ASSERT_EQ(unsetenv("DACPP_LANES"), 0);
  EXPECT_EQ(ops::Lanes(off, 4).count(), 1);
  EXPECT_EQ(ops::Lanes(cpu, 4).count(), 1);
}

// Node priorities (CudaContext::fork_lanes): a capture whose fork asks for lane 0 first is instantiated to keep its
// kernels' stream priorities — lane 0's kernels above the side lane's — and replays to the serial result; a fork
// that does not ask, a later capture without a fork, and DACPP_LANE_PRIORITY=0 keep none.
TEST_F(CudaRuntimeTest, LaneZeroFirstKeepsNodePriorities) {
  if (IsSkipped()) return;
  Tensor xh = test::random_tensor({64, 96}, 41, 1.f, "x");
  Tensor x = to_device(xh, DType::F32);
  Tensor g = nan_output({64, 96}, DType::F32, "g"), r = nan_output({64, 96}, DType::F32, "r");
  Tensor sum = nan_output({64, 96}, DType::F32, "sum");
  const auto enqueue = [&](ops::Context& on_ctx, bool lane0_first) {
    ops::Lanes lanes(on_ctx, 2, lane0_first);
    {
      const auto on = lanes.on(1);
      ops::unary(on_ctx, ops::Unary::Gelu, x, g);
    }
    ops::unary(on_ctx, ops::Unary::Relu, x, r);
    lanes.join(1);
    ops::add(on_ctx, g, r, sum);
  };
  ops::Context cpu(Device::cpu(), 1);
  Tensor gw = test::output_tensor({64, 96}), rw = test::output_tensor({64, 96}), sw = test::output_tensor({64, 96});
  ops::unary(cpu, ops::Unary::Gelu, xh, gw);
  ops::unary(cpu, ops::Unary::Relu, xh, rw);
  ops::add(cpu, gw, rw, sw);
  const auto capture = [&](ops::Context& on_ctx, bool lane0_first) {
    enqueue(on_ctx, lane0_first);  // eager first: the lanes' streams are made outside a capture
    cuda::begin_capture(on_ctx.cuda());
    enqueue(on_ctx, lane0_first);
    return cuda::end_capture(on_ctx.cuda());
  };
  int least = 0, greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);

  cuda::GraphPtr first = capture(ctx(), true);
  EXPECT_TRUE(cuda::keeps_node_priorities(*first));
  const std::vector<int> p = cuda::kernel_node_priorities(*first);
  ASSERT_FALSE(p.empty());
  if (least != greatest) {  // a GPU with stream priorities: the side lane's GELU below lane 0's ReLU and add
    EXPECT_EQ(std::count(p.begin(), p.end(), least), 1);
    EXPECT_EQ(std::count(p.begin(), p.end(), greatest), static_cast<std::ptrdiff_t>(p.size()) - 1);
  }
  for (Tensor* t : {&g, &r, &sum}) {  // NaN into the buffers the graph holds: the replay must rewrite them
    const Tensor nan = test::output_tensor(t->shape(), t->name());
    cuda::copy(ctx().cuda(), nan, *t);
  }
  cuda::launch(ctx().cuda(), *first);
  expect_close(sum, sw, DType::F32, "lane 0 first: sum");

  EXPECT_FALSE(cuda::keeps_node_priorities(*capture(ctx(), false)));
  cuda::begin_capture(ctx().cuda());
  ops::unary(ctx(), ops::Unary::Relu, x, r);
  EXPECT_FALSE(cuda::keeps_node_priorities(*cuda::end_capture(ctx().cuda())));

  ASSERT_EQ(setenv("DACPP_LANE_PRIORITY", "0", 1), 0);
  ops::Context off(Device::cuda(0), 1);
  ASSERT_EQ(unsetenv("DACPP_LANE_PRIORITY"), 0);
  EXPECT_FALSE(cuda::keeps_node_priorities(*capture(off, true)));
}

// Scratch generations: a buffer no graph capture saw is released when a larger one replaces it; one that a capture
// may have recorded (allocated before or during it) is kept for the context's life.
TEST_F(CudaRuntimeTest, ScratchKeepsOnlyBuffersACaptureMayUse) {
  if (IsSkipped()) return;
  cuda::CudaContext& c = ctx().cuda();
  constexpr size_t kMiB = size_t{1} << 20;
  c.scratch(1 * kMiB, "t");
  c.scratch(4 * kMiB, "t");  // replaces the 1 MiB buffer: no capture in between
  EXPECT_EQ(c.scratch_bytes(), 4 * kMiB);
  // cudaMalloc is not allowed while a stream is captured: the blocks the capture will ask for come from the cache.
  c.allocator().allocate_shared(8 * kMiB, "t").reset();
  c.allocator().allocate_shared(16 * kMiB, "t").reset();
  cuda::begin_capture(c);
  c.scratch(8 * kMiB, "t");   // the 4 MiB buffer predates the capture: kept
  c.scratch(16 * kMiB, "t");  // the 8 MiB one came during the capture: kept
  cuda::GraphPtr g = cuda::end_capture(c);
  EXPECT_EQ(c.scratch_bytes(), 28 * kMiB);
  c.scratch(32 * kMiB, "t");  // the 16 MiB one was current during the capture: kept
  EXPECT_EQ(c.scratch_bytes(), 60 * kMiB);
  c.scratch(64 * kMiB, "t");  // the 32 MiB one came after the capture ended: released
  EXPECT_EQ(c.scratch_bytes(), 92 * kMiB);
  c.scratch(10 * kMiB, "t");  // fits the current buffer
  EXPECT_EQ(c.scratch_bytes(), 92 * kMiB);
  expect_context_usable();
}

TEST_F(CudaRuntimeTest, HostWeightReachingCudaOpIsRefusedByName) {
  if (IsSkipped()) return;
  Tensor x = cuda::upload(ctx().cuda(), test::random_tensor({4, 8}, 25), DType::F32);
  Tensor w_host = test::random_tensor({6, 8}, 26, 1.f, "blocks.0.mlp.fc1.weight");
  Tensor y = cuda::empty(ctx().cuda(), {4, 6}, DType::F32, "y");
  expect_error(ErrorCode::Backend, {"blocks.0.mlp.fc1.weight", "cpu", "cuda:0"},
               [&] { ops::linear(ctx(), x, w_host, Tensor(), y); });
  Tensor g_host = test::random_tensor({8}, 27, 1.f, "norm.weight");
  Tensor b = cuda::upload(ctx().cuda(), test::random_tensor({8}, 28), DType::F32);
  Tensor y8 = cuda::empty(ctx().cuda(), {4, 8}, DType::F32, "y8");
  expect_error(ErrorCode::Backend, {"norm.weight", "cpu"}, [&] { ops::layer_norm(ctx(), x, g_host, b, 1e-6f, y8); });
  Tensor a_host = test::random_tensor({4, 8}, 29, 1.f, "a.host");
  expect_error(ErrorCode::Backend, {"a.host"}, [&] { ops::add(ctx(), a_host, x, y8); });
}

// Tensor maps (the wgmma conv's TMA feed): each layout the accelerator cannot describe is an InvalidArgument naming
// the map and the rule, checked before the driver is asked; a valid one encodes (the driver has the entry point).
TEST_F(CudaRuntimeTest, TensorMapRefusesBadLayoutsByName) {
  if (IsSkipped()) return;
  Tensor t = cuda::empty(ctx().cuda(), {64, 128}, DType::BF16, "t");
  const auto* base = static_cast<const unsigned char*>(t.raw());
  const auto bad = [&](const char* rule, const void* p, uint64_t cols, uint64_t rows, uint64_t row_bytes,
                       uint32_t box_cols, uint32_t box_rows) {
    expect_error(ErrorCode::InvalidArgument, {"test map", rule},
                 [&] { cuda::tma_map_2d(p, cols, rows, row_bytes, box_cols, box_rows, "test map"); });
  };
  bad("16-byte aligned", base + 2, 128, 64, 256, 64, 64);
  bad("dimension is 0", base, 0, 64, 256, 64, 64);
  bad("dimension is 0", base, 128, uint64_t{1} << 33, 256, 64, 64);
  bad("row stride", base, 128, 64, 250, 64, 64);
  bad("row stride", base, 128, 64, 128, 64, 64);
  bad("box dimension", base, 128, 64, 256, 64, 0);
  bad("box dimension", base, 128, 64, 256, 64, 300);
  bad("box row", base, 128, 64, 256, 128, 64);
  bad("box row", base, 128, 64, 256, 4, 64);
  const CUtensorMap map = cuda::tma_map_2d(base, 128, 64, 256, 64, 64, "test map");
  (void)map;
  // The driver refusing a valid layout (injected): a Backend error naming the map; the next encode works.
  fault::configure("tma.encode");
  expect_error(ErrorCode::Backend, {"tma.encode", "test map"},
               [&] { cuda::tma_map_2d(base, 128, 64, 256, 64, 64, "test map"); });
  fault::configure("");
  EXPECT_NO_THROW(cuda::tma_map_2d(base, 128, 64, 256, 64, 64, "test map"));
  expect_context_usable();
}

TEST_F(CudaRuntimeTest, MixedDtypesAreRefusedByName) {
  if (IsSkipped()) return;
  Tensor x = cuda::upload(ctx().cuda(), test::random_tensor({4, 8}, 30), DType::BF16);
  Tensor w = cuda::upload(ctx().cuda(), test::random_tensor({6, 8}, 31, 1.f, "w.f32"), DType::F32);
  Tensor y = cuda::empty(ctx().cuda(), {4, 6}, DType::BF16, "y");
  expect_error(ErrorCode::InvalidArgument, {"w.f32", "bf16"}, [&] { ops::linear(ctx(), x, w, Tensor(), y); });
  Tensor wb = cuda::upload(ctx().cuda(), test::random_tensor({6, 8}, 32), DType::BF16);
  Tensor bias_bf = cuda::upload(ctx().cuda(), test::random_tensor({6}, 33, 1.f, "bias.bf16"), DType::BF16);
  expect_error(ErrorCode::InvalidArgument, {"bias.bf16", "f32"}, [&] { ops::linear(ctx(), x, wb, bias_bf, y); });
  Tensor i8 = cuda::empty(ctx().cuda(), {4, 8}, DType::I8, "x.i8");
  Tensor y8 = cuda::empty(ctx().cuda(), {4, 8}, DType::I8, "y.i8");
  expect_error(ErrorCode::InvalidArgument, {"x.i8"}, [&] { ops::unary(ctx(), ops::Unary::Relu, i8, y8); });
}

TEST_F(CudaRuntimeTest, KernelProbeFindsEveryKernel) {
  if (IsSkipped()) return;
  EXPECT_NO_THROW(cuda::probe_all_kernels(ctx().cuda()));
}

TEST_F(CudaRuntimeTest, FaultDeviceAlloc) {
  if (IsSkipped()) return;
  fault::configure("device.alloc");
  expect_error(ErrorCode::OutOfMemory, {"device.alloc", "weights.x"},
               [&] { cuda::empty(ctx().cuda(), {16}, DType::F32, "weights.x"); });
  fault::configure("");
  expect_context_usable();
}

TEST_F(CudaRuntimeTest, FaultKernelProbe) {
  if (IsSkipped()) return;
  fault::configure("kernel.probe:3");
  expect_error(ErrorCode::Backend, {"kernel.probe", "has no image for sm_", "CMAKE_CUDA_ARCHITECTURES="},
               [&] { cuda::probe_all_kernels(ctx().cuda()); });
  fault::configure("");
  EXPECT_NO_THROW(cuda::probe_all_kernels(ctx().cuda()));
  expect_context_usable();
}

TEST_F(CudaRuntimeTest, FaultKernelLaunch) {
  if (IsSkipped()) return;
  Tensor x = cuda::upload(ctx().cuda(), test::random_tensor({4, 64}, 34), DType::F32);
  Tensor g = cuda::upload(ctx().cuda(), test::random_tensor({64}, 35), DType::F32);
  Tensor y = cuda::empty(ctx().cuda(), {4, 64}, DType::F32, "y");
  fault::configure("kernel.launch");
  expect_error(ErrorCode::Backend, {"kernel.launch", "layer_norm"}, [&] { ops::layer_norm(ctx(), x, g, g, 1e-6f, y); });
  fault::configure("");
  expect_context_usable();
}

TEST_F(CudaRuntimeTest, FaultBlasCall) {
  if (IsSkipped()) return;
  Tensor x = cuda::upload(ctx().cuda(), test::random_tensor({4, 8}, 36), DType::BF16);
  Tensor w = cuda::upload(ctx().cuda(), test::random_tensor({6, 8}, 37, 1.f, "fc.weight"), DType::BF16);
  Tensor y = cuda::empty(ctx().cuda(), {4, 6}, DType::BF16, "y");
  fault::configure("blas.call");
  expect_error(ErrorCode::Backend, {"blas.call", "fc.weight"}, [&] { ops::linear(ctx(), x, w, Tensor(), y); });
  fault::configure("");
  EXPECT_NO_THROW(ops::linear(ctx(), x, w, Tensor(), y));
  expect_context_usable();
}

TEST_F(CudaRuntimeTest, OutOfMemoryIsATypedErrorWithNumbers) {
  if (IsSkipped()) return;
  const int64_t tb = int64_t{1} << 40;
  expect_error(ErrorCode::OutOfMemory, {"asked 1099511627776 bytes", "free ", "huge"},
               [&] { cuda::empty(ctx().cuda(), {tb}, DType::I8, "huge"); });
  expect_context_usable();
}

}  // namespace
}  // namespace dacpp
