#include "cli/device_flags.h"

#include "cli/cache_dir.h"
#include "engine/device_select.h"

namespace dacpp::cli {

void add_device_flags(CLI::App* sub, DeviceFlags& f) {
  sub->add_option("--device", f.device, "cpu (default), cuda, cuda:N or auto (the GPU when there is one)");
  sub->add_option("--precision", f.precision,
                  "weights (and on a GPU activations): bf16, f16 or f32; default bf16 on a GPU, f32 on the CPU, where "
                  "bf16 runs the linear and conv products on bf16 operands (AVX-512 BF16 / AMX)");
}

void apply_device_flags(const DeviceFlags& f, LoadOptions& options) {
  if (!f.precision.empty()) options.precision = parse_precision(f.precision);
  options.device = parse_device(f.device);
  // A run that may use a GPU keeps the autotuner's choices in the cache folder (cli/cache_dir.h).
  if (f.device != "cpu") default_tuning_file();
}

}  // namespace dacpp::cli
