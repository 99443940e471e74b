// commands.h: the `ett` subcommands. Each file adds one to the CLI11 app and returns how to run it.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ett::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;  // the exit status
};

Command add_extract_command(CLI::App& app);
Command add_fidelity_command(CLI::App& app);
Command add_ls_command(CLI::App& app);
Command add_mkdisk_command(CLI::App& app);
Command add_qemu_run_command(CLI::App& app);
Command add_signal_command(CLI::App& app);  // libettprobe from the shell
Command add_survey_command(CLI::App& app);  // a PC's mode=survey session and its verdicts
// The trace database.
Command add_load_command(CLI::App& app);
Command add_query_command(CLI::App& app);
Command add_sql_command(CLI::App& app);
Command add_label_command(CLI::App& app);
Command add_synth_command(CLI::App& app);
// Analysis and export of loaded traces.
Command add_analyze_command(CLI::App& app);
Command add_compare_command(CLI::App& app);  // the regression gate
Command add_export_command(CLI::App& app);
Command add_report_command(CLI::App& app);

// `ett completion bash` and `ett man`, generated from the option definitions of `app` (help_command.cpp).
std::vector<Command> add_self_commands(CLI::App& app);
// `ett help [VERB [SUBVERB]]`: the same text as VERB --help.
int run_help(const CLI::App& app, int argc, char** argv);
std::vector<const CLI::App*> verbs(const CLI::App& app);
const CLI::App* find_verb(const CLI::App& app, const std::string& name);
// "ett 0.1.0 (git 1a2b3c4)"
std::string version_text();
// -q/--quiet: notes and progress on standard error are left out; results, warnings and errors stay.
bool& quiet_flag();
bool quiet();
void note(const std::string& message);  // "ett: <message>" on stderr unless quiet

// The option blocks several verbs share, spelled once.
// --db URL (default: $ETT_DB or sqlite:traces.db)
void add_db_option(CLI::App* sub, std::string& db);
// --trace ID (default: the most recently loaded trace)
void add_trace_option(CLI::App* sub, std::optional<int64_t>& trace);
// --pair same-code|fifo, how ends close starts
void add_pair_option(CLI::App* sub, std::string& pair);

// Read-only verbs: a sqlite: database file must exist (only `ett load` creates one).
host::Status require_database(const std::string& url);
// Finite numbers only ("nan", "inf" and negative values are refused by the parser, in the ett: style).
CLI::Validator non_negative_number();
CLI::Validator positive_number();
// CLI::Range with a description free of CLI11's type names ("[1 - 8]", not "INT in [1 - 8]"): the option's
// own placeholder (N, PROBE) says what the value is.
template <typename T>
CLI::Validator in_range(T min, T max) {
  CLI::Range range(min, max);
  range.description(fmt::format("[{} - {}]", min, max));
  return range;
}

// Prints "ett: <message>" on stderr and returns the exit status for the error's kind.
int report(const host::HostError& error);
void warn(const std::string& message);

std::string json_escape(std::string_view text);
// "2024-05-01 12:00:00" (UTC); "unknown" for 0.
std::string format_unix_time(uint64_t seconds);

}  // namespace ett::cli
