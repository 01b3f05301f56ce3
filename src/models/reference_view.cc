#include "models/reference_view.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace dacpp::models {
namespace {

// Min-max normalisation over views, as upstream normalize_metric: (m − min) / (max − min + 1e-8).
std::vector<double> min_max(const std::vector<double>& m) {
  const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
  std::vector<double> r(m.size());
  for (size_t i = 0; i < m.size(); ++i) r[i] = (m[i] - *lo) / (*hi - *lo + 1e-8);
  return r;
}

// Row-normalised tokens and the similarity matrix minus the identity (upstream sim − eye).
std::vector<double> similarity_no_diag(const std::vector<double>& unit, int64_t s, int64_t c) {
  std::vector<double> sim(static_cast<size_t>(s * s));
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j) {
      double d = 0;
      for (int64_t k = 0; k < c; ++k) d += unit[static_cast<size_t>(i * c + k)] * unit[static_cast<size_t>(j * c + k)];
      sim[static_cast<size_t>(i * s + j)] = d - (i == j ? 1.0 : 0.0);
    }
  return sim;
}

int64_t saddle_balanced(const float* cls, const std::vector<double>& unit, const std::vector<double>& sim,
                        int64_t s, int64_t c) {
  std::vector<double> sim_score(static_cast<size_t>(s)), norm(static_cast<size_t>(s)), var(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    double sum = 0, n2 = 0, mean = 0;
    for (int64_t j = 0; j < s; ++j) sum += sim[static_cast<size_t>(i * s + j)];
    sim_score[static_cast<size_t>(i)] = sum / static_cast<double>(s - 1);
    for (int64_t k = 0; k < c; ++k) {
      const double v = cls[i * c + k];
      n2 += v * v;
      mean += unit[static_cast<size_t>(i * c + k)];
    }
    norm[static_cast<size_t>(i)] = std::sqrt(n2);
    mean /= static_cast<double>(c);
    double ss = 0;
    for (int64_t k = 0; k < c; ++k) {
      const double d = unit[static_cast<size_t>(i * c + k)] - mean;
      ss += d * d;
    }
    var[static_cast<size_t>(i)] = ss / static_cast<double>(std::max<int64_t>(c - 1, 1));  // torch.var: unbiased
  }
  const std::vector<double> a = min_max(sim_score), b = min_max(norm), v = min_max(var);
  int64_t best = 0;
  double best_score = 0;
  for (int64_t i = 0; i < s; ++i) {
    const size_t k = static_cast<size_t>(i);
    const double score = std::abs(a[k] - 0.5) + std::abs(b[k] - 0.5) + std::abs(v[k] - 0.5);
    if (i == 0 || score < best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

int64_t saddle_sim_range(const std::vector<double>& sim, int64_t s) {
  int64_t best = 0;
  double best_range = 0;
  for (int64_t i = 0; i < s; ++i) {
    const auto row = sim.begin() + static_cast<std::ptrdiff_t>(i * s);
    const auto [lo, hi] = std::minmax_element(row, row + static_cast<std::ptrdiff_t>(s));
    const double range = *hi - *lo;
    if (i == 0 || range > best_range) {
      best = i;
      best_range = range;
    }
  }
  return best;
}

}  // namespace

const char* ref_view_strategy_name(RefViewStrategy s) {
  switch (s) {
    case RefViewStrategy::SaddleBalanced: return "saddle_balanced";
    case RefViewStrategy::First: return "first";
    case RefViewStrategy::Middle: return "middle";
    case RefViewStrategy::SaddleSimRange: return "saddle_sim_range";
  }
  return "?";
}

RefViewStrategy parse_ref_view_strategy(const std::string& name) {
  for (RefViewStrategy s : {RefViewStrategy::SaddleBalanced, RefViewStrategy::First, RefViewStrategy::Middle,
                            RefViewStrategy::SaddleSimRange})
    if (name == ref_view_strategy_name(s)) return s;
  DACPP_THROW(ErrorCode::InvalidArgument, "unknown reference-view strategy '", name,
              "' (expected saddle_balanced, first, middle or saddle_sim_range)");
}

int64_t select_reference_view(const float* cls, int64_t s, int64_t c, RefViewStrategy strategy) {
  DACPP_CHECK(s > 0 && c > 0 && cls != nullptr, ErrorCode::Internal, "reference view: ", s, " views of width ", c);
  if (s <= 1 || strategy == RefViewStrategy::First) return 0;
  if (strategy == RefViewStrategy::Middle) return s / 2;
  std::vector<double> unit(static_cast<size_t>(s * c));
  for (int64_t i = 0; i < s; ++i) {
    double n2 = 0;
    for (int64_t k = 0; k < c; ++k) n2 += static_cast<double>(cls[i * c + k]) * cls[i * c + k];
    const double n = std::sqrt(n2);
    for (int64_t k = 0; k < c; ++k) unit[static_cast<size_t>(i * c + k)] = cls[i * c + k] / n;
  }
  const std::vector<double> sim = similarity_no_diag(unit, s, c);
  if (strategy == RefViewStrategy::SaddleSimRange) return saddle_sim_range(sim, s);
  return saddle_balanced(cls, unit, sim, s, c);
}

}  // namespace dacpp::models
