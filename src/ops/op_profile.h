// Where a forward's time goes, op by op: while an OpProfile is attached to a Context (Context::set_profile), every
// op dispatched on it adds its wall time under its name and operand shapes. An op that runs other ops counts once,
// as itself (its inner ops are not added again). On the CPU an op's time is its computation (the ops are
// synchronous); on a GPU it would only be the launch, so dacpp bench --profile takes CPU profiles only.
// Not thread-safe: one profile per Context, like the Context itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "ops/context.h"

namespace dacpp::ops {

class OpProfile {
 public:
  struct Entry {
    std::string op;      // the op's name, e.g. "linear"
    std::string shapes;  // its main operands' shapes (and dtypes other than f32), e.g. "[1370, 384] [1536, 384] bf16"
    int64_t calls = 0;
    double ms = 0;
  };
  void add(const char* op, const std::string& shapes, double ms);
  // Every (op, shapes) seen, most time first.
  std::vector<Entry> entries() const;
  // Total milliseconds per op name, most first.
  std::vector<std::pair<std::string, double>> by_op() const;
  double total_ms() const;
  void clear() { entries_.clear(); }

 private:
  std::unordered_map<std::string, Entry> entries_;  // key: op + '\n' + shapes
};

// Times one op on `ctx` into its profile, if one is attached and no enclosing op is being timed. Costs one branch
// when no profile is attached.
class OpScope {
 public:
  OpScope(Context& ctx, const char* op, std::initializer_list<const Tensor*> operands);
  // An operand held in another form than a Tensor (a packed linear weight): its shape and dtype, named after the
  // tensors, e.g. "[1536,384] bf16 packed".
  struct Described {
    Shape shape;
    DType dtype;
    const char* form;
  };
  OpScope(Context& ctx, const char* op, std::initializer_list<const Tensor*> operands, const Described& more);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  Context& ctx_;
  const char* op_ = nullptr;
  bool timing_ = false;
  bool counted_ = false;  // this scope raised the context's nesting depth
  std::string shapes_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace dacpp::ops
