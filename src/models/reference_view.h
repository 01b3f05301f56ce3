// Reference-view selection of DA3 any-view models (model/reference_view_selector.py), spec/models.md §3c.2.
// Runs at the top of block alt_start − 1 on each view's slot-0 (cls) token, only when there are at least
// kMinViewsForSelection views and no pose conditioning. The chosen view receives camera_token[0] at alt_start; it
// defines the world frame of the predicted poses.
#pragma once

#include <cstdint>
#include <string>

namespace dacpp::models {

enum class RefViewStrategy {
  SaddleBalanced,  // default: the view whose (mean similarity, token norm, token variance) are most central
  First,           // view 0 (what the paper used)
  Middle,          // view S / 2
  SaddleSimRange,  // the view with the widest off-diagonal similarity range
};

// utils/constants.py THRESH_FOR_REF_SELECTION.
inline constexpr int64_t kMinViewsForSelection = 3;

// "saddle_balanced", "first", "middle", "saddle_sim_range".
const char* ref_view_strategy_name(RefViewStrategy s);
// Parses the names above; InvalidArgument listing them otherwise.
RefViewStrategy parse_ref_view_strategy(const std::string& name);

// cls: s rows of c floats (each view's slot-0 token), host memory. Returns the chosen view index in [0, s).
// Ties go to the lowest index (torch argmin/argmax).
int64_t select_reference_view(const float* cls, int64_t s, int64_t c, RefViewStrategy strategy);

}  // namespace dacpp::models
