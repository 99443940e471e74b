// kernel_cmdline_doc.cpp: docs/reference/kernel-cmdline.md, from the table the kernel's parser takes its keys
// from (kernel/config/cmdline_options.h).
#include <fmt/format.h>

#include "config/cmdline_options.h"
#include "reference.h"

namespace ett::reference {

host::Expected<std::string> kernel_cmdline_doc(const std::string&) {
  std::string out =
      "# Kernel command line\n\n"
      "Options are `key=value` words separated by spaces, each at most once. An unknown option, a missing "
      "`=`, "
      "an empty or malformed value or a repeated option stops the kernel with a message naming the word.\n\n"
      "| option | values | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const config::CmdlineOption& option : config::kCmdlineOptions)
    out += fmt::format("| `{}=` | {} | {} | {} |\n", option.key, cell(option.values), cell(option.fallback),
                       cell(option.meaning));
  return out;
}

}  // namespace ett::reference
