// Limits (engine/limits.h): each bound refuses an input over it with InvalidArgument naming the limit, and admits
// one at it.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/limits.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "io/image.h"

namespace dacpp {
namespace {

const std::string kModel = std::string(DACPP_FIXTURES_DIR) + "/tiny-da2.gguf";
const std::string kPng = std::string(DACPP_FIXTURES_DIR) + "/images/sample_small.png";  // 83×61

// The message of the InvalidArgument fn throws ("" and a test failure otherwise).
std::string refusal(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "not refused";
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Limits, EveryBoundMustBePositive) {
  EXPECT_NO_THROW(validate_limits(Limits{}));
  const std::vector<std::pair<std::function<void(Limits&)>, std::string>> edits = {
      {[](Limits& l) { l.max_pixels = 0; }, "max_pixels"},
      {[](Limits& l) { l.max_image_bytes = -1; }, "max_image_bytes"},
      {[](Limits& l) { l.max_process_size = 13; }, "max_process_size"},
      {[](Limits& l) { l.max_process_pixels = 195; }, "max_process_pixels"},
      {[](Limits& l) { l.max_views = 0; }, "max_views"},
      {[](Limits& l) { l.max_request_bytes = 0; }, "max_request_bytes"}};
  for (const auto& [edit, name] : edits) {
    Limits l;
    edit(l);
    EXPECT_TRUE(has(refusal([&] { validate_limits(l); }), name)) << name;
    EXPECT_TRUE(has(refusal([&] {
                      RunnerOptions ro;
                      ro.limits = l;
                      Runner r(Model::load(kModel), ro);
                    }),
                    name))
        << name;
  }
}

TEST(Limits, ViewCountAndRequestBytes) {
  Limits l;
  l.max_views = 3;
  l.max_request_bytes = 1000;
  EXPECT_NO_THROW(check_view_count(l, 3));
  EXPECT_TRUE(has(refusal([&] { check_view_count(l, 4); }), "4 views, over the limit of 3"));
  EXPECT_TRUE(has(refusal([&] { check_view_count(l, 0); }), "at least one"));
  EXPECT_NO_THROW(check_request_bytes(l, 1000));
  EXPECT_TRUE(has(refusal([&] { check_request_bytes(l, 1001); }), "max_request_bytes"));
}

TEST(Limits, PixelCountOverflowIsRefusedNotWrapped) {
  Limits l;
  EXPECT_TRUE(has(refusal([&] { check_pixel_limit(l, int64_t{1} << 40, int64_t{1} << 40, "raw"); }), "max_pixels"));
  EXPECT_TRUE(has(refusal([&] { check_pixel_limit(l, 0, 5, "raw"); }), "positive"));
}

TEST(Limits, RunnerChecksTheDecodedImageAndTheProcessedSize) {
  auto model = Model::load(kModel);
  RunnerOptions ro;
  ro.threads = 1;
  ro.limits.max_pixels = 40 * 30 - 1;
  ro.limits.max_process_size = 42;
  ro.limits.max_process_pixels = 42 * 56;
  Runner runner(model, ro);
  RunOptions o;
  o.size = 42;
  EXPECT_TRUE(has(refusal([&] { runner.run(io::Image(30, 40), o); }), "max_pixels"));
  EXPECT_EQ(runner.run(io::Image(30, 39), o).depth.numel(), 30 * 39);  // 42 × 56 after preprocessing
  EXPECT_TRUE(has(refusal([&] { runner.run(io::Image(20, 40), o); }), "max_process_pixels"));  // 42 × 84
  o.size = 56;
  EXPECT_TRUE(has(refusal([&] { runner.run(io::Image(30, 39), o); }), "max_process_size"));
  o.size = 0;  // the model's 518
  EXPECT_TRUE(has(refusal([&] { runner.run(io::Image(30, 39), o); }), "max_process_pixels"));
}

TEST(Limits, DecoderOptionsCarryTheImageBounds) {
  std::ifstream f(kPng, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
  Limits l;
  l.max_image_bytes = static_cast<int64_t>(bytes.size()) - 1;
  io::ImageLimits il = image_limits(l);
  EXPECT_TRUE(has(refusal([&] { io::load_image_from_memory(bytes.data(), bytes.size(), il, "png"); }),
                  "over the limit of"));
  EXPECT_TRUE(has(refusal([&] { io::load_image(kPng, il); }), "bytes"));
  l = Limits{};
  l.max_pixels = 83 * 61 - 1;
  il = image_limits(l, false);
  EXPECT_FALSE(il.apply_exif_orientation);
  EXPECT_TRUE(has(refusal([&] { io::load_image_from_memory(bytes.data(), bytes.size(), il, "png"); }), "5062"));
  l.max_pixels = 83 * 61;
  EXPECT_EQ(io::load_image_from_memory(bytes.data(), bytes.size(), image_limits(l), "png").width(), 83);
}

}  // namespace
}  // namespace dacpp
