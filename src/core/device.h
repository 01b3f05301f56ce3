// Where a tensor's bytes live. Host code may only dereference Cpu tensors (design.md §4.4).
#pragma once

#include <string>

namespace dacpp {

enum class DeviceKind { Cpu, Cuda };

struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {DeviceKind::Cuda, i}; }
  bool is_cpu() const { return kind == DeviceKind::Cpu; }
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// "cpu", "cuda:0".
std::string device_name(const Device& d);

}  // namespace dacpp
