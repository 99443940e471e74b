// sqlite.h: the trace database in an SQLite file (the embedded default).
#pragma once

#include <memory>
#include <string>

#include "db/database.h"

namespace ett::host {

Expected<std::unique_ptr<Database>> open_sqlite_database(const std::string& path);

}  // namespace ett::host
