// --device and --precision, shared by the commands that load a model.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "engine/model.h"

namespace dacpp::cli {

struct DeviceFlags {
  std::string device = "cpu";     // cpu | cuda | cuda:N | auto
  std::string precision;          // bf16 | f16 | f32; empty: bf16 on a GPU, f32 on the CPU
};

void add_device_flags(CLI::App* sub, DeviceFlags& f);

// Fills options.device / options.precision. "auto" is the first GPU when this build has CUDA and a GPU answers,
// else the CPU. Throws InvalidArgument on an unknown device or precision.
void apply_device_flags(const DeviceFlags& f, LoadOptions& options);

}  // namespace dacpp::cli
