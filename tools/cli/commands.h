// The dacpp subcommands. Each lives in its own file and registers itself into a CommandTable; main() parses,
// then runs the chosen one. Subcommands throw dacpp::Error; main() maps it to an exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace dacpp::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns the exit status; throws dacpp::Error on failure
};
using CommandTable = std::vector<Command>;

// Adds every subcommand that exists in this build to the app.
void register_all(CLI::App& app, CommandTable& table);
// Runs the parsed subcommand; returns its exit status.
int run_selected(const CommandTable& table);

// One per file. Each keeps its options alive in a heap object owned by the returned Command's closure.
Command register_info(CLI::App& app);
Command register_pull(CLI::App& app);
Command register_convert(CLI::App& app);
Command register_depth(CLI::App& app);
Command register_bench(CLI::App& app);

}  // namespace dacpp::cli
