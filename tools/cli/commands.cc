#include "cli/commands.h"

namespace dacpp::cli {

void register_all(CLI::App& app, CommandTable& table) {
  table.push_back(register_info(app));
  table.push_back(register_convert(app));
  table.push_back(register_depth(app));
  table.push_back(register_bench(app));
  table.push_back(register_pull(app));
}

int run_selected(const CommandTable& table) {
  for (const Command& c : table)
    if (c.app && c.app->parsed()) return c.run();
  return 2;
}

}  // namespace dacpp::cli
