#include "ops/op_profile.h"

#include <algorithm>

namespace dacpp::ops {

void OpProfile::add(const char* op, const std::string& shapes, double ms) {
  Entry& e = entries_[std::string(op) + '\n' + shapes];
  if (e.calls == 0) {
    e.op = op;
    e.shapes = shapes;
  }
  ++e.calls;
  e.ms += ms;
}

std::vector<OpProfile::Entry> OpProfile::entries() const {
  std::vector<Entry> out;
  out.reserve(entries_.size());
  for (const auto& kv : entries_) out.push_back(kv.second);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.ms != b.ms ? a.ms > b.ms : std::tie(a.op, a.shapes) < std::tie(b.op, b.shapes);
  });
  return out;
}

std::vector<std::pair<std::string, double>> OpProfile::by_op() const {
  std::unordered_map<std::string, double> sum;
  for (const auto& kv : entries_) sum[kv.second.op] += kv.second.ms;
  std::vector<std::pair<std::string, double>> out(sum.begin(), sum.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

double OpProfile::total_ms() const {
  double t = 0;
  for (const auto& kv : entries_) t += kv.second.ms;
  return t;
}

OpScope::OpScope(Context& ctx, const char* op, std::initializer_list<const Tensor*> operands) : ctx_(ctx), op_(op) {
  if (ctx_.profile() == nullptr) return;
  counted_ = true;
  if (ctx_.enter_profiled_op() > 0) return;  // inside another op: that op's time includes this one
  timing_ = true;
  for (const Tensor* t : operands) {
    if (t == nullptr || !t->defined()) continue;
    if (!shapes_.empty()) shapes_ += ' ';
    shapes_ += shape_str(t->shape());
    if (t->dtype() != DType::F32) shapes_ += str_cat(' ', dtype_name(t->dtype()));
  }
  t0_ = std::chrono::steady_clock::now();
}

OpScope::OpScope(Context& ctx, const char* op, std::initializer_list<const Tensor*> operands, const Described& more)
    : OpScope(ctx, op, operands) {
  if (!timing_) return;
  shapes_ += str_cat(shapes_.empty() ? "" : " ", shape_str(more.shape));
  if (more.dtype != DType::F32) shapes_ += str_cat(' ', dtype_name(more.dtype));
  shapes_ += str_cat(' ', more.form);
  t0_ = std::chrono::steady_clock::now();
}

OpScope::~OpScope() {
  if (!counted_) return;
  ctx_.leave_profiled_op();
  if (!timing_ || ctx_.profile() == nullptr) return;
  ctx_.profile()->add(op_, shapes_,
                      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count());
}

}  // namespace dacpp::ops
