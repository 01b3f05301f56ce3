// The C API through its C surface only (include/dacpp.h): status codes, messages that are kept and cleared, null
// pointers, every input form, and the limits a runner enforces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "dacpp.h"
#include "util/scratch.h"

namespace {

const std::string kModel = std::string(DACPP_FIXTURES_DIR) + "/tiny-da2.gguf";
const std::string kPng = std::string(DACPP_FIXTURES_DIR) + "/images/sample_small.png";  // 83×61
const std::string kJpeg = std::string(DACPP_FIXTURES_DIR) + "/images/plain.jpg";

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(f), {});
}

std::vector<unsigned char> pattern_rgb(int w, int h) {
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
  return px;
}

bool contains(const char* haystack, const std::string& needle) {
  return std::string(haystack).find(needle) != std::string::npos;
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    dacpp_model_params mp = dacpp_model_default_params();
    ASSERT_EQ(dacpp_model_load(kModel.c_str(), &mp, &model_), DACPP_STATUS_OK) << dacpp_last_error();
    params_ = dacpp_runner_default_params();
    params_.threads = 1;
    ASSERT_EQ(dacpp_runner_create(model_, &params_, &runner_), DACPP_STATUS_OK) << dacpp_last_error();
    run_ = dacpp_run_default_params();
    run_.size = 28;
  }
  void TearDown() override {
    dacpp_runner_free(runner_);
    dacpp_model_free(model_);
  }
  // A runner over the same model with other limits; the test frees it.
  dacpp_runner* runner_with(const dacpp_limits& limits) {
    dacpp_runner_params p = params_;
    p.limits = limits;
    dacpp_runner* r = nullptr;
    EXPECT_EQ(dacpp_runner_create(model_, &p, &r), DACPP_STATUS_OK) << dacpp_last_error();
    return r;
  }
  std::vector<float> depth_of(dacpp_result* res) {
    dacpp_depth_view v;
    EXPECT_EQ(dacpp_result_view(res, &v), DACPP_STATUS_OK);
    return std::vector<float>(v.depth.data, v.depth.data + static_cast<size_t>(v.depth.width) * v.depth.height);
  }

  dacpp_model* model_ = nullptr;
  dacpp_runner* runner_ = nullptr;
  dacpp_runner_params params_;
  dacpp_run_params run_;
};

TEST(CApiStatus, NamesMirrorTheErrorCodes) {
  EXPECT_STREQ(dacpp_status_name(DACPP_STATUS_OK), "DACPP_STATUS_OK");
  EXPECT_STREQ(dacpp_status_name(DACPP_STATUS_INVALID_MODEL), "DACPP_STATUS_INVALID_MODEL");
  EXPECT_STREQ(dacpp_status_name(DACPP_STATUS_INTERNAL), "DACPP_STATUS_INTERNAL");
  EXPECT_EQ(DACPP_STATUS_INTERNAL, 8);
  EXPECT_STREQ(dacpp_status_name(static_cast<dacpp_status>(42)), "DACPP_STATUS_UNKNOWN");
}

TEST(CApiLoad, ErrorsAreTypedKeptAndCleared) {
  dacpp_model* m = reinterpret_cast<dacpp_model*>(0x1);
  EXPECT_EQ(dacpp_model_load("/nonexistent/x.gguf", nullptr, &m), DACPP_STATUS_NOT_FOUND);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(contains(dacpp_last_error(), "/nonexistent/x.gguf")) << dacpp_last_error();

  const std::string empty = ::dacpp::testing::scratch_path("capi", "capi_empty.gguf");
  std::fclose(std::fopen(empty.c_str(), "wb"));
  EXPECT_EQ(dacpp_model_load(empty.c_str(), nullptr, &m), DACPP_STATUS_INVALID_MODEL);
  EXPECT_TRUE(contains(dacpp_last_error(), "capi_empty.gguf")) << dacpp_last_error();
  std::remove(empty.c_str());

  EXPECT_EQ(dacpp_model_load(nullptr, nullptr, &m), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_last_error(), "path is NULL")) << dacpp_last_error();
  EXPECT_EQ(dacpp_model_load(kModel.c_str(), nullptr, nullptr), DACPP_STATUS_INVALID_ARGUMENT);

  dacpp_model_params mp = dacpp_model_default_params();
  mp.device = "cuda:0";
  if (DACPP_TESTS_CUDA_BUILD) {
    // A CUDA build loads onto a usable GPU; without one (no device, no driver) the error names the device.
    const dacpp_status st = dacpp_model_load(kModel.c_str(), &mp, &m);
    if (st == DACPP_STATUS_OK) {
      dacpp_model_free(m);
      m = nullptr;
    } else {
      EXPECT_EQ(st, DACPP_STATUS_BACKEND) << dacpp_last_error();
      EXPECT_TRUE(contains(dacpp_last_error(), "cuda:0")) << dacpp_last_error();
    }
  } else {
    EXPECT_EQ(dacpp_model_load(kModel.c_str(), &mp, &m), DACPP_STATUS_UNSUPPORTED);
    EXPECT_TRUE(contains(dacpp_last_error(), "cuda:0")) << dacpp_last_error();
  }
  mp.device = "tpu";
  EXPECT_EQ(dacpp_model_load(kModel.c_str(), &mp, &m), DACPP_STATUS_INVALID_ARGUMENT);

  mp.device = nullptr;
  ASSERT_EQ(dacpp_model_load(kModel.c_str(), &mp, &m), DACPP_STATUS_OK);
  EXPECT_STREQ(dacpp_last_error(), "");  // cleared by the success
  dacpp_model_info info;
  ASSERT_EQ(dacpp_model_get_info(m, &info), DACPP_STATUS_OK);
  EXPECT_STREQ(info.kind, "DA2");
  EXPECT_EQ(info.default_size, 518);
  EXPECT_EQ(info.patch_size, 14);
  EXPECT_EQ(info.has_sky, 0);
  EXPECT_STREQ(info.device, "cpu");
  EXPECT_STREQ(info.precision, "f32");  // the CPU's default
  EXPECT_EQ(dacpp_model_get_info(nullptr, &info), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_model_get_info(m, nullptr), DACPP_STATUS_INVALID_ARGUMENT);
  dacpp_model_free(m);
  dacpp_model_free(nullptr);
}

TEST(CApiLoad, PrecisionOnTheCpu) {
  dacpp_model_params mp = dacpp_model_default_params();
  EXPECT_EQ(mp.precision, nullptr);  // the device's default
  dacpp_model* m = nullptr;
  mp.precision = "f16";
  EXPECT_EQ(dacpp_model_load(kModel.c_str(), &mp, &m), DACPP_STATUS_UNSUPPORTED);
  EXPECT_TRUE(contains(dacpp_last_error(), "precision f16 on the CPU")) << dacpp_last_error();
  mp.precision = "fp8";
  EXPECT_EQ(dacpp_model_load(kModel.c_str(), &mp, &m), DACPP_STATUS_INVALID_ARGUMENT);
  mp.precision = "bf16";
  const dacpp_status st = dacpp_model_load(kModel.c_str(), &mp, &m);
  if (!::dacpp::cpu::bf16_support().refusal.empty()) {
    EXPECT_EQ(st, DACPP_STATUS_UNSUPPORTED) << dacpp_last_error();
    return;
  }
  ASSERT_EQ(st, DACPP_STATUS_OK) << dacpp_last_error();
  dacpp_model_info info;
  ASSERT_EQ(dacpp_model_get_info(m, &info), DACPP_STATUS_OK);
  EXPECT_STREQ(info.precision, "bf16");
  dacpp_model_free(m);
}

TEST(CApiRunner, CreateValidatesItsArguments) {
  dacpp_model* m = nullptr;
  ASSERT_EQ(dacpp_model_load(kModel.c_str(), nullptr, &m), DACPP_STATUS_OK);
  dacpp_runner* r = reinterpret_cast<dacpp_runner*>(0x1);
  EXPECT_EQ(dacpp_runner_create(nullptr, nullptr, &r), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(dacpp_runner_create(m, nullptr, nullptr), DACPP_STATUS_INVALID_ARGUMENT);
  dacpp_runner_params p = dacpp_runner_default_params();
  p.limits.max_pixels = 0;
  EXPECT_EQ(dacpp_runner_create(m, &p, &r), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_last_error(), "max_pixels")) << dacpp_last_error();
  p = dacpp_runner_default_params();
  p.pos_cache_capacity = 0;
  EXPECT_EQ(dacpp_runner_create(m, &p, &r), DACPP_STATUS_INVALID_ARGUMENT);
  p = dacpp_runner_default_params();
  p.limits.max_views = -1;
  EXPECT_EQ(dacpp_runner_create(m, &p, &r), DACPP_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(dacpp_runner_create(m, nullptr, &r), DACPP_STATUS_OK);
  dacpp_model_free(m);  // the runner keeps the model
  std::vector<unsigned char> px = pattern_rgb(20, 16);
  dacpp_run_params run = dacpp_run_default_params();
  run.size = 28;
  dacpp_result* res = nullptr;
  EXPECT_EQ(dacpp_run_rgb(r, px.data(), 20, 16, 0, &run, &res), DACPP_STATUS_OK) << dacpp_runner_last_error(r);
  dacpp_result_free(res);
  dacpp_runner_free(r);
  dacpp_runner_free(nullptr);
}

TEST_F(CApi, RunRgbGivesDepthAtTheSourceSize) {
  std::vector<unsigned char> px = pattern_rgb(50, 34);
  dacpp_result* res = nullptr;
  ASSERT_EQ(dacpp_run_rgb(runner_, px.data(), 50, 34, 0, &run_, &res), DACPP_STATUS_OK)
      << dacpp_runner_last_error(runner_);
  dacpp_depth_view v;
  ASSERT_EQ(dacpp_result_view(res, &v), DACPP_STATUS_OK);
  EXPECT_EQ(v.depth.width, 50);
  EXPECT_EQ(v.depth.height, 34);
  EXPECT_EQ(v.source_width, 50);
  EXPECT_EQ(v.processed_height, 28);  // DA2: the shorter side becomes the size
  EXPECT_EQ(v.processed_width % 14, 0);
  EXPECT_STREQ(v.units, "relative-disparity");
  EXPECT_EQ(v.sky.data, nullptr);
  EXPECT_EQ(v.confidence.data, nullptr);
  float lo = v.depth.data[0], hi = v.depth.data[0];
  for (int i = 0; i < 50 * 34; ++i) {
    ASSERT_TRUE(std::isfinite(v.depth.data[i]));
    lo = std::min(lo, v.depth.data[i]);
    hi = std::max(hi, v.depth.data[i]);
  }
  EXPECT_LT(lo, hi) << "a constant depth map";
  dacpp_result_free(res);
  EXPECT_EQ(dacpp_result_view(nullptr, &v), DACPP_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApi, RowStrideSkipsPadding) {
  const int w = 30, h = 20;
  std::vector<unsigned char> packed = pattern_rgb(w, h);
  const size_t stride = w * 3 + 5;
  std::vector<unsigned char> padded(stride * h, 0xEE);
  for (int y = 0; y < h; ++y) std::copy_n(&packed[y * w * 3], w * 3, &padded[y * stride]);
  dacpp_result *a = nullptr, *b = nullptr;
  ASSERT_EQ(dacpp_run_rgb(runner_, packed.data(), w, h, 0, &run_, &a), DACPP_STATUS_OK);
  ASSERT_EQ(dacpp_run_rgb(runner_, padded.data(), w, h, stride, &run_, &b), DACPP_STATUS_OK);
  EXPECT_EQ(depth_of(a), depth_of(b));
  dacpp_result_free(a);
  dacpp_result_free(b);
  EXPECT_EQ(dacpp_run_rgb(runner_, packed.data(), w, h, w * 3 - 1, &run_, &a), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(runner_), "row_stride")) << dacpp_runner_last_error(runner_);
}

TEST_F(CApi, FileAndEncodedBufferAgree) {
  dacpp_result *a = nullptr, *b = nullptr;
  ASSERT_EQ(dacpp_run_file(runner_, kPng.c_str(), &run_, &a), DACPP_STATUS_OK) << dacpp_runner_last_error(runner_);
  const std::vector<unsigned char> bytes = read_bytes(kPng);
  ASSERT_EQ(dacpp_run_encoded(runner_, bytes.data(), bytes.size(), &run_, &b), DACPP_STATUS_OK)
      << dacpp_runner_last_error(runner_);
  const std::vector<float> da = depth_of(a);
  EXPECT_EQ(da.size(), 83u * 61u);
  EXPECT_EQ(da, depth_of(b));
  dacpp_result_free(a);
  dacpp_result_free(b);
}

TEST_F(CApi, RunErrorsAreKeptPerRunnerAndClearedBySuccess) {
  dacpp_result* res = reinterpret_cast<dacpp_result*>(0x1);
  EXPECT_EQ(dacpp_run_file(runner_, "/nonexistent/p.jpg", &run_, &res), DACPP_STATUS_NOT_FOUND);
  EXPECT_EQ(res, nullptr);
  EXPECT_TRUE(contains(dacpp_runner_last_error(runner_), "/nonexistent/p.jpg"));
  const unsigned char junk[] = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'};
  EXPECT_EQ(dacpp_run_encoded(runner_, junk, sizeof(junk), &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(runner_), "cannot decode")) << dacpp_runner_last_error(runner_);
  EXPECT_EQ(dacpp_run_encoded(runner_, junk, 0, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  dacpp_run_params bad = run_;
  bad.size = 5;
  EXPECT_EQ(dacpp_run_file(runner_, kJpeg.c_str(), &bad, &res), DACPP_STATUS_INVALID_ARGUMENT);
  bad = run_;
  bad.focal_px = 500;  // only for DA3 metric
  EXPECT_EQ(dacpp_run_file(runner_, kJpeg.c_str(), &bad, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(runner_), "focal_px"));
  ASSERT_EQ(dacpp_run_file(runner_, kJpeg.c_str(), nullptr, &res), DACPP_STATUS_OK);  // defaults: size 518
  EXPECT_STREQ(dacpp_runner_last_error(runner_), "");
  dacpp_result_free(res);
}

TEST_F(CApi, NullPointersAreInvalidArguments) {
  dacpp_result* res = nullptr;
  std::vector<unsigned char> px = pattern_rgb(8, 8);
  EXPECT_EQ(dacpp_run_rgb(nullptr, px.data(), 8, 8, 0, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_last_error(), "runner is NULL")) << dacpp_last_error();
  EXPECT_EQ(dacpp_run_rgb(runner_, nullptr, 8, 8, 0, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_rgb(runner_, px.data(), 8, 8, 0, &run_, nullptr), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_file(runner_, nullptr, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_file(nullptr, kPng.c_str(), &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_encoded(runner_, nullptr, 10, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_encoded(nullptr, px.data(), 10, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_rgb(runner_, px.data(), 0, 8, 0, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dacpp_run_rgb(runner_, px.data(), 8, -3, 0, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(res, nullptr);
  EXPECT_STRNE(dacpp_runner_last_error(nullptr), "");
}

TEST_F(CApi, PixelLimitRefusesEveryInputForm) {
  dacpp_limits l = params_.limits;
  l.max_pixels = 83 * 61 - 1;
  dacpp_runner* r = runner_with(l);
  ASSERT_NE(r, nullptr);
  dacpp_result* res = nullptr;
  EXPECT_EQ(dacpp_run_file(r, kPng.c_str(), &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);  // from the header
  EXPECT_TRUE(contains(dacpp_runner_last_error(r), "over the limit of 5062 pixels")) << dacpp_runner_last_error(r);
  const std::vector<unsigned char> bytes = read_bytes(kPng);
  EXPECT_EQ(dacpp_run_encoded(r, bytes.data(), bytes.size(), &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  std::vector<unsigned char> px = pattern_rgb(83, 61);
  EXPECT_EQ(dacpp_run_rgb(r, px.data(), 83, 61, 0, &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(r), "max_pixels")) << dacpp_runner_last_error(r);
  EXPECT_EQ(dacpp_run_rgb(r, px.data(), 82, 61, 0, &run_, &res), DACPP_STATUS_OK);  // one column less fits
  dacpp_result_free(res);
  dacpp_runner_free(r);
}

TEST_F(CApi, ImageBytesLimitRefusesFilesAndBuffers) {
  const std::vector<unsigned char> bytes = read_bytes(kPng);
  dacpp_limits l = params_.limits;
  l.max_image_bytes = bytes.size() - 1;
  dacpp_runner* r = runner_with(l);
  ASSERT_NE(r, nullptr);
  dacpp_result* res = nullptr;
  EXPECT_EQ(dacpp_run_file(r, kPng.c_str(), &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(r), "bytes")) << dacpp_runner_last_error(r);
  EXPECT_EQ(dacpp_run_encoded(r, bytes.data(), bytes.size(), &run_, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(r), "over the limit")) << dacpp_runner_last_error(r);
  dacpp_runner_free(r);
}

TEST_F(CApi, ProcessSizeLimits) {
  dacpp_limits l = params_.limits;
  l.max_process_size = 42;
  l.max_process_pixels = 42 * 56;
  dacpp_runner* r = runner_with(l);
  ASSERT_NE(r, nullptr);
  std::vector<unsigned char> px = pattern_rgb(40, 30);  // DA2 at size s: s × round(40/30·s / 14)·14
  dacpp_run_params run = run_;
  dacpp_result* res = nullptr;
  run.size = 56;
  EXPECT_EQ(dacpp_run_rgb(r, px.data(), 40, 30, 0, &run, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(r), "max_process_size")) << dacpp_runner_last_error(r);
  run.size = 42;  // 42 × 56 fits exactly
  EXPECT_EQ(dacpp_run_rgb(r, px.data(), 40, 30, 0, &run, &res), DACPP_STATUS_OK) << dacpp_runner_last_error(r);
  dacpp_result_free(res);
  std::vector<unsigned char> wide = pattern_rgb(80, 30);  // 42 × 112: over max_process_pixels
  EXPECT_EQ(dacpp_run_rgb(r, wide.data(), 80, 30, 0, &run, &res), DACPP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(dacpp_runner_last_error(r), "max_process_pixels")) << dacpp_runner_last_error(r);
  run.size = 0;  // the model default (518) is over max_process_pixels too
  EXPECT_EQ(dacpp_run_rgb(r, px.data(), 40, 30, 0, &run, &res), DACPP_STATUS_INVALID_ARGUMENT);
  dacpp_runner_free(r);
}

}  // namespace
