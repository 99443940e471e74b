// database.cpp: picks the engine from a database URL; what both engines share.
#include "db/database.h"

#include <cstdlib>

#include "db/postgres.h"
#include "db/sqlite.h"

namespace ett::host {

std::string default_db_url() {
  const char* env = std::getenv("ETT_DB");
  return env && *env ? env : kDefaultDbUrl;
}

Expected<DbUrl> parse_db_url(const std::string& url) {
  if (url.rfind("sqlite:", 0) == 0) {
    std::string path = url.substr(7);
    if (path.rfind("//", 0) == 0) path = path.substr(2);  // sqlite:///abs/path and sqlite://rel/path
    if (path.empty()) return make_error(ErrorKind::Usage, "--db sqlite: needs a file, e.g. sqlite:traces.db");
    return DbUrl{DbEngine::Sqlite, path};
  }
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0)
    return DbUrl{DbEngine::Postgres, url};
  return make_error(ErrorKind::Usage,
                    "--db '" + url + "': expected sqlite:FILE or postgresql://[user@]host[:port]/dbname");
}

Expected<std::unique_ptr<Database>> open_database(const std::string& url) {
  ETT_TRY_ASSIGN(DbUrl parsed, parse_db_url(url));
  ETT_TRY_ASSIGN(std::unique_ptr<Database> db, parsed.engine == DbEngine::Sqlite
                                                   ? open_sqlite_database(parsed.target)
                                                   : open_postgres_database(parsed.target));
  ETT_TRY(db->ensure_schema());
  return db;
}

Expected<int64_t> latest_trace(Database& db) {
  ETT_TRY_ASSIGN(ResultTable table, db.query("SELECT max(trace_id) FROM traces", {}));
  if (table.rows.empty() || !table.rows[0][0])
    return make_error(ErrorKind::Usage, "the database holds no traces yet: load one with ett load IMAGE");
  return static_cast<int64_t>(std::stoll(*table.rows[0][0]));
}

}  // namespace ett::host
