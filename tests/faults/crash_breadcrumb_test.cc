// Crash breadcrumb (issue "Never crash" item 7): a fatal signal leaves one line
// "dacpp: fatal: signal=<SIG> stage=<stage> model=<name> input=<WxH>" as the last stderr line, and the process
// still dies of that signal. Checked in a forked child and end to end through the CLI (DACPP_FAULT=worker.crash).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "core/crash_context.h"
#include "util/scratch.h"

namespace dacpp {
namespace {

struct ChildResult {
  int status = 0;
  std::string err;
};

std::string last_line(const std::string& s) {
  size_t end = s.size();
  while (end > 0 && s[end - 1] == '\n') --end;
  const size_t start = s.rfind('\n', end == 0 ? 0 : end - 1);
  return s.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1));
}

// Forks; the child redirects stderr into a pipe and runs `body` (which must not return normally).
template <typename F>
ChildResult run_child(F body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    body();
    _exit(0);
  }
  close(fds[1]);
  ChildResult r;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) r.err.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

TEST(CrashBreadcrumb, FormatsUnsetFieldsAsDash) {
  crash::set_stage(nullptr);
  crash::set_model("");
  crash::set_input(0, 0);
  char buf[256];
  const size_t n = crash::format_line(SIGBUS, buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n), "dacpp: fatal: signal=SIGBUS stage=- model=- input=-\n");
}

TEST(CrashBreadcrumb, FormatsFieldsAndSanitisesTheName) {
  crash::ScopedStage stage("head");
  crash::set_model("my model\nname");
  crash::set_input(1920, 1080);
  char buf[256];
  const size_t n = crash::format_line(SIGFPE, buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n), "dacpp: fatal: signal=SIGFPE stage=head model=my_model_name input=1920x1080\n");
  // An unnamed signal prints its number; a tiny buffer still ends in '\n' and is never overrun.
  EXPECT_EQ(std::string(buf, crash::format_line(40, buf, sizeof buf)).substr(0, 24), "dacpp: fatal: signal=40 ");
  char tiny[8];
  const size_t m = crash::format_line(SIGSEGV, tiny, sizeof tiny);
  EXPECT_EQ(m, sizeof tiny);
  EXPECT_EQ(tiny[m - 1], '\n');
  crash::set_model("");
  crash::set_input(0, 0);
}

TEST(CrashBreadcrumb, ScopedStageRestoresThePreviousStage) {
  crash::set_stage("preprocess");
  {
    crash::ScopedStage s("backbone");
    EXPECT_STREQ(crash::stage(), "backbone");
  }
  EXPECT_STREQ(crash::stage(), "preprocess");
  crash::set_stage(nullptr);
}

TEST(CrashBreadcrumb, HandlerWritesTheLineAndReraises) {
  const ChildResult r = run_child([] {
    crash::install_crash_handler();
    crash::set_stage("backbone");
    crash::set_model("tiny");
    crash::set_input(64, 48);
    std::fputs("some earlier log line\n", stderr);
    std::fflush(stderr);
    // A real invalid access, not raise(): the handler must cope with a genuine fault. An inaccessible page rather
    // than a null pointer, which UBSan would report (and stop at) before the access happens.
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile int*>(page) = 1;
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGSEGV);
  EXPECT_EQ(last_line(r.err), "dacpp: fatal: signal=SIGSEGV stage=backbone model=tiny input=64x48") << r.err;
}

TEST(CrashBreadcrumb, AbortIsReportedToo) {
  const ChildResult r = run_child([] {
    crash::install_crash_handler();
    crash::set_stage("postprocess");
    std::abort();
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGABRT);
  EXPECT_EQ(last_line(r.err).rfind("dacpp: fatal: signal=SIGABRT stage=postprocess ", 0), 0u) << r.err;
}

TEST(CrashBreadcrumb, CliWorkerCrashFaultLeavesTheBreadcrumb) {
  const std::string model = std::string(DACPP_FIXTURES_DIR) + "/tiny-da2.gguf";
  const std::string image = std::string(DACPP_FIXTURES_DIR) + "/images/plain.jpg";  // 48x32
  const std::string out = ::dacpp::testing::scratch_path("crash_breadcrumb", "out");
  const ChildResult r = run_child([&] {
    setenv("DACPP_FAULT", "worker.crash", 1);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execl(DACPP_CLI_PATH, DACPP_CLI_PATH, "depth", "-m", model.c_str(), image.c_str(), "-o", out.c_str(),
          "--size", "28", "--threads", "1", static_cast<char*>(nullptr));
    _exit(127);
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status << "\n" << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGSEGV);
  const std::regex line(R"(dacpp: fatal: signal=SIGSEGV stage=backbone model=\S+ input=48x32)");
  EXPECT_TRUE(std::regex_match(last_line(r.err), line)) << r.err;
  std::filesystem::remove_all(out);  // the CLI made the folder before its worker crashed
}

}  // namespace
}  // namespace dacpp
