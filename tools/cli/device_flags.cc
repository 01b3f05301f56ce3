#include "cli/device_flags.h"

#include "engine/device_select.h"

namespace dacpp::cli {

void add_device_flags(CLI::App* sub, DeviceFlags& f) {
  sub->add_option("--device", f.device, "cpu (default), cuda, cuda:N or auto (the GPU when there is one)");
  sub->add_option("--precision", f.precision, "GPU weights and activations: bf16 (default), f16 or f32");
}

void apply_device_flags(const DeviceFlags& f, LoadOptions& options) {
  options.precision = parse_precision(f.precision);
  options.device = parse_device(f.device);
}

}  // namespace dacpp::cli
