// main.cpp: the `ett` command: parses the command line and runs one subcommand.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "analysis/input.h"
#include "commands.h"
#include "common/exit_codes.h"
#include "common/interrupt.h"

namespace {

// SIGINT and SIGTERM outside a Progress or a QEMU run (which take them themselves): the temporary file of an
// output being written is removed, and the exit status says which signal it was.
extern "C" void on_signal(int signal) {
  ett::host::exit_on_signal(signal);
}

void handle_signals() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    sigaction(signal, nullptr, &old);
    if (old.sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);  // a shell's `&` job ignores SIGINT
  }
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown command 'lss'; did you mean 'ls'?": the verbs within two edits, or that start with the word.
std::string unknown_verb_message(const CLI::App& app, const std::string& word) {
  std::vector<std::string> close;
  for (const CLI::App* sub : ett::cli::verbs(app)) {
    const std::string& name = sub->get_name();
    if (edit_distance(word, name) <= 2 || name.rfind(word, 0) == 0) close.push_back("'" + name + "'");
  }
  std::string message = "unknown command '" + word + "'";
  if (!close.empty()) {
    message += "; did you mean ";
    for (size_t i = 0; i < close.size(); ++i)
      message += (i == 0 ? "" : i + 1 == close.size() ? " or " : ", ") + close[i];
    message += "?";
  } else {
    message += " (`ett help` lists the commands)";
  }
  return message;
}

// CLI11's messages can span lines ("...\nRun with --help"): one line, in the ett: style. A usage error exits
// 1, except under `ett compare`, whose 1 means "the gate fired": there every error is 8, so that a mistyped
// flag in a CI job never reads as a measured regression.
int report_parse_error(const CLI::ParseError& error, const std::string& verb) {
  std::string message = error.what();
  std::replace(message.begin(), message.end(), '\n', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fprintf(stderr, "ett: %s (see `ett help%s%s`)\n", message.c_str(), verb.empty() ? "" : " ",
               verb.c_str());
  return verb == "compare" ? ett::host::kExitCompareError : ett::host::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  handle_signals();
  std::string verb_path;  // "qemu run", "analyze durations": the verb being run, for messages
  ett::host::set_loss_notice([](const std::string& message) { ett::cli::warn(message); });
  try {
    CLI::App app{"ett: Event Timestamping Toolkit host tools", "ett"};
    app.set_version_flag("--version", ett::cli::version_text());
    app.require_subcommand(1);
    app.fallthrough();  // -q works before or after the verb
    app.add_flag("-q,--quiet", ett::cli::quiet_flag(),
                 "Print only results and errors (no notes, no progress)");
    std::vector<ett::cli::Command> commands = {
        ett::cli::add_ls_command(app),      ett::cli::add_extract_command(app),
        ett::cli::add_mkdisk_command(app),  ett::cli::add_qemu_run_command(app),
        ett::cli::add_synth_command(app),   ett::cli::add_load_command(app),
        ett::cli::add_query_command(app),   ett::cli::add_sql_command(app),
        ett::cli::add_label_command(app),   ett::cli::add_analyze_command(app),
        ett::cli::add_compare_command(app), ett::cli::add_export_command(app),
        ett::cli::add_report_command(app),  ett::cli::add_signal_command(app)};
    commands.push_back(ett::cli::add_fidelity_command(app));
    commands.push_back(ett::cli::add_survey_command(app));
    app.add_subcommand("help", "Show the help of ett or of one verb: ett help VERB [SUBVERB]")
        ->allow_extras();
    for (ett::cli::Command& command : ett::cli::add_self_commands(app))
      commands.push_back(std::move(command));

    // The first word that is not an option is the verb.
    std::string verb;
    for (int i = 1; i < argc; ++i) {
      if (argv[i][0] == '-') continue;
      verb = argv[i];
      break;
    }
    if (!verb.empty() && !ett::cli::find_verb(app, verb)) {
      std::fprintf(stderr, "ett: %s\n", unknown_verb_message(app, verb).c_str());
      return 1;
    }
    if (verb == "help") return ett::cli::run_help(app, argc, argv);
    // "qemu run", "analyze durations": where `ett help` has the options of the verb that failed to parse.
    const CLI::App* level = &app;
    for (int i = 1; i < argc && level; ++i) {
      if (argv[i][0] == '-') continue;
      level = ett::cli::find_verb(*level, argv[i]);
      if (level) verb_path += (verb_path.empty() ? "" : " ") + std::string(argv[i]);
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& error) {
      return app.exit(error);
    } catch (const CLI::CallForAllHelp& error) {
      return app.exit(error);
    } catch (const CLI::CallForVersion& error) {
      return app.exit(error);
    } catch (const CLI::ParseError& error) {
      return report_parse_error(error, verb_path);
    }
    for (const ett::cli::Command& command : commands)
      if (command.app->parsed()) return command.run();
    return 1;
  } catch (const std::bad_alloc&) {
    // The checks before each request should make this unreachable; when one was missed, say what happened.
    std::fprintf(stderr,
                 "ett: out of memory while running `ett%s%s`: the request needs more than this machine (or "
                 "its address-space limit) allows\n",
                 verb_path.empty() ? "" : " ", verb_path.c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ett: internal error: %s\n", error.what());
  } catch (...) {
    std::fprintf(stderr, "ett: internal error\n");
  }
  return 1;
}
