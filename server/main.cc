// dacpp-server — LocalAI backend (gRPC backend.proto), REST /v1/depth, /healthz, /metrics and a web viewer.
// The front process answers the protocols and supervises one worker process that runs the engine
// (supervisor.h); `--worker` is the hidden mode that process runs in. SIGTERM/SIGINT or the death of the parent
// (LocalAI) stop the server gracefully: in-flight RPCs get up to 5 s, then the worker is killed; 12 s at most.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/crash_context.h"
#include "server/backend_core.h"
#include "server/grpc_service.h"
#include "server/rest.h"
#include "server/server_options.h"
#include "server/worker.h"

namespace dacpp::server {
namespace {

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  DACPP_CHECK(n > 0, ErrorCode::Io, "cannot resolve /proc/self/exe to start the worker");
  return std::string(buf, static_cast<size_t>(n));
}

// Blocks until SIGTERM/SIGINT arrives or the parent process changes (LocalAI died).
void wait_for_stop(const sigset_t& stop_signals, pid_t parent) {
  const timespec tick{0, 200 * 1000 * 1000};
  for (;;) {
    const int sig = ::sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig > 0) {
      std::fprintf(stderr, "dacpp-server: %s received, shutting down\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      return;
    }
    if (::getppid() != parent) {
      std::fprintf(stderr, "dacpp-server: parent process %d is gone, shutting down\n", static_cast<int>(parent));
      return;
    }
  }
}

std::unique_ptr<grpc::Server> start_grpc(const std::string& addr, GrpcService* service) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(addr, grpc::InsecureServerCredentials(), &bound_port);
  // Without this gRPC sets SO_REUSEPORT, and a second server (or our own HTTP listener) given the same port binds it
  // too and silently takes a share of the connections; a taken port must fail the start instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  DACPP_CHECK(server && bound_port > 0, ErrorCode::Io, "cannot listen on '", addr, "' (gRPC)");
  std::fprintf(stderr, "dacpp-server: gRPC listening on %s (port %d)\n", addr.c_str(), bound_port);
  return server;
}

int serve(const ServerOptions& opt) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before any thread: every thread inherits the mask
  ::signal(SIGPIPE, SIG_IGN);
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the main thread lives as long as the process

  Metrics metrics;
  Supervisor supervisor({self_exe()}, &metrics);
  BackendCore core(&supervisor, &metrics, opt.max_response_bytes ? opt.max_response_bytes : kDefaultMaxResponseBytes);
  const char* token = std::getenv("LOCALAI_GRPC_AUTH_TOKEN");
  GrpcService service(&core, token ? token : "");
  if (token && *token) std::fprintf(stderr, "dacpp-server: gRPC auth enabled via LOCALAI_GRPC_AUTH_TOKEN\n");
  std::unique_ptr<grpc::Server> grpc_server = start_grpc(opt.addr, &service);
  RestServer rest(&core, token ? token : "");
  if (!opt.http_addr.empty()) {
    std::string host;
    int port = 0;
    split_host_port(opt.http_addr, &host, &port);
    rest.start(host, port);
    std::fprintf(stderr, "dacpp-server: HTTP listening on %s:%d\n", host.c_str(), rest.port());
  }
  std::thread preload;
  if (!opt.model.empty()) {
    preload = std::thread([&core, &opt] {
      backend::ModelOptions mo;
      mo.set_model(opt.model);
      for (const std::string& kv : opt.options) mo.add_options(kv);
      std::string name;
      auto e = core.load(mo, &name);
      std::fprintf(stderr, "dacpp-server: %s\n", e ? e->message.c_str() : ("loaded '" + name + "'").c_str());
    });
  }
  wait_for_stop(stop_signals, parent);
  // LocalAI sends SIGKILL 15 s after SIGTERM: finish well before, whatever a handler or the worker is doing.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(12));
    std::fprintf(stderr, "dacpp-server: shutdown took over 12 s, exiting now\n");
    std::_Exit(1);
  }).detach();
  // In parallel with the gRPC drain: a request still in the worker after 5 s is ended by killing the worker.
  std::thread stopper([&supervisor] { supervisor.stop(5000); });
  const auto drain_until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (service.in_flight() > 0 && std::chrono::steady_clock::now() < drain_until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  rest.stop();
  stopper.join();
  if (preload.joinable()) preload.join();
  std::fprintf(stderr, "dacpp-server: stopped\n");
  return 0;
}

}  // namespace
}  // namespace dacpp::server

int main(int argc, char** argv) {
  using namespace dacpp::server;
  setvbuf(stderr, nullptr, _IOLBF, 0);
  try {
    const ServerOptions opt = parse_server_options(argc, argv);
    if (opt.help) {
      std::fputs(server_usage(), stdout);
      return 0;
    }
    if (opt.worker) return run_worker(opt.worker_fd, opt.parent_pid);
    dacpp::crash::install_crash_handler();
    return serve(opt);
  } catch (const dacpp::Error& e) {
    std::fprintf(stderr, "dacpp-server: error: [dacpp:%s] %s\n", dacpp::error_code_tag(e.code()), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dacpp-server: error: %s\n", e.what());
    return 1;
  }
}
