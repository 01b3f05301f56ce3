// Preprocessing: an RGB image → the normalised network input [1, 3, H, W] f32, following the official code of each
// model family exactly (spec/models.md §2a, §2b), including its OpenCV resize arithmetic (cv_resize.h).
//
//  LowerBound518Da2 (DA2 `image2tensor`): the shorter side becomes `target` (default 518); each side is
//    round-half-even(x / 14) · 14, or the ceiling multiple when that falls below target; one INTER_CUBIC resize
//    (also when shrinking) of the float64 image / 255; (x - mean) / std in float64, then f32.
//  UpperBoundDa3 (DA3 `upper_bound_resize`, the default) / LowerBoundDa3 (`lower_bound_resize`): the longest
//    (shortest) side becomes `target` (default 504) with round-half-even(dim · scale), INTER_CUBIC when enlarging
//    and INTER_AREA when shrinking, on uint8 (skipped when that side already equals target); then each side goes to
//    the nearest multiple of 14 (a tie rounds up) with a second uint8 resize, INTER_CUBIC if either side grows,
//    else INTER_AREA; then ToTensor (/255 in f32) and (x - mean) / std in f32.
//
// Errors: InvalidArgument for an empty image, a target outside 14..8192, a non-positive std, or an image whose
// aspect ratio leaves a side under 7 px after the boundary resize (the official code would produce a side of 1) or
// makes a processed side exceed 16384 px.
#pragma once

#include <array>

#include "core/tensor.h"
#include "io/image.h"
#include "pipeline/cv_resize.h"

namespace dacpp::pipeline {

enum class PreprocessPolicy { LowerBound518Da2, UpperBoundDa3, LowerBoundDa3 };

// "da2-lower-bound" / "da3-upper-bound" / "da3-lower-bound".
const char* preprocess_policy_name(PreprocessPolicy policy);
// The policy's default target side: 518 for DA2, 504 for DA3.
int default_target(PreprocessPolicy policy);

struct PreprocessOptions {
  PreprocessPolicy policy = PreprocessPolicy::UpperBoundDa3;
  int target = 0;  // 0: default_target(policy); the CLI's --size
  std::array<double, 3> mean = {0.485, 0.456, 0.406};  // ImageNet
  std::array<double, 3> std = {0.229, 0.224, 0.225};
};

// One cv2.resize step of a plan.
struct ResizeStep {
  bool active = false;  // false: the official code skips this resize
  int height = 0, width = 0;
  CvInterpolation interp = CvInterpolation::Cubic;
};

// The sizes and interpolations the policy chooses for an h×w image; `first` and `second` are applied in order
// (DA2 has only `first`, always active), and height/width is the final processed size.
struct ResizePlan {
  ResizeStep first, second;
  int height = 0, width = 0;
};
ResizePlan plan_resize(int height, int width, const PreprocessOptions& options);

struct Preprocessed {
  Tensor input;  // [1, 3, height, width] f32, host
  int height = 0, width = 0;
  int source_height = 0, source_width = 0;
};

Preprocessed preprocess(const io::Image& image, const PreprocessOptions& options = {});

}  // namespace dacpp::pipeline
