#include "server/worker.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>

#include "core/crash_context.h"
#include "server/worker_engine.h"
#include "server/worker_protocol.h"
#include "worker.pb.h"

namespace dacpp::server {
namespace {

void dispatch(WorkerEngine& engine, const worker::WorkerRequest& req, worker::WorkerReply* reply) {
  switch (req.op_case()) {
    case worker::WorkerRequest::kLoad:
      reply->set_model_name(engine.load(req.load()));
      break;
    case worker::WorkerRequest::kFree:
      engine.free();
      break;
    case worker::WorkerRequest::kDepth:
      engine.depth(req.depth(), req.max_response_bytes(), reply->mutable_depth());
      break;
    case worker::WorkerRequest::kGenerateImage:
      engine.generate_image(req.generate_image());
      break;
    case worker::WorkerRequest::kPredict:
      reply->set_message(engine.predict(req.predict()));
      break;
    default:
      DACPP_THROW(ErrorCode::InvalidArgument, "worker: request names no operation");
  }
  reply->set_ok(true);
}

// Every failure becomes a reply: the engine's code and message, or a server condition.
void handle(WorkerEngine& engine, const worker::WorkerRequest& req, worker::WorkerReply* reply) {
  try {
    dispatch(engine, req, reply);
  } catch (const Error& e) {
    reply->Clear();
    reply->set_ok(false);
    reply->set_error_code(static_cast<int>(e.code()));
    reply->set_message(e.message());
  } catch (const ConditionError& e) {
    reply->Clear();
    reply->set_ok(false);
    reply->set_server_tag(error_from_condition(e.condition, "").tag);
    reply->set_message(e.message);
  } catch (const std::bad_alloc&) {
    reply->Clear();
    reply->set_ok(false);
    reply->set_error_code(static_cast<int>(ErrorCode::OutOfMemory));
    reply->set_message("out of host memory (std::bad_alloc) in the worker");
  } catch (const std::exception& e) {
    reply->Clear();
    reply->set_ok(false);
    reply->set_error_code(static_cast<int>(ErrorCode::Internal));
    reply->set_message(std::string("unexpected exception in the worker: ") + e.what());
  }
}

// Exits the worker when its parent (the front) is gone: the socket also closes then, but only a blocked read
// notices that, not a long inference.
void watch_parent(pid_t parent_pid) {
  std::thread([parent_pid] {
    for (;;) {
      if (getppid() != parent_pid) {
        std::fprintf(stderr, "dacpp: warn: worker: parent %d is gone; exiting\n", static_cast<int>(parent_pid));
        std::_Exit(0);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }).detach();
}

}  // namespace

int run_worker(int fd, pid_t parent_pid) {
  crash::install_crash_handler();
  setvbuf(stderr, nullptr, _IOLBF, 0);
  if (parent_pid > 0) watch_parent(parent_pid);
  WorkerEngine engine;
  for (;;) {
    worker::WorkerRequest req;
    std::string error;
    const FrameStatus st = read_frame(fd, &req, &error);
    if (st == FrameStatus::Closed) return 0;
    if (st != FrameStatus::Ok) {
      std::fprintf(stderr, "dacpp: error: worker: %s\n", error.c_str());
      return 1;
    }
    worker::WorkerReply reply;
    handle(engine, req, &reply);
    if (!write_frame(fd, reply, &error)) {
      std::fprintf(stderr, "dacpp: error: worker: %s\n", error.c_str());
      return 1;
    }
  }
}

}  // namespace dacpp::server
