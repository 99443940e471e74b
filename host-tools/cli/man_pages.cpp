// man_pages.cpp: ett(1) and one ett-VERB(1) page per verb, in roff or markdown. Everything on a page comes
// from the option definitions, common/exit_codes.h or the table of examples and environment below; a page is
// first built as a small document (sections of paragraphs, option items and examples), then rendered.
#include "man_pages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commands.h"
#include "common/exit_codes.h"

namespace ett::cli {

namespace {

struct Example {
  const char* command;  // one shell line, starting with `ett`
  const char* what;
  // How the docs' test runs it on the reference page (tests/docs/run_examples.py, in the directory that
  // tests/docs/reference_fixture.sh fills): "" on the fixture's trace disk and database, kQemu after a
  // capture under QEMU, anything else is why it is not run.
  const char* run = "";
};

constexpr const char* kQemu = "qemu";

struct EnvironmentVariable {
  const char* name;
  const char* meaning;
};

// What a verb's page says beyond its options. Every verb has a row (tests/cli/man_pages_test.cpp).
struct VerbDoc {
  const char* verb;
  const char* synopsis;                          // nullptr: made from the options
  std::vector<EnvironmentVariable> environment;  // besides ETT_DB, which every verb with --db reads
  std::vector<Example> examples;
  std::vector<const char*> see_also;  // other verbs
};

constexpr EnvironmentVariable kEttDb = {
    "ETT_DB", "The trace database when --db is not given (default sqlite:traces.db)."};
constexpr EnvironmentVariable kProbeLog = {
    "ETT_PROBE_LOG", "libettprobe logs every signal it writes to this file (as the URL's log= does)."};
constexpr EnvironmentVariable kPath = {
    "PATH", "Where --qemu is looked up; a --run CMD gets it with this ett's directory first."};
constexpr EnvironmentVariable kProbeUrl = {
    "ETT_PROBE_URL",
    "Set (not read) for a --run CMD: the virtual probe's URL, for libettprobe and `ett signal`."};

const std::vector<VerbDoc>& verb_docs() {
  static const std::vector<VerbDoc> kDocs = {
      {"ls",
       nullptr,
       {},
       {{"ett ls trace.img",
         "List the sessions of a trace disk, with their status and the capture's own error."},
        {"ett ls trace.img --format json -o sessions.json", "The same as one JSON document, in a file."}},
       {"extract", "load"}},
      {"extract",
       nullptr,
       {},
       {{"ett extract trace.img -o events.csv", "The newest session's events as CSV."},
        {"ett extract trace.img --session 2 --format text", "Session 2 as aligned columns on the terminal."},
        {"ett extract trace.img --salvage -o good.csv", "The good chunks of a damaged session."}},
       {"ls", "load"}},
      {"mkdisk",
       nullptr,
       {},
       {{"ett mkdisk new.img --size 256M --name bench", "A new 256 MiB trace-disk image."},
        {"ett mkdisk /dev/sdb --force", "Label a USB stick as a trace disk, overwriting what it holds.",
         "it overwrites a disk"}},
       {"qemu", "ls"}},
      {"qemu",
       nullptr,
       {kPath, kProbeUrl},
       {{"ett qemu run --disk trace.img --scenario demo.scn", "Capture a scenario under QEMU.", kQemu},
        {"ett qemu run --disk trace.img --run 'ett signal \"$ETT_PROBE_URL\" 1 5' --check",
         "Live mode: capture while a command signals, and check what was captured.", kQemu},
        {"ett qemu run --disk trace.img --scenario requests.scn --machines 2 --sync-probe 2 --sync-period "
         "1000",
         "Two machines sharing a sync line on probe 2 (the scenario uses probe 1 only), for `ett analyze "
         "align`.",
         kQemu}},
       {"signal", "fidelity", "ls"}},
      {"synth",
       nullptr,
       {},
       {{"ett synth trace.img --events 100000", "Append a synthetic capture of 100000 events."},
        {"ett synth second.img --events 100000 --clock-ppm 40",
         "The same events stamped by a clock 40 ppm fast."},
        {"ett synth surveyed.img --survey fit",
         "A survey session of a made-up PC fit to measure (for `ett survey`)."}},
       {"load", "extract"}},
      {"survey",
       nullptr,
       {},
       {{"ett survey surveyed.img",
         "The newest survey's verdicts: one line per probe candidate, then the PC's."},
        {"ett survey surveyed.img --format json", "The same survey as one JSON document."}},
       {"ls", "synth"}},
      {"load",
       nullptr,
       {},
       {{"ett load trace.img", "Load the newest session into sqlite:traces.db."},
        {"ett load trace.img --all --db postgresql://localhost/ett", "Every session, into PostgreSQL.",
         "it needs a PostgreSQL server"}},
       {"query", "sql", "ls"}},
      {"query",
       nullptr,
       {},
       {{"ett query", "List the named queries."},
        {"ett query traces", "The loaded traces."},
        {"ett query window 1000000 2000000 --format csv", "The events between 1 ms and 2 ms."}},
       {"sql", "load"}},
      {"sql",
       nullptr,
       {},
       {{"ett sql \"SELECT probe, count(*) FROM events GROUP BY probe\"", "Any read-only SQL."},
        {"ett sql - --format csv < query.sql", "SQL from standard input, rows as CSV."}},
       {"query", "load"}},
      {"label",
       nullptr,
       {},
       {{"ett label --probe 1 \"node A\"", "Name probe 1 of the newest trace."}},
       {"export", "report"}},
      {"analyze",
       nullptr,
       {},
       {{"ett analyze precision", "tau, epsilon and pi of a mode=calibrate capture (stored).",
         "it needs a mode=calibrate capture: docs/guide/analyses.md runs one"},
        {"ett analyze durations --from 1 --to 2 --pair fifo",
         "Durations from probe 1's events to probe 2's."},
        {"ett analyze histogram --by time:1ms --format csv", "Events per millisecond."},
        {"ett analyze align --traces 1,2 --sync 2", "Align two captures on a shared sync line."},
        {"ett analyze pps --line D7", "The TSC-to-UTC mapping from a PPS line on D7.",
         "it needs a capture with a PPS line: docs/guide/absolute-time.md runs one"}},
       {"compare", "report", "export"}},
      {"compare",
       nullptr,
       {},
       {{"ett compare --baseline 1,2,3 --candidate 4,5,6 --from 1 --to 2",
         "Gate on the median duration, 5 % allowed."},
        {"ett compare --baseline 1 --candidate 2 --from 1 --to 2 --stat p99 --max-regression 250ns --format "
         "markdown",
         "A CI job summary on the 99th percentile."}},
       {"analyze", "report"}},
      {"export",
       nullptr,
       {},
       {{"ett export --format vcd -o trace.vcd", "The newest trace for GTKWave or PulseView."},
        {"ett export --format perfetto -o trace.json --from 1 --to 2", "Perfetto, with action slices."}},
       {"label", "report"}},
      {"report",
       nullptr,
       {},
       {{"ett report -o report.html", "The HTML report of the newest trace."},
        {"ett report -o actions.html --from 1 --to 2 --baseline 1,2", "With durations and a comparison."}},
       {"analyze", "compare", "export"}},
      {"signal",
       nullptr,
       {kProbeLog},
       {{"ett signal \"$ETT_PROBE_URL\" 1 5", "Show code 5 on probe 1 (inside `ett qemu run --run`).",
         "it runs inside `ett qemu run --run`, as the qemu page's example does"},
        {"ett signal ppdev:/dev/parport0 2 0", "Code 0 on probe 2 of a real parallel-port cable.",
         "it needs a parallel port"}},
       {"qemu"}},
      {"fidelity",
       nullptr,
       {},
       {{"ett fidelity trace.img --sent-log sent.csv", "The fidelity report of a run, again.", kQemu},
        {"ett fidelity trace.img --sent-log sent.csv --check --format json", "Checked, as JSON.", kQemu}},
       {"qemu"}},
      {"help",
       "**ett help** [__VERB__ [__SUBVERB__]]",
       {},
       {{"ett help", "The verbs."}, {"ett help analyze durations", "The options of one subverb."}},
       {"man", "completion"}},
      {"completion",
       nullptr,
       {},
       {{"source <(ett completion bash)", "Complete verbs, options and their values in this bash."},
        {"ett completion bash > ~/.local/share/bash-completion/completions/ett", "In every new bash."},
        {"ett completion fish > ~/.config/fish/completions/ett.fish", "In every new fish."},
        {"ett completion zsh > ~/.ett-completion.zsh",
         "For zsh: add `source ~/.ett-completion.zsh` after compinit in ~/.zshrc."}},
       {"help", "man"}},
      {"man",
       nullptr,
       {},
       {{"ett man | man -l -", "Read ett(1).", "it opens the man pager"},
        {"ett man analyze | man -l -", "Read ett-analyze(1).", "it opens the man pager"},
        {"ett man --markdown analyze", "The same page as markdown (docs/reference/cli/ett-analyze.md)."}},
       {"help"}},
  };
  return kDocs;
}

const VerbDoc* find_doc(const std::string& verb) {
  for (const VerbDoc& doc : verb_docs())
    if (verb == doc.verb) return &doc;
  return nullptr;
}

// The document a page is built as, before rendering.
struct Item {
  std::string term;  // as markup: see Renderer::term
  std::string text;
};

struct Block {
  enum class Kind { Paragraph, Heading, Items, Example };
  Kind kind;
  std::string text;         // Paragraph, Heading; Example: the command
  std::string detail;       // Example: what it does
  std::string run;          // Example: how the docs' test runs it (Example::run)
  std::vector<Item> items;  // Items
};

struct Section {
  std::string title;
  std::vector<Block> blocks;
};

struct Page {
  std::string name;                   // "ett-analyze"
  std::string summary;                // NAME's text after the dash
  std::vector<std::string> synopsis;  // lines, each as term markup
  std::vector<Section> sections;
};

// A term is plain text in which `**x**` is a literal (bold) and `__x__` a placeholder (italic): the two
// renderers turn them into \fB..\fR / \fI..\fR or `x` / *x*.
std::string literal(const std::string& text) {
  return "**" + text + "**";
}
std::string placeholder(const std::string& text) {
  return "__" + text + "__";
}

std::vector<const CLI::App*> subverbs(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::vector<std::string> option_names(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) names.push_back("-" + name);
  for (const std::string& name : option.get_lnames()) names.push_back("--" + name);
  return names;
}

// CLI11 shows an option's value as its type name and each validator's description after a colon
// ("S:NUMBER>0", "N:[1 - 8]"). A page names the value by the type name alone and says the check in words; the
// validators ett uses describe themselves as NUMBER... or [MIN - MAX] (commands.h), and the choice lists'
// own descriptions are blank where the placeholder lists them.
struct ValueName {
  std::string placeholder;
  std::vector<std::string> checks;  // "> 0", "1 to 8"
};

// "NUMBER>0" -> "> 0", "NUMBER" -> "a number", "[1 - 8]" -> "1 to 8"; nothing for another description.
std::optional<std::string> check_in_words(const std::string& check) {
  if (check == "NUMBER") return "a number";
  if (check.rfind("NUMBER", 0) == 0) {
    const size_t bound = check.find_first_not_of("<>=", 6);
    return check.substr(6, bound - 6) + " " + check.substr(bound);
  }
  const size_t dash = check.find(" - ");
  if (check.size() > 2 && check.front() == '[' && check.back() == ']' && dash != std::string::npos)
    return check.substr(1, dash - 1) + " to " + check.substr(dash + 3, check.size() - dash - 4);
  return std::nullopt;
}

ValueName value_name(const CLI::Option& option) {
  ValueName value{option.get_type_name(), {}};
  for (size_t colon; (colon = value.placeholder.rfind(':')) != std::string::npos;) {
    const std::optional<std::string> check = check_in_words(value.placeholder.substr(colon + 1));
    if (!check) break;  // "P[:C]", "time:BUCKET": a colon of the placeholder itself
    value.checks.insert(value.checks.begin(), *check);
    value.placeholder.erase(colon);
  }
  return value;
}

std::string option_term(const CLI::Option& option) {
  std::string term;
  if (option.get_positional()) return placeholder(option.get_name());
  for (const std::string& name : option_names(option)) term += (term.empty() ? "" : ", ") + literal(name);
  if (option.get_type_size() != 0 && !option.get_type_name().empty())
    term += " " + placeholder(value_name(option).placeholder);
  return term;
}

std::string option_text(const CLI::Option& option) {
  std::string text = option.get_description();
  std::vector<std::string> notes;
  if (option.get_required()) notes.push_back("required");
  for (const std::string& check : value_name(option).checks) notes.push_back(check);
  if (!option.get_default_str().empty()) notes.push_back("default " + option.get_default_str());
  if (!notes.empty()) {
    text += " (";
    for (size_t i = 0; i < notes.size(); ++i) text += (i == 0 ? "" : "; ") + notes[i];
    text += ")";
  }
  return text;
}

Block option_items(const CLI::App& app) {
  Block block{Block::Kind::Items, {}, {}, {}};
  for (const CLI::Option* option : app.get_options())
    if (!option->get_group().empty())  // a hidden option, as in --help
      block.items.push_back({option_term(*option), option_text(*option)});
  return block;
}

// "ett analyze durations --from P[:C] --to P[:C] [OPTIONS]", "ett ls [OPTIONS] IMAGE".
std::string synopsis_line(const CLI::App& app, const std::string& path) {
  std::string line = literal(path);
  bool optional = false;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() || option->get_group().empty()) continue;
    if (option->get_required())
      line +=
          " " + literal(option_names(*option).back()) + " " + placeholder(value_name(*option).placeholder);
    else
      optional = true;
  }
  if (optional) line += " [" + placeholder("OPTIONS") + "]";
  for (const CLI::Option* option : app.get_options()) {
    if (!option->get_positional()) continue;
    std::string word = placeholder(option->get_name());
    if (option->get_expected_max() > 1) word += "...";
    line += " " + (option->get_required() ? word : "[" + word + "]");
  }
  return line;
}

// Whether an exit-status row ("every verb", "every verb but compare", "qemu run, fidelity") applies to verb.
bool row_applies(const host::ExitCodeRow& row, const std::string& verb) {
  const std::string verbs = row.verbs;
  if (verbs == "every verb") return true;
  if (verbs.rfind("every verb but ", 0) == 0) return verbs.substr(15) != verb;
  size_t start = 0;
  while (start <= verbs.size()) {
    size_t end = verbs.find(", ", start);
    if (end == std::string::npos) end = verbs.size();
    const std::string name = verbs.substr(start, end - start);
    if (name == verb || name.rfind(verb + " ", 0) == 0) return true;
    start = end + 2;
  }
  return false;
}

Section exit_status(const std::string& verb) {
  Section section{"EXIT STATUS", {{Block::Kind::Items, {}, {}, {}}}};
  for (const host::ExitCodeRow& row : host::exit_code_table()) {
    if (!verb.empty() && !row_applies(row, verb)) continue;
    std::string text = row.meaning;
    if (verb.empty()) text = std::string(row.verbs) + ": " + text;
    section.blocks[0].items.push_back({literal(std::to_string(row.code)), text});
  }
  return section;
}

bool reads_database(const CLI::App& app) {
  if (app.get_option_no_throw("--db") != nullptr) return true;
  for (const CLI::App* sub : subverbs(app))
    if (reads_database(*sub)) return true;
  return false;
}

Section environment(const std::vector<EnvironmentVariable>& variables) {
  Section section{"ENVIRONMENT", {}};
  if (variables.empty()) {
    section.blocks.push_back({Block::Kind::Paragraph, "This verb reads no environment variable.", {}, {}});
    return section;
  }
  Block items{Block::Kind::Items, {}, {}, {}};
  for (const EnvironmentVariable& variable : variables)
    items.items.push_back({literal(variable.name), variable.meaning});
  section.blocks.push_back(std::move(items));
  return section;
}

Section examples(const std::vector<Example>& list) {
  Section section{"EXAMPLES", {}};
  for (const Example& example : list)
    section.blocks.push_back({Block::Kind::Example, example.command, example.what, example.run, {}});
  return section;
}

std::string page_ref(const std::string& verb) {
  return verb.empty() ? "ett(1)" : "ett-" + verb + "(1)";
}

Page verb_page(const CLI::App& verb) {
  const std::string name = verb.get_name();
  const VerbDoc* doc = find_doc(name);
  Page page{"ett-" + name, verb.get_description(), {}, {}};
  const std::vector<const CLI::App*> subs = subverbs(verb);
  if (doc != nullptr && doc->synopsis != nullptr)
    page.synopsis.push_back(doc->synopsis);
  else if (subs.empty())
    page.synopsis.push_back(synopsis_line(verb, "ett " + name));
  for (const CLI::App* sub : subs)
    page.synopsis.push_back(synopsis_line(*sub, "ett " + name + " " + sub->get_name()));

  Section description{"DESCRIPTION", {{Block::Kind::Paragraph, verb.get_description() + ".", {}, {}}}};
  if (!verb.get_footer().empty())
    description.blocks.push_back({Block::Kind::Paragraph, verb.get_footer(), {}, {}});
  Section options{"OPTIONS", {}};
  if (subs.empty()) {
    options.blocks.push_back(option_items(verb));
  } else {
    description.blocks.push_back(
        {Block::Kind::Paragraph, "Its subverbs, each with the options below:", {}, {}});
    Block list{Block::Kind::Items, {}, {}, {}};
    for (const CLI::App* sub : subs) list.items.push_back({literal(sub->get_name()), sub->get_description()});
    description.blocks.push_back(std::move(list));
    for (const CLI::App* sub : subs) {
      const std::string path = "ett " + name + " " + sub->get_name();
      options.blocks.push_back({Block::Kind::Heading, path, {}, {}});
      options.blocks.push_back(option_items(*sub));
      if (!sub->get_footer().empty())
        options.blocks.push_back({Block::Kind::Paragraph, sub->get_footer(), {}, {}});
    }
  }
  page.sections.push_back(std::move(description));
  page.sections.push_back(std::move(options));
  page.sections.push_back(exit_status(name));
  std::vector<EnvironmentVariable> variables;
  if (reads_database(verb)) variables.push_back(kEttDb);
  if (doc != nullptr) variables.insert(variables.end(), doc->environment.begin(), doc->environment.end());
  page.sections.push_back(environment(variables));
  page.sections.push_back(examples(doc != nullptr ? doc->examples : std::vector<Example>{}));
  std::string see_also = page_ref("");
  if (doc != nullptr)
    for (const char* other : doc->see_also) see_also += ", " + page_ref(other);
  page.sections.push_back({"SEE ALSO", {{Block::Kind::Paragraph, see_also, {}, {}}}});
  return page;
}

Page ett_page(const CLI::App& app) {
  Page page{"ett", "Event Timestamping Toolkit host tools", {}, {}};
  page.synopsis = {literal("ett") + " [" + literal("-q") + "] " + placeholder("VERB") + " [" +
                       placeholder("OPTIONS") + "]",
                   literal("ett --version")};
  page.sections.push_back(
      {"DESCRIPTION",
       {{Block::Kind::Paragraph,
         "The host side of ETT: it makes and reads trace disks, runs the capture kernel under QEMU, loads "
         "captures into a trace database and analyses and exports them. Each verb has a page of its own, "
         "ett-VERB(1): `ett man VERB` prints it, `ett help VERB` (or "
         "`ett VERB --help`) the same options in short.",
         {},
         {}}}});
  page.sections.push_back({"OPTIONS", {option_items(app)}});
  Block verbs{Block::Kind::Items, {}, {}, {}};
  for (const CLI::App* verb : subverbs(app)) {
    std::string text = verb->get_description();
    const std::vector<const CLI::App*> subs = subverbs(*verb);
    if (!subs.empty()) {
      text += " (";
      for (size_t i = 0; i < subs.size(); ++i) text += (i == 0 ? "" : ", ") + subs[i]->get_name();
      text += ")";
    }
    verbs.items.push_back({literal(verb->get_name()), text + "; see " + page_ref(verb->get_name()) + "."});
  }
  page.sections.push_back({"COMMANDS", {std::move(verbs)}});
  page.sections.push_back(exit_status(""));
  page.sections.push_back(environment({kEttDb, kProbeLog, kPath}));
  page.sections.push_back(
      examples({{"ett synth trace.img --events 10000", "A synthetic capture on a new trace disk."},
                {"ett load trace.img", "Into the trace database."},
                {"ett analyze durations --from 1 --to 2", "The durations of its actions."},
                {"ett man extract | man -l -", "The page of one verb.", "it opens the man pager"}}));
  std::string see_also;
  for (const CLI::App* verb : subverbs(app))
    see_also += (see_also.empty() ? "" : ", ") + page_ref(verb->get_name());
  page.sections.push_back({"SEE ALSO", {{Block::Kind::Paragraph, see_also, {}, {}}}});
  return page;
}

// Renders the markup of a term: `**x**` literal, `__x__` placeholder, the rest escaped as text.
template <typename Escape>
std::string render_term(const std::string& term, Escape escape, const char* literal_open,
                        const char* literal_close, const char* placeholder_open,
                        const char* placeholder_close) {
  std::string out;
  size_t at = 0;
  while (at < term.size()) {
    const bool is_literal = term.compare(at, 2, "**") == 0;
    const bool is_placeholder = term.compare(at, 2, "__") == 0;
    if (is_literal || is_placeholder) {
      const size_t end = term.find(is_literal ? "**" : "__", at + 2);
      const std::string inner = term.substr(at + 2, end - at - 2);
      out += (is_literal ? literal_open : placeholder_open) + escape(inner) +
             (is_literal ? literal_close : placeholder_close);
      at = end + 2;
    } else {
      const size_t next = std::min(term.find("**", at), term.find("__", at));
      out += escape(term.substr(at, next - at));
      at = next == std::string::npos ? term.size() : next;
    }
  }
  return out;
}

std::string roff_escape(const std::string& text) {
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

std::string roff_term(const std::string& term) {
  return render_term(term, roff_escape, "\\fB", "\\fR", "\\fI", "\\fR");
}

std::string render_roff(const Page& page) {
  std::string upper = page.name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string out = fmt::format(".TH {} 1 \"\" \"{}\" \"User Commands\"\n", roff_escape(upper),
                                roff_escape(version_text()));
  out += fmt::format(".SH NAME\n{} \\- {}\n", roff_escape(page.name), roff_escape(page.summary));
  out += ".SH SYNOPSIS\n";
  for (size_t i = 0; i < page.synopsis.size(); ++i)
    out += (i == 0 ? "" : ".br\n") + roff_term(page.synopsis[i]) + "\n";
  for (const Section& section : page.sections) {
    out += ".SH " + section.title + "\n";
    for (const Block& block : section.blocks) {
      switch (block.kind) {
        case Block::Kind::Paragraph:
          out += ".PP\n" + roff_escape(block.text) + "\n";
          break;
        case Block::Kind::Heading:
          out += ".SS \"" + roff_escape(block.text) + "\"\n";
          break;
        case Block::Kind::Items:
          for (const Item& item : block.items)
            out += ".TP\n" + roff_term(item.term) + "\n" + roff_escape(item.text) + "\n";
          break;
        case Block::Kind::Example:
          out += ".PP\n" + roff_escape(block.detail) + "\n.PP\n.RS\n.nf\n" + roff_escape(block.text) +
                 "\n.fi\n.RE\n";
          break;
      }
    }
  }
  return out;
}

// Markdown text: the parts outside `code spans` with the characters markdown would read escaped.
std::string markdown_escape(const std::string& text) {
  std::string out;
  bool code = false;
  for (char c : text) {
    if (c == '`') code = !code;
    if (!code && (c == '*' || c == '_' || c == '[' || c == ']' || c == '\\' || c == '#')) out += '\\';
    if (!code && c == '<')
      out += "&lt;";
    else if (!code && c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// In a term, a literal is a code span and a placeholder in italics inside it would not render: the whole
// term is one code span, the placeholders in capitals as they are.
std::string markdown_term(const std::string& term) {
  const auto plain = [](const std::string& text) { return text; };
  return "`" + render_term(term, plain, "", "", "", "") + "`";
}

std::string markdown_link(const std::string& text) {
  // "ett-analyze(1), ett(1)" -> links to the pages beside this one.
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(", ", start);
    if (end == std::string::npos) end = text.size();
    const std::string ref = text.substr(start, end - start);
    const std::string file = ref.substr(0, ref.find('(')) + ".md";
    out += (out.empty() ? "" : ", ") + fmt::format("[{}]({})", ref, file);
    start = end + 2;
  }
  return out;
}

std::string render_markdown(const Page& page) {
  std::string out = fmt::format("# {}(1)\n\n## NAME\n\n{} - {}\n\n## SYNOPSIS\n\n", page.name, page.name,
                                markdown_escape(page.summary));
  for (const std::string& line : page.synopsis)
    out += "    " +
           render_term(
               line, [](const std::string& text) { return text; }, "", "", "", "") +
           "\n";
  for (const Section& section : page.sections) {
    out += "\n## " + section.title + "\n";
    // The examples run in the docs' test (tests/docs/run_examples.py), each checked for its exit status, in a
    // directory that tests/docs/reference_fixture.sh fills first (with a capture under QEMU when one needs
    // it).
    bool runs = false, qemu = false;
    for (const Block& block : section.blocks) {
      if (block.kind != Block::Kind::Example) continue;
      runs = runs || block.run.empty() || block.run == kQemu;
      qemu = qemu || block.run == kQemu;
    }
    if (runs)
      out += fmt::format(
          "\n<!-- doctest-setup\n$ sh \"$DOCTEST_SOURCE_DIR/tests/docs/reference_fixture.sh\"{}\n-->\n",
          qemu ? " qemu" : "");
    for (const Block& block : section.blocks) {
      switch (block.kind) {
        case Block::Kind::Paragraph:
          out += "\n" +
                 (section.title == "SEE ALSO" ? markdown_link(block.text) : markdown_escape(block.text)) +
                 "\n";
          break;
        case Block::Kind::Heading:
          out += "\n### " + block.text + "\n";
          break;
        case Block::Kind::Items:
          out += "\n";
          for (const Item& item : block.items) {
            std::string text = markdown_escape(item.text);
            for (size_t at; (at = text.find('\n')) != std::string::npos;) text.replace(at, 1, " ");
            out += "- " + markdown_term(item.term) + ": " + text + "\n";
          }
          break;
        case Block::Kind::Example: {
          // A console block, as the docs' examples are, shown without its output: the test checks its exit
          // status (doctest: status), or says why it does not run it.
          const std::string how = block.run.empty()    ? "status"
                                  : block.run == kQemu ? "qemu status"
                                                       : "skip " + block.run;
          out += "\n" + markdown_escape(block.detail) + "\n\n<!-- doctest: " + how + " -->\n```console\n$ " +
                 block.text + "\n```\n";
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace

std::string manual_page(const CLI::App& app, const CLI::App* verb, PageFormat format) {
  const Page page = verb == nullptr ? ett_page(app) : verb_page(*verb);
  return format == PageFormat::Roff ? render_roff(page) : render_markdown(page);
}

}  // namespace ett::cli
