// Preprocessing policies (see preprocess.h). Sizes follow the official Python: `round` is Python's / numpy's
// round-half-even, computed in double from the same expressions.
#include "pipeline/preprocess.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace dacpp::pipeline {
namespace {

constexpr int kPatch = 14;
constexpr int kMinTarget = 14;
constexpr int kMaxTarget = 8192;
// Largest processed side accepted: a lower-bound policy on a very elongated image would otherwise ask for
// enormous inputs (a 4 px × 3000 px strip at target 504 becomes 504 × 378000).
constexpr int kMaxProcessedSide = 16384;

// Python round() / np.round(): nearest, ties to even (the default floating-point rounding mode).
int round_half_even(double x) { return static_cast<int>(std::nearbyint(x)); }

// DA2 util/transform.py Resize.constrain_to_multiple_of with min_val (no max_val).
int da2_constrain(double x, int min_val) {
  int y = round_half_even(x / kPatch) * kPatch;
  if (y < min_val) y = static_cast<int>(std::ceil(x / kPatch)) * kPatch;
  return y;
}

// DA3 InputProcessor._make_divisible_by_resize.nearest_multiple: a tie goes up.
int da3_nearest_multiple(int x) {
  const int down = (x / kPatch) * kPatch;
  const int up = down + kPatch;
  return (up - x) <= (x - down) ? up : down;
}

ResizePlan plan_da2(int h, int w, int target) {
  double scale_h = static_cast<double>(target) / h;
  double scale_w = static_cast<double>(target) / w;
  if (scale_w > scale_h) scale_h = scale_w;  // lower bound: the larger scale wins
  else scale_w = scale_h;
  ResizePlan plan;
  plan.height = da2_constrain(scale_h * h, target);
  plan.width = da2_constrain(scale_w * w, target);
  plan.first = {true, plan.height, plan.width, CvInterpolation::Cubic};
  return plan;
}

ResizePlan plan_da3(int h, int w, int target, bool upper) {
  ResizePlan plan;
  int bh = h, bw = w;
  const int ref = upper ? std::max(h, w) : std::min(h, w);
  if (ref != target) {
    const double scale = static_cast<double>(target) / static_cast<double>(ref);
    bw = std::max(1, round_half_even(w * scale));
    bh = std::max(1, round_half_even(h * scale));
    plan.first = {true, bh, bw, scale > 1.0 ? CvInterpolation::Cubic : CvInterpolation::Area};
  }
  const int fh = da3_nearest_multiple(bh), fw = da3_nearest_multiple(bw);
  DACPP_CHECK(fh > 0 && fw > 0, ErrorCode::InvalidArgument, "image of ", h, "x", w,
              " is too elongated: after resizing to target ", target, " it is ", bh, "x", bw,
              ", and a side under 7 px cannot be rounded to a multiple of ", kPatch);
  if (fh != bh || fw != bw) {
    const bool grows = fh > bh || fw > bw;
    plan.second = {true, fh, fw, grows ? CvInterpolation::Cubic : CvInterpolation::Area};
  }
  plan.height = fh;
  plan.width = fw;
  return plan;
}

void check_options(const PreprocessOptions& o, int target) {
  DACPP_CHECK(target >= kMinTarget && target <= kMaxTarget, ErrorCode::InvalidArgument, "preprocess (",
              preprocess_policy_name(o.policy), "): target size ", target, " is outside ", kMinTarget, "..",
              kMaxTarget);
  for (int c = 0; c < 3; ++c) {
    DACPP_CHECK(std::isfinite(o.mean[c]) && std::isfinite(o.std[c]) && o.std[c] > 0, ErrorCode::InvalidArgument,
                "preprocess: normalisation channel ", c, " has mean ", o.mean[c], " std ", o.std[c],
                " (std must be finite and positive)");
  }
}

// DA3: uint8 resizes, then ToTensor + Normalize in f32.
void run_da3(const io::Image& img, const ResizePlan& plan, const PreprocessOptions& o, float* out) {
  std::vector<uint8_t> a(img.data(), img.data() + img.size_bytes()), b;
  int h = img.height(), w = img.width();
  for (const ResizeStep* step : {&plan.first, &plan.second}) {
    if (!step->active) continue;
    b.resize(static_cast<size_t>(step->height) * step->width * 3);
    cv_resize(a.data(), h, w, 3, b.data(), step->height, step->width, step->interp);
    a.swap(b);
    h = step->height;
    w = step->width;
  }
  const size_t plane = static_cast<size_t>(h) * w;
  for (int c = 0; c < 3; ++c) {
    const float mean = static_cast<float>(o.mean[c]), sd = static_cast<float>(o.std[c]);
    float* dst = out + c * plane;
    for (size_t i = 0; i < plane; ++i) dst[i] = (static_cast<float>(a[i * 3 + c]) / 255.0f - mean) / sd;
  }
}

// DA2: one INTER_CUBIC resize of the float64 image / 255, then (x - mean) / std in float64, then f32.
void run_da2(const io::Image& img, const ResizePlan& plan, const PreprocessOptions& o, float* out) {
  const int h = plan.height, w = plan.width;
  std::vector<double> resized(static_cast<size_t>(h) * w * 3);
  cv_resize_u8_to_f64(img.data(), img.height(), img.width(), 3, 255.0, resized.data(), h, w,
                      CvInterpolation::Cubic);
  const size_t plane = static_cast<size_t>(h) * w;
  for (int c = 0; c < 3; ++c) {
    float* dst = out + c * plane;
    for (size_t i = 0; i < plane; ++i) dst[i] = static_cast<float>((resized[i * 3 + c] - o.mean[c]) / o.std[c]);
  }
}

}  // namespace

const char* preprocess_policy_name(PreprocessPolicy policy) {
  switch (policy) {
    case PreprocessPolicy::LowerBound518Da2: return "da2-lower-bound";
    case PreprocessPolicy::UpperBoundDa3: return "da3-upper-bound";
    default: return "da3-lower-bound";
  }
}

int default_target(PreprocessPolicy policy) { return policy == PreprocessPolicy::LowerBound518Da2 ? 518 : 504; }

ResizePlan plan_resize(int height, int width, const PreprocessOptions& options) {
  const int target = options.target > 0 ? options.target : default_target(options.policy);
  check_options(options, target);
  DACPP_CHECK(height > 0 && width > 0, ErrorCode::InvalidArgument, "preprocess: bad image size ", height, "x",
              width);
  const ResizePlan plan = options.policy == PreprocessPolicy::LowerBound518Da2
                              ? plan_da2(height, width, target)
                              : plan_da3(height, width, target, options.policy == PreprocessPolicy::UpperBoundDa3);
  const int largest = std::max({plan.height, plan.width, plan.first.height, plan.first.width});
  DACPP_CHECK(largest <= kMaxProcessedSide, ErrorCode::InvalidArgument, "image of ", height, "x", width,
              " is too elongated for ", preprocess_policy_name(options.policy), " at target ", target,
              ": it would be resized to ", plan.height, "x", plan.width, " (a side over ", kMaxProcessedSide, ")");
  return plan;
}

Preprocessed preprocess(const io::Image& image, const PreprocessOptions& options) {
  DACPP_CHECK(!image.empty(), ErrorCode::InvalidArgument, "preprocess: the image is empty");
  const ResizePlan plan = plan_resize(image.height(), image.width(), options);
  Preprocessed r;
  r.height = plan.height;
  r.width = plan.width;
  r.source_height = image.height();
  r.source_width = image.width();
  r.input = Tensor::empty({1, 3, plan.height, plan.width}, DType::F32, "input");
  float* out = r.input.data<float>();
  if (options.policy == PreprocessPolicy::LowerBound518Da2) run_da2(image, plan, options, out);
  else run_da3(image, plan, options, out);
  return r;
}

}  // namespace dacpp::pipeline
