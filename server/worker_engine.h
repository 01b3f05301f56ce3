// WorkerEngine: what the worker process does with each request — the only server code that touches the engine
// (Model::load, Runner::run). One instance per worker process; requests run one at a time.
#pragma once

#include <memory>
#include <string>

#include "backend.pb.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "server/error_map.h"

namespace dacpp::server {

// Thrown for server-level conditions raised inside the worker (no model, response too large).
struct ConditionError {
  ServerCondition condition;
  std::string message;
};

class WorkerEngine {
 public:
  // Loads the model named by `options` (ModelFile, else Model joined with ModelPath) and parses Options
  // ("size:<px>", "threads:<n>", "resize_to_input:<bool>"). Returns the model's display name.
  std::string load(const backend::ModelOptions& options);
  void free();

  // Fills `out` for `request`. `max_bytes` caps the serialized response (0 = no cap).
  void depth(const backend::DepthRequest& request, uint64_t max_bytes, backend::DepthResponse* out);
  // Writes the min-max normalised depth of request.src as an 8-bit grey PNG at request.dst.
  void generate_image(const backend::GenerateImageRequest& request);
  // JSON statistics of Images[0]: depth_w, depth_h, depth_min, depth_max, extrinsics, intrinsics.
  std::string predict(const backend::PredictOptions& request);

 private:
  void require_model() const;

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Runner> runner_;
  RunOptions run_options_;
  std::string name_;
};

}  // namespace dacpp::server
