#include "core/device.h"

namespace dacpp {

std::string device_name(const Device& d) {
  if (d.kind == DeviceKind::Cpu) return "cpu";
  return "cuda:" + std::to_string(d.index);
}

}  // namespace dacpp
