// LoadModel's ModelOptions → what the worker loads and how it runs: the model path (ModelFile, else Model joined
// with ModelPath), the Options strings ("key:value": size, threads, resize_to_input, metric_model, ray_pose, device,
// precision) and LocalAI's flags CUDA (+ MainGPU: the device cuda[:N]) and F16Memory (precision f16 on a GPU), which
// the device / precision options override.
// Pure functions (no engine calls), fuzzed by tests/fuzz/fuzz_load_options.cc.
#pragma once

#include <string>

#include "backend.pb.h"
#include "engine/model.h"
#include "engine/runner.h"

namespace dacpp::server {

struct LoadSettings {
  RunOptions run;
  RunnerOptions runner;
  LoadOptions load;
};

// Throws InvalidArgument when neither ModelFile nor Model names a file.
std::string resolve_model_path(const backend::ModelOptions& o);
// Throws InvalidArgument naming the option whose value is malformed or out of range; unknown keys are ignored
// with a warning (a newer LocalAI config cannot stop a load).
LoadSettings parse_load_settings(const backend::ModelOptions& o);

}  // namespace dacpp::server
