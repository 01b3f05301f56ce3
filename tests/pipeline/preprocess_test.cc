// Preprocessing: the sizes each policy chooses, and whole-pipeline parity with the official Python
// (fixtures by scripts/gen_preprocess_refs.py from tests/fixtures/images/sample_small.png).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "io/image.h"
#include "pipeline/preprocess.h"
#include "util/npy_read.h"

namespace dacpp::pipeline {
namespace {

PreprocessOptions opts(PreprocessPolicy p, int target = 0) {
  PreprocessOptions o;
  o.policy = p;
  o.target = target;
  return o;
}

void expect_step(const ResizeStep& s, bool active, int h, int w, CvInterpolation interp, const char* what) {
  EXPECT_EQ(s.active, active) << what;
  if (!active) return;
  EXPECT_EQ(s.height, h) << what;
  EXPECT_EQ(s.width, w) << what;
  EXPECT_EQ(s.interp, interp) << what;
}

TEST(PreprocessPlan, Da3UpperBoundExamples) {
  const auto ub = opts(PreprocessPolicy::UpperBoundDa3);
  // spec/models.md §2a: 1200×1600 → 378×504, one INTER_AREA resize, already multiples of 14.
  ResizePlan p = plan_resize(1200, 1600, ub);
  EXPECT_EQ(p.height, 378);
  EXPECT_EQ(p.width, 504);
  expect_step(p.first, true, 378, 504, CvInterpolation::Area, "1200x1600 first");
  expect_step(p.second, false, 0, 0, CvInterpolation::Area, "1200x1600 second");
  // Issue #121: with process_res 640 a 640 side goes to 644 (nearest multiple, enlarging → INTER_CUBIC).
  p = plan_resize(480, 640, opts(PreprocessPolicy::UpperBoundDa3, 640));
  expect_step(p.first, false, 0, 0, CvInterpolation::Cubic, "640 first");
  expect_step(p.second, true, 476, 644, CvInterpolation::Cubic, "640 second");
  // A small image is enlarged with INTER_CUBIC, then shrunk to the nearest multiple with INTER_AREA.
  p = plan_resize(61, 83, opts(PreprocessPolicy::UpperBoundDa3, 98));
  expect_step(p.first, true, 72, 98, CvInterpolation::Cubic, "61x83 first");
  expect_step(p.second, true, 70, 98, CvInterpolation::Area, "61x83 second");
}

TEST(PreprocessPlan, Da3RoundingTiesAndLowerBound) {
  // 101 · 0.5 = 50.5 rounds to 50 (half to even, as Python's round); 50 → 56 (nearer than 42), enlarging → cubic.
  ResizePlan p = plan_resize(101, 1008, opts(PreprocessPolicy::UpperBoundDa3));
  expect_step(p.first, true, 50, 504, CvInterpolation::Area, "first");
  expect_step(p.second, true, 56, 504, CvInterpolation::Cubic, "second");
  // A side 7 past a multiple of 14 is a tie: it goes up (511 → 518); 300 → 294.
  p = plan_resize(511, 300, opts(PreprocessPolicy::UpperBoundDa3, 511));
  expect_step(p.first, false, 0, 0, CvInterpolation::Cubic, "tie first");
  expect_step(p.second, true, 518, 294, CvInterpolation::Cubic, "tie second");
  // Lower bound: the shortest side becomes the target.
  p = plan_resize(1200, 1600, opts(PreprocessPolicy::LowerBoundDa3));
  expect_step(p.first, true, 504, 672, CvInterpolation::Area, "lower first");
  EXPECT_EQ(p.height, 504);
  EXPECT_EQ(p.width, 672);
}

TEST(PreprocessPlan, Da2LowerBoundExamples) {
  const auto da2 = opts(PreprocessPolicy::LowerBound518Da2);
  ResizePlan p = plan_resize(480, 640, da2);  // 4:3 → 518×686
  EXPECT_EQ(p.height, 518);
  EXPECT_EQ(p.width, 686);
  expect_step(p.first, true, 518, 686, CvInterpolation::Cubic, "4:3");
  p = plan_resize(3000, 4000, da2);  // INTER_CUBIC also when shrinking
  expect_step(p.first, true, 518, 686, CvInterpolation::Cubic, "12 MP");
  // 539 / 14 = 38.5 rounds half to even (np.round) → 38 → 532; 525 / 14 = 37.5 → 38 → 532.
  EXPECT_EQ(plan_resize(518, 539, da2).width, 532);
  EXPECT_EQ(plan_resize(518, 525, da2).width, 532);
  // Rounding down below the target is replaced by the ceiling multiple: 1000×1006 → width 518·1006/1000 = 521.1
  // → 37·14 = 518; a portrait 700×518 keeps 518 wide and 700 tall.
  EXPECT_EQ(plan_resize(1000, 1006, da2).width, 518);
  p = plan_resize(700, 518, da2);
  EXPECT_EQ(p.height, 700);
  EXPECT_EQ(p.width, 518);
  // --size changes the target.
  p = plan_resize(480, 640, opts(PreprocessPolicy::LowerBound518Da2, 364));
  EXPECT_EQ(p.height, 364);
  EXPECT_EQ(p.width, 490);  // 485.3 → round(34.67) = 35 → 490
}

TEST(PreprocessPlan, RejectsBadRequests) {
  try {
    plan_resize(10, 2000, opts(PreprocessPolicy::UpperBoundDa3));  // 10 rows → 2.5 → 3 px: cannot reach 14
    FAIL() << "no error for an elongated image";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("10x2000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_resize(4, 3000, opts(PreprocessPolicy::LowerBoundDa3)), Error);     // would be 504×378000
  EXPECT_THROW(plan_resize(3000, 4, opts(PreprocessPolicy::LowerBound518Da2)), Error);  // 388500×518
  EXPECT_THROW(plan_resize(100, 100, opts(PreprocessPolicy::UpperBoundDa3, 13)), Error);
  EXPECT_THROW(plan_resize(100, 100, opts(PreprocessPolicy::UpperBoundDa3, 9000)), Error);
  PreprocessOptions bad_std = opts(PreprocessPolicy::UpperBoundDa3);
  bad_std.std[1] = 0;
  EXPECT_THROW(plan_resize(100, 100, bad_std), Error);
  EXPECT_THROW(preprocess(io::Image(), opts(PreprocessPolicy::UpperBoundDa3)), Error);
}

struct ParityCase {
  PreprocessPolicy policy;
  int target;
  const char* file;
};

TEST(PreprocessParity, MatchesOfficialPython) {
  const std::string dir = DACPP_FIXTURES_DIR;
  const io::Image img = io::load_image(dir + "/images/sample_small.png");
  ASSERT_EQ(img.height(), 61);
  ASSERT_EQ(img.width(), 83);
  const ParityCase cases[] = {
      {PreprocessPolicy::LowerBound518Da2, 42, "da2-lower-bound_42"},
      {PreprocessPolicy::LowerBound518Da2, 70, "da2-lower-bound_70"},
      {PreprocessPolicy::UpperBoundDa3, 98, "da3-upper-bound_98"},
      {PreprocessPolicy::UpperBoundDa3, 56, "da3-upper-bound_56"},
      {PreprocessPolicy::LowerBoundDa3, 56, "da3-lower-bound_56"},
  };
  for (const ParityCase& c : cases) {
    testing::NpyArray ref;
    std::string err;
    ASSERT_TRUE(testing::parse_npy(testing::read_file_bytes(dir + "/preprocess/" + c.file + ".npy"), &ref, &err))
        << c.file << ": " << err;
    const Preprocessed got = preprocess(img, opts(c.policy, c.target));
    ASSERT_EQ(got.input.shape(), Shape(ref.shape.begin(), ref.shape.end())) << c.file;
    EXPECT_EQ(got.height, ref.shape[2]);
    EXPECT_EQ(got.width, ref.shape[3]);
    const float* v = got.input.data<float>();
    double max_diff = 0;
    size_t exact = 0;
    for (size_t i = 0; i < ref.values.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(double(v[i]) - ref.values[i]));
      exact += v[i] == ref.values[i];
    }
    std::printf("[preprocess] %s: %zu/%zu values bit-exact, max abs diff %.3g\n", c.file, exact,
                ref.values.size(), max_diff);
    EXPECT_LE(max_diff, 1e-6) << c.file;
  }
}

TEST(PreprocessParity, MeanStdArePassedThrough) {
  io::Image img(28, 28);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) img.row(y)[x * 3 + 1] = static_cast<uint8_t>(x * 9 + 1);
  PreprocessOptions o = opts(PreprocessPolicy::UpperBoundDa3, 28);
  o.mean = {0, 0, 0};
  o.std = {1, 1, 1};
  const Preprocessed r = preprocess(img, o);  // 28 already a multiple of 14: no resize at all
  ASSERT_EQ(r.height, 28);
  const float* v = r.input.data<float>();
  EXPECT_FLOAT_EQ(v[28 * 28 + 5], (5 * 9 + 1) / 255.0f);  // channel 1, row 0, column 5
  EXPECT_EQ(v[5], 0.f);                                    // channel 0 is zero
}

}  // namespace
}  // namespace dacpp::pipeline
