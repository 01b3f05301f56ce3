// The worker process: `dacpp-server --worker --worker-fd=<fd> --parent-pid=<pid>` (spawned by Supervisor, never
// by hand). It reads WorkerRequest frames from the socket, runs them one at a time on a WorkerEngine and answers
// one WorkerReply each. It exits when the socket closes or the parent process goes away. Its stderr is a pipe
// the front reads; a fatal signal leaves the crash breadcrumb there (core/crash_context.h).
#pragma once

#include <sys/types.h>

namespace dacpp::server {

int run_worker(int fd, pid_t parent_pid);

}  // namespace dacpp::server
