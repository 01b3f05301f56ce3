#include "formats/pickle_reader.h"

#include <cstring>
#include <cstdio>

#include "core/error.h"

namespace dacpp::pickle {
namespace {

// Opcodes of pickle protocols 2-5 that torch.save uses for state dicts.
enum Op : uint8_t {
  kMark = '(', kStop = '.', kBinFloat = 'G', kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kNone = 'N',
  kBinPersId = 'Q', kReduce = 'R', kBinUnicode = 'X', kAppend = 'a', kBuild = 'b', kGlobal = 'c',
  kAppends = 'e', kBinGet = 'h', kLongBinGet = 'j', kBinPut = 'q', kLongBinPut = 'r', kSetItem = 's',
  kTuple = 't', kSetItems = 'u', kEmptyDict = '}', kEmptyList = ']', kEmptyTuple = ')', kProto = 0x80,
  kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89, kLong1 = 0x8a,
  kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kStackGlobal = 0x93, kMemoize = 0x94, kFrame = 0x95,
};

constexpr const char* kAllowedGlobals[] = {
    "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
    "torch.FloatStorage", "torch.HalfStorage", "torch.BFloat16Storage", "torch.DoubleStorage",
    "torch.LongStorage", "torch.IntStorage", "torch.ShortStorage", "torch.CharStorage", "torch.ByteStorage",
    "torch.BoolStorage"};

bool is_allowed_global(const std::string& name) {
  for (const char* g : kAllowedGlobals)
    if (name == g) return true;
  return false;
}

}  // namespace

PickleReader::PickleReader(std::string where, const uint8_t* data, size_t size)
    : where_(std::move(where)), data_(data), size_(size) {}

void PickleReader::fail(const std::string& what) const {
  DACPP_THROW(ErrorCode::InvalidModel, "pickle '", where_, "': ", what, " (opcode at offset ", op_pos_, ")");
}

const Value& PickleReader::at(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= pool_.size()) fail("value index " + std::to_string(id) + " out of range");
  return pool_[static_cast<size_t>(id)];
}

Value& PickleReader::mut(int32_t id) { return const_cast<Value&>(at(id)); }

const uint8_t* PickleReader::take(size_t n) {
  if (n > size_ - pos_) fail("truncated: needs " + std::to_string(n) + " more bytes, " + std::to_string(size_ - pos_) + " left");
  const uint8_t* p = data_ + pos_;
  pos_ += n;
  return p;
}

uint64_t PickleReader::take_le(int n) {
  const uint8_t* p = take(static_cast<size_t>(n));
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string PickleReader::take_line() {
  const void* nl = std::memchr(data_ + pos_, '\n', size_ - pos_);
  if (!nl) fail("truncated: unterminated GLOBAL line");
  const size_t n = static_cast<size_t>(static_cast<const uint8_t*>(nl) - (data_ + pos_));
  std::string s(reinterpret_cast<const char*>(take(n)), n);
  take(1);
  return s;
}

int32_t PickleReader::add(Value v) {
  if (pool_.size() >= static_cast<size_t>(INT32_MAX)) fail("too many values");
  pool_.push_back(std::move(v));
  return static_cast<int32_t>(pool_.size() - 1);
}

void PickleReader::push(int32_t id) {
  if (stack_.size() >= kMaxStack) fail("stack exceeds " + std::to_string(kMaxStack) + " entries");
  stack_.push_back(id);
}

int32_t PickleReader::pop() {
  const size_t floor = marks_.empty() ? 0 : marks_.back();
  if (stack_.size() <= floor) fail("stack underflow");
  const int32_t id = stack_.back();
  stack_.pop_back();
  return id;
}

int32_t PickleReader::top() const {
  const size_t floor = marks_.empty() ? 0 : marks_.back();
  if (stack_.size() <= floor) fail("stack underflow");
  return stack_.back();
}

std::vector<int32_t> PickleReader::pop_to_mark() {
  if (marks_.empty()) fail("no MARK on the stack");
  const size_t m = marks_.back();
  marks_.pop_back();
  std::vector<int32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
  stack_.resize(m);
  return items;
}

void PickleReader::memo_put(uint64_t index) { memo_[index] = top(); }

void PickleReader::memo_get(uint64_t index) {
  auto it = memo_.find(index);
  if (it == memo_.end()) fail("memo index " + std::to_string(index) + " was never stored");
  push(it->second);
}

int32_t PickleReader::run() {
  pos_ = 0;
  while (true) {
    op_pos_ = pos_;
    const uint8_t op = *take(1);
    if (op == kStop) break;
    if (!step(op)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", op);
      fail(std::string("unsupported opcode ") + hex);
    }
  }
  if (!marks_.empty()) fail("MARK left open at STOP");
  if (stack_.size() != 1) fail("STOP with " + std::to_string(stack_.size()) + " values on the stack, expected 1");
  return stack_.back();
}

bool PickleReader::step(uint8_t op) { return step_data(op) || step_container(op) || step_object(op); }

bool PickleReader::step_data(uint8_t op) {
  Value v;
  switch (op) {
    case kProto: {
      const uint64_t proto = take_le(1);
      if (proto < 2 || proto > 5) fail("unsupported protocol " + std::to_string(proto));
      return true;
    }
    case kFrame: take_le(8); return true;
    case kNone: push(add(v)); return true;
    case kNewTrue: case kNewFalse: v.kind = Kind::Bool; v.i = op == kNewTrue; push(add(v)); return true;
    case kBinInt: v.kind = Kind::Int; v.i = static_cast<int32_t>(take_le(4)); push(add(v)); return true;
    case kBinInt1: v.kind = Kind::Int; v.i = static_cast<int64_t>(take_le(1)); push(add(v)); return true;
    case kBinInt2: v.kind = Kind::Int; v.i = static_cast<int64_t>(take_le(2)); push(add(v)); return true;
    case kLong1: {
      const int n = static_cast<int>(take_le(1));
      if (n > 8) fail("LONG1 of " + std::to_string(n) + " bytes does not fit in int64");
      uint64_t u = n ? take_le(n) : 0;
      if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1u) u |= ~uint64_t{0} << (8 * n);  // sign-extend
      v.kind = Kind::Int;
      v.i = static_cast<int64_t>(u);
      push(add(v));
      return true;
    }
    case kBinFloat: {
      const uint8_t* p = take(8);
      uint64_t u = 0;
      for (int i = 0; i < 8; ++i) u = (u << 8) | p[i];  // big-endian
      v.kind = Kind::Float;
      std::memcpy(&v.f, &u, 8);
      push(add(v));
      return true;
    }
    case kShortBinUnicode: case kBinUnicode: case kBinUnicode8: {
      const uint64_t n = take_le(op == kShortBinUnicode ? 1 : op == kBinUnicode ? 4 : 8);
      if (n > size_ - pos_) fail("truncated string of " + std::to_string(n) + " bytes");
      v.kind = Kind::String;
      v.s.assign(reinterpret_cast<const char*>(take(static_cast<size_t>(n))), static_cast<size_t>(n));
      push(add(v));
      return true;
    }
    default: return false;
  }
}

bool PickleReader::step_container(uint8_t op) {
  Value v;
  switch (op) {
    case kMark:
      if (marks_.size() >= kMaxMarks) fail("MARK nesting exceeds " + std::to_string(kMaxMarks));
      marks_.push_back(stack_.size());
      return true;
    case kEmptyDict: v.kind = Kind::Dict; push(add(v)); return true;
    case kEmptyList: v.kind = Kind::List; push(add(v)); return true;
    case kEmptyTuple: v.kind = Kind::Tuple; push(add(v)); return true;
    case kTuple: v.kind = Kind::Tuple; v.items = pop_to_mark(); push(add(v)); return true;
    case kTuple1: case kTuple2: case kTuple3: {
      const int n = op - kTuple1 + 1;
      v.kind = Kind::Tuple;
      v.items.resize(static_cast<size_t>(n));
      for (int k = n - 1; k >= 0; --k) v.items[static_cast<size_t>(k)] = pop();
      push(add(v));
      return true;
    }
    case kAppend: case kAppends: {
      std::vector<int32_t> items = op == kAppend ? std::vector<int32_t>{pop()} : pop_to_mark();
      const int32_t list = top();
      if (at(list).kind != Kind::List) fail("APPEND to a non-list");
      auto& dst = mut(list).items;
      dst.insert(dst.end(), items.begin(), items.end());
      return true;
    }
    case kSetItem: case kSetItems: {
      std::vector<int32_t> items;
      if (op == kSetItem) {
        const int32_t value = pop();
        items = {pop(), value};
      } else {
        items = pop_to_mark();
      }
      if (items.size() % 2 != 0) fail("SETITEMS with an odd number of values");
      const int32_t dict = top();
      if (at(dict).kind != Kind::Dict) fail("SETITEM on a non-dict");
      auto& dst = mut(dict).items;
      dst.insert(dst.end(), items.begin(), items.end());
      return true;
    }
    case kBinPut: memo_put(take_le(1)); return true;
    case kLongBinPut: memo_put(take_le(4)); return true;
    case kMemoize: memo_put(memo_.size()); return true;
    case kBinGet: memo_get(take_le(1)); return true;
    case kLongBinGet: memo_get(take_le(4)); return true;
    default: return false;
  }
}

bool PickleReader::step_object(uint8_t op) {
  switch (op) {
    case kGlobal: {
      const std::string module = take_line();
      const std::string name = take_line();
      push(make_global(module, name));
      return true;
    }
    case kStackGlobal: {
      const int32_t name = pop();
      const int32_t module = pop();
      if (at(name).kind != Kind::String || at(module).kind != Kind::String) fail("STACK_GLOBAL needs two strings");
      push(make_global(at(module).s, at(name).s));
      return true;
    }
    case kBinPersId: push(make_storage(pop())); return true;
    case kReduce: {
      const int32_t args = pop();
      const int32_t callable = pop();
      push(reduce(callable, args));
      return true;
    }
    case kBuild: {
      pop();  // the state: OrderedDict `_metadata` or tensor attributes; not needed for weights
      const Kind k = at(top()).kind;
      if (k != Kind::Dict && k != Kind::Tensor) fail("BUILD on an object that is not a dict or a tensor");
      return true;
    }
    default: return false;
  }
}

int32_t PickleReader::make_global(const std::string& module, const std::string& name) {
  const std::string full = module + "." + name;
  if (!is_allowed_global(full)) fail("global '" + full + "' is not allowed in a weights file");
  Value v;
  v.kind = Kind::Global;
  v.s = full;
  return add(v);
}

int32_t PickleReader::make_storage(int32_t pid) {
  const Value& t = at(pid);
  if (t.kind != Kind::Tuple || t.items.size() != 5)
    fail("persistent id is not a 5-tuple ('storage', type, key, location, numel)");
  const Value& tag = at(t.items[0]);
  const Value& type = at(t.items[1]);
  const Value& key = at(t.items[2]);
  const Value& numel = at(t.items[4]);
  if (tag.kind != Kind::String || tag.s != "storage") fail("persistent id does not start with 'storage'");
  if (type.kind != Kind::Global || type.s.rfind("torch.", 0) != 0 || type.s.size() < 13 ||
      type.s.compare(type.s.size() - 7, 7, "Storage") != 0)
    fail("persistent id storage type is not a torch storage class");
  if (key.kind != Kind::String) fail("persistent id storage key is not a string");
  if (at(t.items[3]).kind != Kind::String) fail("persistent id location is not a string");
  if (numel.kind != Kind::Int || numel.i < 0) fail("persistent id numel is not a non-negative integer");
  Value v;
  v.kind = Kind::Storage;
  v.s = type.s.substr(6);
  v.key = key.s;
  v.i = numel.i;
  return add(v);
}

int32_t PickleReader::reduce(int32_t callable, int32_t args) {
  const Value& fn = at(callable);
  const Value& a = at(args);
  if (fn.kind != Kind::Global) fail("REDUCE of a value that is not a callable global");
  if (a.kind != Kind::Tuple) fail("REDUCE arguments are not a tuple");
  if (fn.s == "collections.OrderedDict") {
    if (!a.items.empty()) fail("OrderedDict called with arguments");
    Value v;
    v.kind = Kind::Dict;
    return add(v);
  }
  if (fn.s == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(a);
  if (fn.s == "torch._utils._rebuild_parameter") {
    if (a.items.size() < 1 || at(a.items[0]).kind != Kind::Tensor) fail("_rebuild_parameter without a tensor");
    return a.items[0];
  }
  fail("global '" + fn.s + "' cannot be called");
}

int32_t PickleReader::rebuild_tensor(const Value& a) {
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  if (a.items.size() < 4) fail("_rebuild_tensor_v2 with " + std::to_string(a.items.size()) + " arguments");
  const int32_t storage = a.items[0];
  const Value& offset = at(a.items[1]);
  const Value& size = at(a.items[2]);
  const Value& stride = at(a.items[3]);
  if (at(storage).kind != Kind::Storage) fail("_rebuild_tensor_v2: argument 0 is not a storage");
  if (offset.kind != Kind::Int || offset.i < 0) fail("_rebuild_tensor_v2: bad storage offset");
  if (size.kind != Kind::Tuple || stride.kind != Kind::Tuple || size.items.size() != stride.items.size())
    fail("_rebuild_tensor_v2: size and stride must be tuples of equal length");
  if (size.items.size() > 8) fail("_rebuild_tensor_v2: rank " + std::to_string(size.items.size()) + " > 8");
  Value v;
  v.kind = Kind::Tensor;
  v.tensor.storage = storage;
  v.tensor.offset = offset.i;
  for (size_t k = 0; k < size.items.size(); ++k) {
    const Value& d = at(size.items[k]);
    const Value& s = at(stride.items[k]);
    if (d.kind != Kind::Int || d.i < 0 || s.kind != Kind::Int || s.i < 0)
      fail("_rebuild_tensor_v2: size/stride entries must be non-negative integers");
    v.tensor.size.push_back(d.i);
    v.tensor.stride.push_back(s.i);
  }
  return add(std::move(v));
}

}  // namespace dacpp::pickle
