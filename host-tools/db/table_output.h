// table_output.h: prints query results as an aligned table (numbers right-aligned) or as CSV.
#pragma once

#include <string>

#include "db/database.h"

namespace ett::host {

// Columns separated by two spaces under a header and a rule; NULL prints as nothing. Ends with "(N rows)".
std::string format_table(const ResultTable& table);
// RFC 4180: a header line, then one line per row; fields with , " or newlines are quoted.
std::string format_csv(const ResultTable& table);

}  // namespace ett::host
