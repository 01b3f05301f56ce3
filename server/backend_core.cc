#include "server/backend_core.h"

#include "worker.pb.h"

namespace dacpp::server {

std::optional<ServerError> BackendCore::check_identity(const std::string& identity) const {
  const std::string loaded = supervisor_->model_identity();
  if (identity.empty() || loaded.empty() || identity == loaded) return std::nullopt;
  return error_from_condition(ServerCondition::ModelMismatch, "model identity mismatch: the request is for '" +
                                                                  identity + "', this backend holds '" + loaded + "'");
}

std::optional<ServerError> BackendCore::require_model(const char* op) const {
  if (supervisor_->model_loaded()) return std::nullopt;
  return error_from_condition(ServerCondition::NoModel, str_cat(op, ": no model is loaded: call LoadModel first"));
}

std::optional<ServerError> BackendCore::load(const backend::ModelOptions& options, std::string* model_name) {
  worker::WorkerRequest req;
  *req.mutable_load() = options;
  CallResult r = supervisor_->call(req, "LoadModel");
  if (!r.ok) return r.error;
  *model_name = r.reply.model_name();
  return std::nullopt;
}

std::optional<ServerError> BackendCore::free() {
  worker::WorkerRequest req;
  req.set_free(true);
  CallResult r = supervisor_->call(req, "Free");
  if (!r.ok) return r.error;
  return std::nullopt;
}

std::optional<ServerError> BackendCore::depth(const backend::DepthRequest& request, backend::DepthResponse* out) {
  if (auto e = check_identity(request.modelidentity())) return e;
  if (auto e = require_model("Depth")) return e;
  worker::WorkerRequest req;
  *req.mutable_depth() = request;
  req.set_max_response_bytes(max_response_bytes_);
  CallResult r = supervisor_->call(req, "Depth");
  if (!r.ok) return r.error;
  out->Swap(r.reply.mutable_depth());
  return std::nullopt;
}

std::optional<ServerError> BackendCore::generate_image(const backend::GenerateImageRequest& request) {
  if (auto e = check_identity(request.modelidentity())) return e;
  if (auto e = require_model("GenerateImage")) return e;
  worker::WorkerRequest req;
  *req.mutable_generate_image() = request;
  CallResult r = supervisor_->call(req, "GenerateImage");
  if (!r.ok) return r.error;
  return std::nullopt;
}

std::optional<ServerError> BackendCore::predict(const backend::PredictOptions& request, std::string* json) {
  if (auto e = check_identity(request.modelidentity())) return e;
  if (auto e = require_model("Predict")) return e;
  worker::WorkerRequest req;
  *req.mutable_predict() = request;
  CallResult r = supervisor_->call(req, "Predict");
  if (!r.ok) return r.error;
  *json = r.reply.message();
  return std::nullopt;
}

void BackendCore::status(backend::StatusResponse* out) const {
  if (supervisor_->failed())
    out->set_state(backend::StatusResponse::ERROR);
  else if (!supervisor_->model_loaded())
    out->set_state(backend::StatusResponse::UNINITIALIZED);
  else if (supervisor_->busy())
    out->set_state(backend::StatusResponse::BUSY);
  else
    out->set_state(backend::StatusResponse::READY);
  const uint64_t server = resident_bytes(0);
  const pid_t wp = supervisor_->worker_pid();
  const uint64_t worker = wp > 0 ? resident_bytes(wp) : 0;
  auto* mem = out->mutable_memory();
  mem->set_total(server + worker);
  (*mem->mutable_breakdown())["server"] = server;
  (*mem->mutable_breakdown())["worker"] = worker;
}

}  // namespace dacpp::server
