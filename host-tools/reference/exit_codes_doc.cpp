// exit_codes_doc.cpp: docs/reference/exit-codes.md, from the one table of exit statuses the code returns
// (host-tools/common/exit_codes.h).
#include <fmt/format.h>

#include "common/exit_codes.h"
#include "reference.h"

namespace ett::reference {

host::Expected<std::string> exit_codes_doc(const std::string&) {
  std::string out =
      "# Exit status\n\n"
      "The exit status of every `ett` verb; `ett man VERB` lists the rows of one verb.\n\n"
      "| status | verbs | meaning |\n| --- | --- | --- |\n";
  for (const host::ExitCodeRow& row : host::exit_code_table())
    out += fmt::format("| {} | {} | {} |\n", row.code, cell(row.verbs), cell(row.meaning));
  return out;
}

}  // namespace ett::reference
