// Every CPU fault site (core/fault.h) driven while a loaded Model + Runner serve requests: the failing request
// gets a typed error whose message names the site, nothing leaks (the ASan build checks at exit), and the same
// Model and Runner then serve the next request with exactly the result they gave before the fault.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/attention_fused_cpu.h"
#include "backends/cpu/cpu_ops.h"
#include "core/error.h"
#include "core/fault.h"
#include "dacpp.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "io/image.h"
#include "io/writers.h"
#include "util/runner_options.h"
#include "util/scratch.h"

namespace dacpp {
namespace {

const std::string kModel = std::string(DACPP_FIXTURES_DIR) + "/tiny-da2.gguf";
const std::string kImage = std::string(DACPP_FIXTURES_DIR) + "/images/plain.jpg";

// Runs fn, which must throw Error{code} with "injected fault at <site>" in its message.
void expect_injected(const std::function<void()>& fn, ErrorCode code, const std::string& site) {
  try {
    fn();
    ADD_FAILURE() << "no error from the armed site " << site;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find("injected fault at " + site), std::string::npos) << e.what();
  }
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

class FaultSites : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fault::configure("");
    model_ = new std::shared_ptr<const Model>(Model::load(kModel));
    RunnerOptions ro;
    ro.threads = 1;
    runner_ = new Runner(*model_, ro);
    image_ = new io::Image(io::load_image(kImage));
    baseline_ = new std::vector<float>(values(runner_->run(*image_, options()).depth));
  }
  static void TearDownTestSuite() {
    delete baseline_;
    delete image_;
    delete runner_;
    delete model_;
  }
  void TearDown() override { fault::configure(""); }

  static RunOptions options() {
    RunOptions o;
    o.size = 42;
    return o;
  }
  // The disarmed Runner serves the next request exactly as before the fault.
  void expect_serves() {
    fault::configure("");
    const DepthResult r = runner_->run(*image_, options());
    EXPECT_EQ(values(r.depth), *baseline_) << "the runner's result changed after a fault";
  }

  static std::shared_ptr<const Model>* model_;
  static Runner* runner_;
  static io::Image* image_;
  static std::vector<float>* baseline_;
};

std::shared_ptr<const Model>* FaultSites::model_ = nullptr;
Runner* FaultSites::runner_ = nullptr;
io::Image* FaultSites::image_ = nullptr;
std::vector<float>* FaultSites::baseline_ = nullptr;

// Each host allocation of a warm run in turn (the arena's blocks are already there), until a run completes.
TEST_F(FaultSites, HostAllocDuringARun) {
  int fired = 0;
  for (int n = 1; n <= 64; ++n) {
    fault::configure("host.alloc:" + std::to_string(n));
    try {
      const DepthResult r = runner_->run(*image_, options());
      EXPECT_EQ(values(r.depth), *baseline_);
      break;
    } catch (const Error& e) {
      ++fired;
      EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.what();
      EXPECT_NE(std::string(e.what()).find("injected fault at host.alloc"), std::string::npos) << e.what();
    }
    expect_serves();
  }
  EXPECT_GE(fired, 2) << "a run makes at least its input and its output allocation";
  EXPECT_LT(fired, 64);
}

TEST_F(FaultSites, DnnlCallDuringARun) {
  for (int n : {1, 7, 40}) {  // the first op, one inside the backbone, one further on
    fault::configure("dnnl.call:" + std::to_string(n));
    expect_injected([&] { runner_->run(*image_, options()); }, ErrorCode::Backend, "dnnl.call");
    expect_serves();
  }
}

TEST_F(FaultSites, FileReadOfAModelAndOfAnImage) {
  fault::configure("file.read");
  expect_injected([] { Model::load(kModel); }, ErrorCode::Io, "file.read");
  expect_serves();
  fault::configure("file.read");
  expect_injected([] { io::load_image(kImage); }, ErrorCode::Io, "file.read");
  expect_serves();
  // The site fired once; the next load works and a runner over it agrees with the first.
  Runner other(Model::load(kModel), ::dacpp::testing::runner_options(1));
  EXPECT_EQ(values(other.run(*image_, options()).depth), *baseline_);
}

// A CPU without oneDNN bf16 kernels, simulated: loading in bf16 is Unsupported at load, nothing half-built; the next
// load works (where this CPU has the kernels).
TEST_F(FaultSites, Bf16OnACpuWithoutKernels) {
  LoadOptions lo;
  lo.precision = DType::BF16;
  fault::configure("cpu.bf16");
  expect_injected([&] { Model::load(kModel, lo); }, ErrorCode::Unsupported, "cpu.bf16");
  expect_serves();
  if (!cpu::bf16_support().refusal.empty()) return;
  Runner bf16(Model::load(kModel, lo), ::dacpp::testing::runner_options(1));
  EXPECT_EQ(bf16.run(*image_, options()).depth.numel(), static_cast<int64_t>(baseline_->size()));
}

// Every oneDNN call of a bf16 run in turn, attention's bf16 path among them: each fault is a Backend error naming the
// op, and the runner then serves the next request.
TEST_F(FaultSites, DnnlCallDuringABf16Run) {
  if (!cpu::bf16_support().refusal.empty()) GTEST_SKIP() << cpu::bf16_support().refusal;
  LoadOptions lo;
  lo.precision = DType::BF16;
  Runner bf16(Model::load(kModel, lo), ::dacpp::testing::runner_options(1));
  const std::vector<float> want = values(bf16.run(*image_, options()).depth);
  bool attention_hit = false;
  int n = 1;
  for (; n <= 400; ++n) {
    fault::configure("dnnl.call:" + std::to_string(n));
    try {
      bf16.run(*image_, options());
      break;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Backend) << e.what();
      EXPECT_NE(std::string(e.what()).find("injected fault at dnnl.call"), std::string::npos) << e.what();
      attention_hit = attention_hit || std::string(e.what()).find("attention:") != std::string::npos;
    }
    fault::configure("");
    EXPECT_EQ(values(bf16.run(*image_, options()).depth), want);
  }
  EXPECT_LT(n, 400) << "the run never completed";
  // The fused AVX512-BF16 attention kernel calls no oneDNN primitive; oneDNN's attention does.
  EXPECT_EQ(attention_hit, !cpu::fused_attention_fits(64, true));  // tiny-da2: head dim 64
}

TEST_F(FaultSites, FileMmapOfAModel) {
  fault::configure("file.mmap");
  expect_injected([] { Model::load(kModel); }, ErrorCode::Io, "file.mmap");
  expect_serves();
}

TEST_F(FaultSites, ImageDecode) {
  fault::configure("image.decode");
  expect_injected([] { io::load_image(kImage); }, ErrorCode::InvalidArgument, "image.decode");
  expect_serves();
  EXPECT_EQ(io::load_image(kImage).width(), image_->width());
}

TEST_F(FaultSites, OutputWriteLeavesNoFile) {
  const DepthResult r = runner_->run(*image_, options());
  const std::string path = ::dacpp::testing::scratch_path("fault_sites", "depth.pfm");
  std::remove(path.c_str());
  fault::configure("output.write");
  expect_injected([&] { io::write_pfm(path, r.depth.data<float>(), r.source_height, r.source_width); },
                  ErrorCode::Io, "output.write");
  EXPECT_FALSE(file_exists(path)) << "a failed write left " << path;
  expect_serves();
  io::write_pfm(path, r.depth.data<float>(), r.source_height, r.source_width);
  EXPECT_TRUE(file_exists(path));
  std::remove(path.c_str());
}

// The same through the C boundary: a status, the site in the runner's message, then a clean next request.
TEST_F(FaultSites, CApiReportsAndRecovers) {
  dacpp_model* m = nullptr;
  dacpp_runner* r = nullptr;
  fault::configure("file.mmap");
  EXPECT_EQ(dacpp_model_load(kModel.c_str(), nullptr, &m), DACPP_STATUS_IO);
  EXPECT_NE(std::string(dacpp_last_error()).find("injected fault at file.mmap"), std::string::npos);
  ASSERT_EQ(dacpp_model_load(kModel.c_str(), nullptr, &m), DACPP_STATUS_OK) << dacpp_last_error();
  dacpp_runner_params rp = dacpp_runner_default_params();
  rp.threads = 1;
  ASSERT_EQ(dacpp_runner_create(m, &rp, &r), DACPP_STATUS_OK) << dacpp_last_error();
  dacpp_run_params run = dacpp_run_default_params();
  run.size = 42;
  dacpp_result* res = nullptr;
  const struct {
    const char* spec;
    dacpp_status status;
  } cases[] = {{"host.alloc:2", DACPP_STATUS_OUT_OF_MEMORY},
               {"dnnl.call:5", DACPP_STATUS_BACKEND},
               {"file.read", DACPP_STATUS_IO},
               {"image.decode", DACPP_STATUS_INVALID_ARGUMENT}};
  for (const auto& c : cases) {
    fault::configure(c.spec);
    EXPECT_EQ(dacpp_run_file(r, kImage.c_str(), &run, &res), c.status) << c.spec;
    EXPECT_EQ(res, nullptr);
    EXPECT_NE(std::string(dacpp_runner_last_error(r)).find("injected fault at"), std::string::npos)
        << dacpp_runner_last_error(r);
    fault::configure("");
    ASSERT_EQ(dacpp_run_file(r, kImage.c_str(), &run, &res), DACPP_STATUS_OK) << dacpp_runner_last_error(r);
    dacpp_depth_view v;
    ASSERT_EQ(dacpp_result_view(res, &v), DACPP_STATUS_OK);
    EXPECT_EQ(std::vector<float>(v.depth.data, v.depth.data + baseline_->size()), *baseline_) << c.spec;
    dacpp_result_free(res);
  }
  dacpp_runner_free(r);
  dacpp_model_free(m);
}

}  // namespace
}  // namespace dacpp
