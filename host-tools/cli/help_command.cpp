// help_command.cpp: `ett help VERB`, `ett completion bash`, `ett man`, --version and -q: everything about the
// command itself, generated from the one set of CLI11 option definitions so that they cannot disagree.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common/exit_codes.h"
#include "ett_git_commit.h"  // generated at build time (cmake/git_commit.cmake)
#include "progress.h"

namespace ett::cli {

namespace {

bool g_quiet = false;

std::vector<const CLI::App*> children(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

const CLI::App* find_child(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : children(app))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// The option's names as typed: "-o, --output" or "--db".
std::vector<std::string> option_names(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) names.push_back("-" + name);
  for (const std::string& name : option.get_lnames()) names.push_back("--" + name);
  return names;
}

std::vector<const CLI::Option*> named_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* option) { return !option->get_positional(); });
}

std::string roff_escape(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  // A line starting with . or ' would be a roff request.
  std::string safe;
  size_t start = 0;
  while (start <= out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) line = "\\&" + line;
    safe += line;
    if (end < out.size()) safe += "\n.br\n";
    start = end + 1;
  }
  return safe;
}

void man_options(std::string& out, const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    std::string names;
    for (const std::string& name :
         option->get_positional() ? std::vector<std::string>{option->get_name()} : option_names(*option))
      names += (names.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff_escape(name));
    if (option->get_type_size() != 0 && !option->get_positional() && !option->get_type_name().empty())
      names += " \\fI" + roff_escape(option->get_type_name()) + "\\fR";
    out += ".TP\n" + names + "\n" + roff_escape(option->get_description()) + "\n";
  }
}

void man_verb(std::string& out, const CLI::App& sub, const std::string& path) {
  out += fmt::format(".SS \"{}\"\n{}\n", roff_escape(path), roff_escape(sub.get_description()));
  man_options(out, sub);
  if (!sub.get_footer().empty()) out += ".PP\n" + roff_escape(sub.get_footer()) + "\n";
  for (const CLI::App* child : children(sub)) man_verb(out, *child, path + " " + child->get_name());
}

std::string man_page(const CLI::App& app) {
  std::string out = fmt::format(".TH ETT 1 \"\" \"{}\" \"User Commands\"\n", roff_escape(version_text()));
  out += ".SH NAME\nett \\- Event Timestamping Toolkit host tools\n";
  out += ".SH SYNOPSIS\n\\fBett\\fR [\\fB\\-q\\fR] \\fIVERB\\fR [\\fIOPTIONS\\fR]\n";
  out += ".SH DESCRIPTION\n" + roff_escape(app.get_description()) +
         ". Every verb's options follow; `ett help VERB` prints the same.\n";
  out += ".SH GLOBAL OPTIONS\n";
  man_options(out, app);
  out += ".SH COMMANDS\n";
  for (const CLI::App* sub : children(app)) man_verb(out, *sub, "ett " + sub->get_name());
  out += ".SH EXIT STATUS\n";
  for (const host::ExitCodeRow& row : host::exit_code_table())
    out +=
        fmt::format(".TP\n\\fB{}\\fR ({})\n{}\n", row.code, roff_escape(row.verbs), roff_escape(row.meaning));
  out +=
      ".SH ENVIRONMENT\n.TP\n\\fBETT_DB\\fR\nThe trace database of every verb that takes --db, when --db is "
      "not "
      "given (default sqlite:traces.db).\n";
  return out;
}

// One bash word list per position: the verbs, each verb's subverbs and options, each subverb's options.
void completion_words(const CLI::App& app, const std::string& key,
                      std::vector<std::pair<std::string, std::string>>& table) {
  std::string words;
  for (const CLI::App* sub : children(app)) words += (words.empty() ? "" : " ") + sub->get_name();
  for (const CLI::Option* option : named_options(app))
    for (const std::string& name : option_names(*option)) words += (words.empty() ? "" : " ") + name;
  table.emplace_back(key, words);
  for (const CLI::App* sub : children(app))
    completion_words(*sub, key.empty() ? sub->get_name() : key + " " + sub->get_name(), table);
}

std::string bash_completion(const CLI::App& app) {
  std::vector<std::pair<std::string, std::string>> table;
  completion_words(app, "", table);
  std::string keys, cases;
  for (const auto& [key, words] : table) {
    if (!key.empty()) keys += (keys.empty() ? "" : "|") + ("\"" + key + "\"");
    cases += fmt::format("    \"{}\") words=\"{}\" ;;\n", key, words);
  }
  return fmt::format(
      "# bash completion for ett ({}), generated by `ett completion bash` from its option definitions.\n"
      "_ett() {{\n"
      "  local cur=\"${{COMP_WORDS[COMP_CWORD]}}\" key=\"\" next w i words=\"\"\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=\"${{COMP_WORDS[i]}}\"\n"
      "    [[ $w == -* ]] && continue\n"
      "    next=\"${{key:+$key }}$w\"\n"
      "    case \"$next\" in\n"
      "      {}) key=\"$next\" ;;\n"
      "    esac\n"
      "  done\n"
      "  case \"$key\" in\n"
      "{}"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "  [[ ${{#COMPREPLY[@]}} -eq 0 && $cur != -* ]] && COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  return 0\n"
      "}}\n"
      "complete -o filenames -F _ett ett\n",
      version_text(), keys, cases);
}

}  // namespace

std::string version_text() {
  return fmt::format("ett {} (git {})", ETT_VERSION, ETT_GIT_COMMIT);
}

bool& quiet_flag() {
  return g_quiet;
}
bool quiet() {
  return g_quiet;
}

void note(const std::string& message) {
  if (g_quiet) return;
  Progress::erase_current();
  std::fprintf(stderr, "ett: %s\n", message.c_str());
}

std::vector<const CLI::App*> verbs(const CLI::App& app) {
  return children(app);
}

const CLI::App* find_verb(const CLI::App& app, const std::string& name) {
  return find_child(app, name);
}

int run_help(const CLI::App& app, int argc, char** argv) {
  // The words after "help": VERB and perhaps SUBVERB (`ett help analyze durations`).
  std::vector<std::string> words;
  bool after_help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("-", 0) == 0) continue;
    if (after_help) words.push_back(word);
    if (word == "help") after_help = true;
  }
  const CLI::App* target = &app;
  std::string path = "ett";
  for (const std::string& word : words) {
    const CLI::App* child = find_child(*target, word);
    if (!child) {
      std::fprintf(stderr, "ett: help: %s has no command '%s' (`ett help%s` lists them)\n", path.c_str(),
                   word.c_str(), path == "ett" ? "" : (" " + path.substr(4)).c_str());
      return 1;
    }
    target = child;
    path += " " + word;
  }
  const std::string text = target->help(target == &app ? "" : path.substr(0, path.rfind(' ')));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

std::vector<Command> add_self_commands(CLI::App& app) {
  CLI::App* completion =
      app.add_subcommand("completion", "Print the bash completion script: source <(ett completion bash)");
  auto shell = std::make_shared<std::string>();
  completion->add_option("SHELL", *shell, "bash")
      ->type_name("SHELL")
      ->check(CLI::IsMember({"bash"}))
      ->required();
  CLI::App* man = app.add_subcommand("man", "Print the manual page (roff): ett man | man -l -");
  auto print = [](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  };
  // The lambda keeps `shell` alive: CLI11 writes the parsed value into it after this function returned.
  return {{completion, [&app, print, shell] { return print(bash_completion(app)); }},
          {man, [&app, print] { return print(man_page(app)); }}};
}

}  // namespace ett::cli
