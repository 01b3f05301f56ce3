// PickleReader: a restricted unpickler for the pickles that torch.save writes for state dicts (protocol 2+).
// It never executes code: GLOBAL/STACK_GLOBAL accept only an allow-list (collections.OrderedDict,
// torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter, torch.<Type>Storage), REDUCE knows what each
// of those builds, and persistent ids must be torch's ('storage', type, key, location, numel) tuples.
//
// Values live in a pool owned by the reader and refer to each other by index, so memo sharing and even cycles
// are harmless. Limits: stack ≤ kMaxStack entries, MARK nesting ≤ kMaxMarks, every memo index and stack access is
// checked. Every defect is Error{InvalidModel} naming the source, the opcode and its byte offset:
//   "pickle 'm.pth:archive/data.pkl': unsupported opcode 0x63 at offset 57"
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dacpp::pickle {

enum class Kind : uint8_t { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor };

// A tensor built by torch._utils._rebuild_tensor_v2: a strided view of a storage value.
struct TensorRef {
  int32_t storage = -1;  // pool index of a Kind::Storage value
  int64_t offset = 0;    // in elements
  std::vector<int64_t> size;
  std::vector<int64_t> stride;
};

struct Value {
  Kind kind = Kind::None;
  int64_t i = 0;              // Int, Bool (0/1), Storage: numel (elements)
  double f = 0;               // Float
  std::string s;              // String; Global: "module.name"; Storage: type name, e.g. "FloatStorage"
  std::string key;            // Storage: the archive record key ("0", "1", ...)
  std::vector<int32_t> items; // Tuple/List: elements; Dict: key0, value0, key1, value1, ...
  TensorRef tensor;           // Tensor
};

class PickleReader {
 public:
  static constexpr size_t kMaxStack = 1u << 20;
  static constexpr size_t kMaxMarks = 1000;

  // `where` names the source in messages. The bytes must outlive run().
  PickleReader(std::string where, const uint8_t* data, size_t size);

  // Runs the program to STOP and returns the pool index of the result.
  int32_t run();
  const Value& at(int32_t id) const;
  const std::string& where() const { return where_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;
  bool step(uint8_t op);
  bool step_data(uint8_t op);
  bool step_container(uint8_t op);
  bool step_object(uint8_t op);
  // Byte reading with bounds checks.
  const uint8_t* take(size_t n);
  uint64_t take_le(int n);
  std::string take_line();
  // Stack and pool helpers.
  int32_t add(Value v);
  int32_t pop();
  int32_t top() const;
  std::vector<int32_t> pop_to_mark();
  void push(int32_t id);
  void memo_put(uint64_t index);
  void memo_get(uint64_t index);
  int32_t make_global(const std::string& module, const std::string& name);
  int32_t make_storage(int32_t pid);
  int32_t reduce(int32_t callable, int32_t args);
  int32_t rebuild_tensor(const Value& args);
  Value& mut(int32_t id);

  std::string where_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  std::vector<Value> pool_;
  std::vector<int32_t> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, int32_t> memo_;
};

}  // namespace dacpp::pickle
