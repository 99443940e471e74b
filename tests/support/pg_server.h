// pg_server.h: a throwaway PostgreSQL server on a temporary directory (tests and the load benchmark).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace ett::host {

// initdb + pg_ctl from Debian's postgresql-15 ($ETT_PG_BIN overrides /usr/lib/postgresql/15/bin), listening
// only on a unix socket in its own temporary directory (no port to collide on). As root it runs as `nobody`
// (initdb refuses root), through setpriv. Stopped and removed by the destructor.
class ThrowawayPostgres {
 public:
  static Expected<ThrowawayPostgres> start();
  ThrowawayPostgres(ThrowawayPostgres&& other) noexcept;
  ThrowawayPostgres& operator=(ThrowawayPostgres&&) = delete;
  ~ThrowawayPostgres();

  // postgresql:///postgres?host=DIR&user=ett
  const std::string& uri() const { return m_uri; }
  const std::string& directory() const { return m_dir; }

 private:
  ThrowawayPostgres() = default;
  Status run(const std::vector<std::string>& args, const std::string& what) const;
  void stop();

  std::string m_dir;
  std::string m_bin;
  std::string m_uri;
  int m_uid = -1;  // run the server as this user (-1: as ourselves)
  int m_gid = -1;
  bool m_running = false;
};

}  // namespace ett::host
