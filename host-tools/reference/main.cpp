// main.cpp: ett-reference, the build-tree program that prints a document of docs/reference/ (not installed).
//   ett-reference list              the documents: "<name> <source>" per line
//   ett-reference NAME SOURCE_DIR   the markdown of one, from the source tree at SOURCE_DIR
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "reference.h"

namespace ett::reference {

namespace {

constexpr Document kDocuments[] = {
    {"kernel-cmdline", "kernel/config/cmdline_options.h", kernel_cmdline_doc},
    {"trace-format", "kernel/include/ett/trace_format.h", trace_format_doc},
    {"schema", "host-tools/db/schema.cpp", schema_doc},
    {"exit-codes", "host-tools/common/exit_codes.cpp", exit_codes_doc},
};

int run(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "list") == 0) {
    for (const Document& document : kDocuments) std::printf("%s %s\n", document.name, document.source);
    return 0;
  }
  if (argc == 3) {
    for (const Document& document : kDocuments) {
      if (std::strcmp(argv[1], document.name) != 0) continue;
      auto text = document.render(argv[2]);
      if (!text) {
        std::fprintf(stderr, "ett-reference: %s: %s\n", document.name, text.error().message.c_str());
        return 1;
      }
      std::fwrite(text->data(), 1, text->size(), stdout);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
  }
  std::fprintf(stderr, "usage: ett-reference list | ett-reference NAME SOURCE_DIR\n");
  return 1;
}

}  // namespace

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

}  // namespace ett::reference

int main(int argc, char** argv) {
  return ett::reference::run(argc, argv);
}
