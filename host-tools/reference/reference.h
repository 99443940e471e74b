// reference.h: the documents of docs/reference/ that do not come from `ett man`: each is printed as markdown
// from the one table or header that defines it (scripts/gen-reference writes them, a ctest diffs them).
#pragma once

#include <string>

#include "common/status.h"

namespace ett::reference {

struct Document {
  const char* name;    // the file: docs/reference/<name>.md
  const char* source;  // what it is printed from, for the file's "generated from" line
  // The markdown; source_dir is the source tree, for the documents that quote a header's comments.
  host::Expected<std::string> (*render)(const std::string& source_dir);
};

host::Expected<std::string> kernel_cmdline_doc(const std::string& source_dir);
host::Expected<std::string> trace_format_doc(const std::string& source_dir);
host::Expected<std::string> schema_doc(const std::string& source_dir);
host::Expected<std::string> exit_codes_doc(const std::string& source_dir);

// A markdown table cell: | and line breaks would end it.
std::string cell(const std::string& text);

}  // namespace ett::reference
