// man_pages_test.cpp: every verb has a manual page with every section (roff and markdown), no option shows
// CLI11's default placeholders (TEXT, INT, ...), and the examples on the pages name real verbs and options.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

constexpr const char* kSections[] = {"NAME",        "SYNOPSIS",    "DESCRIPTION", "OPTIONS",
                                     "EXIT STATUS", "ENVIRONMENT", "EXAMPLES",    "SEE ALSO"};

// Whether `help` lists option `name` ("-o,--output FILE", "  --force").
bool names_option(const std::string& help, const std::string& name) {
  for (size_t at = 0; (at = help.find(name, at)) != std::string::npos; ++at) {
    const char before = at == 0 ? ' ' : help[at - 1];
    const char after = at + name.size() < help.size() ? help[at + name.size()] : '\n';
    if ((before == ' ' || before == ',') && (after == ' ' || after == ',' || after == '\n')) return true;
  }
  return false;
}

class ManPagesTest : public ::testing::Test {
 protected:
  EttRun ett(const std::vector<std::string>& args) { return run_ett_in(m_dir.file(""), args); }

  // The verbs ett(1) lists under COMMANDS.
  std::vector<std::string> verbs() {
    const EttRun page = ett({"man", "--markdown"});
    EXPECT_EQ(page.status, 0) << page.err;
    std::vector<std::string> out;
    const std::regex item("^- `([a-z]+)`: ");
    std::istringstream in(page.out.substr(page.out.find("## COMMANDS")));
    std::smatch match;
    for (std::string line; std::getline(in, line) && line.rfind("## EXIT", 0) != 0;)
      if (std::regex_search(line, match, item)) out.push_back(match[1]);
    return out;
  }

  // "analyze" -> {"analyze durations", ...}; a verb without subverbs -> itself.
  std::vector<std::string> verb_paths(const std::string& verb) {
    const std::string page = ett({"man", verb}).out;
    std::vector<std::string> out;
    const std::regex heading("^\\.SS \"ett (.+)\"$");
    std::istringstream in(page);
    std::smatch match;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, match, heading)) out.push_back(match[1]);
    if (out.empty()) out.push_back(verb);
    return out;
  }

  // `ett help analyze durations`
  std::string help(const std::string& path) {
    std::vector<std::string> args = {"help"};
    std::istringstream words(path);
    for (std::string word; words >> word;) args.push_back(word);
    const EttRun run = ett(args);
    EXPECT_EQ(run.status, 0) << path << ": " << run.err;
    return run.out;
  }

  TempDir m_dir;
};

TEST_F(ManPagesTest, EveryVerbHasAPageWithEverySection) {
  const std::vector<std::string> all = verbs();
  EXPECT_GE(all.size(), 18u);
  for (const std::string& verb : all) {
    const EttRun roff = ett({"man", verb});
    ASSERT_EQ(roff.status, 0) << verb << ": " << roff.err;
    EXPECT_EQ(roff.out.find(".TH ETT\\-"), 0u) << verb;
    const EttRun markdown = ett({"man", "--markdown", verb});
    ASSERT_EQ(markdown.status, 0) << verb << ": " << markdown.err;
    EXPECT_EQ(markdown.out.find("# ett-" + verb + "(1)\n"), 0u) << verb;
    size_t roff_at = 0, markdown_at = 0;
    for (const char* section : kSections) {
      const size_t r = roff.out.find(std::string(".SH ") + section + "\n");
      const size_t m = markdown.out.find(std::string("\n## ") + section + "\n");
      EXPECT_NE(r, std::string::npos) << verb << " has no " << section;
      EXPECT_NE(m, std::string::npos) << verb << " (markdown) has no " << section;
      EXPECT_GT(r, roff_at) << verb << ": " << section << " out of order";
      EXPECT_GT(m, markdown_at) << verb << ": " << section << " out of order";
      roff_at = r;
      markdown_at = m;
    }
    EXPECT_NE(markdown.out.find("```console\n$ "), std::string::npos) << verb << " has no example";
  }
  // ett(1) too; a subverb names its verb's page; an unknown verb is one error line.
  const EttRun ett_page = ett({"man"});
  ASSERT_EQ(ett_page.status, 0);
  EXPECT_EQ(ett_page.out.find(".TH ETT 1"), 0u);
  for (const char* section : kSections)
    EXPECT_NE(ett_page.out.find(std::string(".SH ") + section + "\n"), std::string::npos) << section;
  EXPECT_EQ(ett({"man", "analyze", "durations"}).out, ett({"man", "analyze"}).out);
  const EttRun unknown = ett({"man", "analyse"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_EQ(unknown.err_lines(), 1) << unknown.err;
}

// Each verb's EXIT STATUS lists the rows of the one table that name it: qemu's has 2-6, ls's has 10.
TEST_F(ManPagesTest, ExitStatusIsTheVerbsRowsOfTheTable) {
  const std::string qemu = ett({"man", "qemu"}).out;
  for (const char* code : {"\\fB2\\fR", "\\fB3\\fR", "\\fB6\\fR", "\\fB130\\fR"})
    EXPECT_NE(qemu.find(code), std::string::npos) << code;
  EXPECT_EQ(qemu.find("\\fB10\\fR"), std::string::npos);
  const std::string compare = ett({"man", "--markdown", "compare"}).out;
  EXPECT_NE(compare.find("- `7`: "), std::string::npos);
  EXPECT_NE(compare.find("- `1`: the gate fired"), std::string::npos);
  EXPECT_EQ(compare.find("a usage error (unknown option"), std::string::npos);
  EXPECT_NE(ett({"man", "--markdown", "query"}).out.find("- `ETT_DB`: "), std::string::npos);
  EXPECT_NE(ett({"man", "--markdown", "signal"}).out.find("- `ETT_PROBE_LOG`: "), std::string::npos);
}

// Every option of every verb names its value (FILE, N, NS, P[:C], ...): CLI11's TEXT, INT, UINT and FLOAT say
// nothing, in --help or on the pages.
TEST_F(ManPagesTest, NoOptionShowsADefaultPlaceholder) {
  const std::regex cli11_default("(^|[^A-Za-z])(TEXT|INT|UINT|FLOAT)([^A-Za-z]|$)");
  for (const std::string& verb : verbs()) {
    for (const std::string& path : verb_paths(verb)) {
      std::istringstream in(help(path));
      for (std::string line; std::getline(in, line);) {
        // "  --from P[:C] REQUIRED       Start events": the option column, before its description.
        if (line.rfind("  ", 0) != 0 || line.rfind("   ", 0) == 0) continue;
        const std::string column = line.substr(0, line.find("  ", 2));
        EXPECT_FALSE(std::regex_search(column, cli11_default)) << "ett " << path << ": " << line;
      }
    }
    const std::string page = ett({"man", "--markdown", verb}).out;
    std::istringstream in(page);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("- `", 0) != 0) continue;
      EXPECT_FALSE(std::regex_search(line.substr(0, line.find("`:")), cli11_default)) << verb << ": " << line;
    }
  }
}

// The examples are real: each starts with `ett VERB [SUBVERB]` and every option it gives is one of that
// verb's (as `ett help` lists them).
TEST_F(ManPagesTest, ExamplesNameRealVerbsAndOptions) {
  int examples = 0;
  for (const std::string& verb : verbs()) {
    const std::string page = ett({"man", "--markdown", verb}).out;
    for (size_t at = 0; (at = page.find("```console\n$ ", at)) != std::string::npos;) {
      at += 13;
      const std::string command = page.substr(at, page.find('\n', at) - at);
      ++examples;
      if (command.rfind("ett ", 0) != 0) continue;  // source <(ett completion bash)
      std::istringstream words(command);
      std::string word, path;
      words >> word;  // ett
      words >> path;
      EXPECT_EQ(path, verb) << command;
      const std::vector<std::string> paths = verb_paths(verb);
      std::string next;
      std::vector<std::string> rest;
      while (words >> next) rest.push_back(next);
      if (!rest.empty() && std::find(paths.begin(), paths.end(), verb + " " + rest.front()) != paths.end())
        path += " " + rest.front();
      const std::string options = help(path);
      for (const std::string& token : rest) {
        // `ett man --markdown` is hidden from the option lists (README's reference is checked against them);
        // ett-man(1)'s footer says it.
        if (token.rfind("-", 0) != 0 || token == "-" || (verb == "man" && token == "--markdown")) continue;
        const std::string name = token.substr(0, token.find('='));
        EXPECT_TRUE(names_option(options, name))
            << command << ": " << name << " is not an option of ett " << path;
      }
    }
  }
  EXPECT_GE(examples, 36);
}

}  // namespace
}  // namespace ett::test
