// help_command.cpp: `ett help VERB`, `ett completion bash|zsh|fish`, `ett man [VERB]`, --version and -q:
// everything about the command itself, generated from the one set of CLI11 option definitions so that they
// cannot disagree (the pages themselves: man_pages.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "common/exit_codes.h"
#include "ett_git_commit.h"  // generated at build time (cmake/git_commit.cmake)
#include "man_pages.h"
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

// What the completion scripts know of one command path ("", "ls", "analyze durations"): its subverbs, and its
// options with the values each takes.
struct CompletionOption {
  std::vector<std::string> names;  // "-o", "--output"
  std::string help;                // the option's description, for fish
  std::string values;              // ValueKind::Choices: the choices, separated by spaces
  enum class ValueKind { None, Choices, File, Database, Free } kind = ValueKind::None;
};
struct CompletionNode {
  std::string key;
  std::vector<std::pair<std::string, std::string>> subverbs;  // name, description
  std::vector<CompletionOption> options;
  bool takes_files = false;  // a positional argument (IMAGE, FILE, ...)
  std::string choices;       // a positional argument's choices (`ett completion SHELL`), separated by spaces
};

// An option's values from its placeholder: `text|csv|json` lists them, FILE/PATH/IMAGE/... are files, DB a
// database URL (sqlite:FILE), anything else (N, NS, P[:C]) a value to type.
CompletionOption completion_option(const CLI::Option& option) {
  CompletionOption out;
  out.names = option_names(option);
  out.help = option.get_description();
  if (option.get_type_size_min() == 0) return out;  // a flag
  // The placeholder, without the validator's text CLI11 appends (`bash|zsh|fish:{bash,zsh,fish}`).
  std::string placeholder = option.get_type_name();
  if (const size_t braces = placeholder.find(":{"); braces != std::string::npos) placeholder.resize(braces);
  static const std::vector<std::string> kFiles = {"FILE", "PATH", "IMAGE", "CSV", "ELF", "ISO"};
  if (placeholder.find('|') != std::string::npos) {
    out.kind = CompletionOption::ValueKind::Choices;
    size_t start = 0;
    while (start <= placeholder.size()) {
      size_t end = placeholder.find('|', start);
      if (end == std::string::npos) end = placeholder.size();
      std::string choice = placeholder.substr(start, end - start);
      if (const size_t colon = choice.find(':'); colon != std::string::npos) choice.resize(colon + 1);
      if (!choice.empty()) out.values += (out.values.empty() ? "" : " ") + choice;
      start = end + 1;
    }
  } else if (placeholder == "DB") {
    out.kind = CompletionOption::ValueKind::Database;
  } else if (std::find(kFiles.begin(), kFiles.end(), placeholder) != kFiles.end()) {
    out.kind = CompletionOption::ValueKind::File;
  } else {
    out.kind = CompletionOption::ValueKind::Free;
  }
  return out;
}

void completion_nodes(const CLI::App& app, const std::string& key, std::vector<CompletionNode>& nodes) {
  CompletionNode node{key, {}, {}, false, {}};
  for (const CLI::App* sub : children(app))
    node.subverbs.emplace_back(sub->get_name(), sub->get_description());
  for (const CLI::Option* option : named_options(app)) node.options.push_back(completion_option(*option));
  for (const CLI::Option* option :
       app.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    const CompletionOption positional = completion_option(*option);
    node.takes_files = node.takes_files || positional.kind == CompletionOption::ValueKind::File;
    if (positional.kind == CompletionOption::ValueKind::Choices)
      node.choices += (node.choices.empty() ? "" : " ") + positional.values;
  }
  nodes.push_back(std::move(node));
  for (const CLI::App* sub : children(app))
    completion_nodes(*sub, key.empty() ? sub->get_name() : key + " " + sub->get_name(), nodes);
}

std::vector<CompletionNode> completion_model(const CLI::App& app) {
  std::vector<CompletionNode> nodes;
  completion_nodes(app, "", nodes);
  return nodes;
}

// bash (zsh loads the same through bashcompinit): the command path from the words before the cursor, then the
// value of the option before the cursor, or the path's subverbs and options, or files.
std::string bash_function(const CLI::App& app) {
  std::string keys, words_cases, value_cases;
  for (const CompletionNode& node : completion_model(app)) {
    if (!node.key.empty()) keys += (keys.empty() ? "" : "|") + ("\"" + node.key + "\"");
    std::string words = node.choices;
    for (const auto& [sub, description] : node.subverbs) words += (words.empty() ? "" : " ") + sub;
    for (const CompletionOption& option : node.options)
      for (const std::string& name : option.names) words += (words.empty() ? "" : " ") + name;
    words_cases += fmt::format("    \"{}\") words=\"{}\" ;;\n", node.key, words);
    for (const CompletionOption& option : node.options) {
      if (option.kind == CompletionOption::ValueKind::None) continue;
      std::string patterns;
      for (const std::string& name : option.names)
        patterns += (patterns.empty() ? "" : "|") + fmt::format("\"{} {}\"", node.key, name);
      std::string action;
      switch (option.kind) {
        case CompletionOption::ValueKind::Choices:
          action = fmt::format("COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))", option.values);
          break;
        case CompletionOption::ValueKind::File:
          action = "COMPREPLY=($(compgen -f -- \"$cur\"))";
          break;
        case CompletionOption::ValueKind::Database:
          action = "COMPREPLY=($(compgen -P sqlite: -f -- \"${cur#sqlite:}\") postgresql://)";
          break;
        default:
          action = "COMPREPLY=()";  // a number, a probe, a time: nothing to offer
      }
      value_cases += fmt::format("    {}) {}; return 0 ;;\n", patterns, action);
    }
  }
  return fmt::format(
      "_ett() {{\n"
      "  local cur=\"${{COMP_WORDS[COMP_CWORD]}}\" prev=\"\" key=\"\" next w i words=\"\"\n"
      "  (( COMP_CWORD > 1 )) && prev=\"${{COMP_WORDS[COMP_CWORD-1]}}\"\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=\"${{COMP_WORDS[i]}}\"\n"
      "    [[ $w == -* ]] && continue\n"
      "    next=\"${{key:+$key }}$w\"\n"
      "    case \"$next\" in\n"
      "      {}) key=\"$next\" ;;\n"
      "    esac\n"
      "  done\n"
      "  case \"$key $prev\" in\n"
      "{}"
      "  esac\n"
      "  case \"$key\" in\n"
      "{}"
      "  esac\n"
      "  COMPREPLY=()\n"
      "  for w in $words; do [[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\"); done\n"
      "  [[ ${{#COMPREPLY[@]}} -eq 0 && $cur != -* ]] && COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  return 0\n"
      "}}\n",
      keys, value_cases, words_cases);
}

std::string bash_completion(const CLI::App& app) {
  return fmt::format(
      "# bash completion for ett ({}), generated by `ett completion bash` from its option definitions.\n"
      "{}complete -o filenames -F _ett ett\n",
      version_text(), bash_function(app));
}

// zsh: the bash function through zsh's own bashcompinit, so both shells complete the same words and values.
std::string zsh_completion(const CLI::App& app) {
  return fmt::format(
      "# zsh completion for ett ({}), generated by `ett completion zsh` from its option definitions:\n"
      "# source <(ett completion zsh) after compinit.\n"
      "autoload -U +X bashcompinit && bashcompinit\n"
      "{}complete -o filenames -F _ett ett\n",
      version_text(), bash_function(app));
}

// A text in fish's single quotes.
std::string fish_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "'";
}

// fish: one `complete` line per subverb list and option, each guarded by the command path (__ett_key).
std::string fish_completion(const CLI::App& app) {
  const std::vector<CompletionNode> nodes = completion_model(app);
  std::string keys, lines;
  for (const CompletionNode& node : nodes) {
    if (!node.key.empty()) keys += " " + fish_quote(node.key);
    const std::string guard = fmt::format("-n {}", fish_quote("test (__ett_key) = " + fish_quote(node.key)));
    if (!node.subverbs.empty()) {
      for (const auto& [sub, description] : node.subverbs)
        lines += fmt::format("complete -c ett {} -f -a {} -d {}\n", guard, fish_quote(sub),
                             fish_quote(description));
    } else if (!node.choices.empty()) {
      lines += fmt::format("complete -c ett {} -f -a {}\n", guard, fish_quote(node.choices));
    } else if (!node.takes_files) {
      lines += fmt::format("complete -c ett {} -f\n", guard);
    }
    for (const CompletionOption& option : node.options) {
      std::string names;
      for (const std::string& name : option.names)
        names += name.rfind("--", 0) == 0 ? " -l " + name.substr(2) : " -s " + name.substr(1);
      std::string values;
      switch (option.kind) {
        case CompletionOption::ValueKind::None:
          break;
        case CompletionOption::ValueKind::Choices:
          values = " -x -a " + fish_quote(option.values);
          break;
        case CompletionOption::ValueKind::File:
          values = " -r -F";
          break;
        case CompletionOption::ValueKind::Database:
          values = " -x -a " + fish_quote(
                                   "(__fish_complete_path (string replace -r '^sqlite:' '' -- "
                                   "(commandline -ct)) | string replace -r '^' sqlite:) postgresql://");
          break;
        case CompletionOption::ValueKind::Free:
          values = " -x";
          break;
      }
      lines += fmt::format("complete -c ett {}{}{} -d {}\n", guard, names, values, fish_quote(option.help));
    }
  }
  return fmt::format(
      "# fish completion for ett ({}), generated by `ett completion fish` from its option definitions:\n"
      "# ett completion fish > ~/.config/fish/completions/ett.fish\n"
      "set -g __ett_keys{}\n"
      "function __ett_key --description 'the ett command path before the cursor: \"\", \"ls\", \"analyze "
      "durations\"'\n"
      "    set -l key ''\n"
      "    for w in (commandline -opc)[2..-1]\n"
      "        string match -q -- '-*' $w; and continue\n"
      "        set -l next (string trim -- \"$key $w\")\n"
      "        contains -- $next $__ett_keys; and set key $next\n"
      "    end\n"
      "    echo $key\n"
      "end\n"
      "{}",
      version_text(), keys, lines);
}

std::string completion_script(const CLI::App& app, const std::string& shell) {
  if (shell == "zsh") return zsh_completion(app);
  if (shell == "fish") return fish_completion(app);
  return bash_completion(app);
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
  CLI::App* completion = app.add_subcommand(
      "completion", "Print the completion script of bash, zsh or fish: source <(ett completion bash)");
  auto shell = std::make_shared<std::string>();
  completion->add_option("SHELL", *shell, "bash, zsh or fish")
      ->type_name("bash|zsh|fish")
      ->check(CLI::IsMember({"bash", "zsh", "fish"}))
      ->required();
  CLI::App* man = app.add_subcommand(
      "man", "Print the manual page of ett or of one verb (roff, or markdown): ett man [VERB] | man -l -");
  auto page = std::make_shared<std::vector<std::string>>();
  auto markdown = std::make_shared<bool>(false);
  man->add_option("VERB", *page, "A verb (and perhaps its subverb, whose page is the verb's): ett-VERB(1)")
      ->type_name("WORD")
      ->expected(0, 2);
  // Hidden from the option lists (its page's footer and examples say it): the reference's generator uses it.
  man->add_flag("--markdown", *markdown, "Markdown instead of roff")->group("");
  man->footer(
      "A verb's page covers its subverbs (ett-analyze(1) holds durations); `ett man VERB SUBVERB` prints "
      "it.\n"
      "--markdown prints the same page as markdown: scripts/gen-reference writes docs/reference/cli with "
      "it.");
  auto print = [](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  };
  // ett-analyze(1) covers `analyze durations`: a subverb names the page of its verb, once it is checked.
  auto print_page = [&app, print, page, markdown] {
    const CLI::App* verb = nullptr;
    const CLI::App* level = &app;
    for (const std::string& word : *page) {
      const CLI::App* child = find_child(*level, word);
      if (!child) {
        std::fprintf(stderr, "ett: man: %s has no command '%s' (`ett man%s` lists them)\n",
                     level == &app ? "ett" : ("ett " + level->get_name()).c_str(), word.c_str(),
                     level == &app ? "" : (" " + level->get_name()).c_str());
        return 1;
      }
      if (verb == nullptr) verb = child;
      level = child;
    }
    return print(manual_page(app, verb, *markdown ? PageFormat::Markdown : PageFormat::Roff));
  };
  // The lambdas keep `shell` and `page` alive: CLI11 writes the parsed values into them after this function
  // returned.
  return {{completion, [&app, print, shell] { return print(completion_script(app, *shell)); }},
          {man, print_page}};
}

}  // namespace ett::cli
