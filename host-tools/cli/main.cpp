// main.cpp: the `ett` command: parses the command line and runs one subcommand.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <vector>

#include "commands.h"

int main(int argc, char** argv) {
  try {
    CLI::App app{"ett: Event Timestamping Toolkit host tools", "ett"};
    app.set_version_flag("--version", std::string("ett ") + ETT_VERSION);
    app.require_subcommand(1);
    const std::vector<ett::cli::Command> commands = {
        ett::cli::add_ls_command(app),      ett::cli::add_extract_command(app),
        ett::cli::add_mkdisk_command(app),  ett::cli::add_qemu_run_command(app),
        ett::cli::add_synth_command(app),   ett::cli::add_load_command(app),
        ett::cli::add_query_command(app),   ett::cli::add_sql_command(app),
        ett::cli::add_label_command(app),   ett::cli::add_analyze_command(app),
        ett::cli::add_compare_command(app), ett::cli::add_export_command(app),
        ett::cli::add_report_command(app),  ett::cli::add_signal_command(app)};
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      return app.exit(error) == 0 ? 0 : 1;
    }
    for (const ett::cli::Command& command : commands)
      if (command.app->parsed()) return command.run();
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ett: internal error: %s\n", error.what());
  } catch (...) {
    std::fprintf(stderr, "ett: internal error\n");
  }
  return 1;
}
