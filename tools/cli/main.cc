// dacpp — command-line entry point. One file per subcommand; this file only wires them and maps errors to
// exit codes: 0 ok, 2 usage, 3 invalid input, 4 unsupported, 5 backend/device, 6 out of memory, 1 internal.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>

#include "cli/commands.h"
#include "core/crash_context.h"
#include "core/error.h"

int main(int argc, char** argv) {
  dacpp::crash::install_crash_handler();  // a fatal signal leaves "dacpp: fatal: signal=... stage=..." on stderr
  CLI::App app{"dacpp — Depth Anything inference engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dacpp 0.1.0");
  dacpp::cli::CommandTable commands;
  dacpp::cli::register_all(app, commands);
  try {
    app.parse(argc, argv);
    return dacpp::cli::run_selected(commands);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help / --version
    std::fprintf(stderr, "dacpp: error: %s\n", e.what());
    std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  } catch (const dacpp::Error& e) {
    std::fprintf(stderr, "dacpp: error: %s\n", e.what());
    return dacpp::error_code_exit_status(e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "dacpp: error: out of host memory\n");
    return 6;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dacpp: error: internal: %s\n", e.what());
    return 1;
  }
}
