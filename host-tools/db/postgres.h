// postgres.h: the trace database on a PostgreSQL server (libpq; bulk load with binary COPY).
#pragma once

#include <memory>
#include <string>

#include "db/database.h"

namespace ett::host {

// `uri` is a libpq connection URI: postgresql://user@host:port/dbname?host=/socket/dir ...
Expected<std::unique_ptr<Database>> open_postgres_database(const std::string& uri);

}  // namespace ett::host
