// loader.h: `ett load`: decodes sessions of a trace disk and loads each as one trace, atomically and once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"

namespace ett::host {

struct LoadRequest {
  std::string image;
  std::optional<uint32_t> session;  // nullopt: the newest (unless all)
  bool all = false;                 // every usable session on the disk
};

struct LoadedSession {
  uint32_t session = 0;
  int64_t trace_id = 0;
  uint64_t events = 0;
  bool already_loaded = false;
  std::string health;      // "ok", "partial"
  std::string skipped;     // why the session was not loaded (--all only; "" when it was)
  double seconds = 0;      // time spent in the database
  double cpu_seconds = 0;  // CPU time of this thread in the database part (user + system)
};

// Called with the session being loaded and the load's progress; returning false abandons the load.
using SessionProgress = std::function<bool(uint32_t session, uint64_t done, uint64_t total)>;

// Loads what `request` names. With --all, a session that cannot be used (corrupt, truncated) is reported in
// `skipped` and the others still load; otherwise it is an error.
Expected<std::vector<LoadedSession>> load_image(Database& db, const LoadRequest& request,
                                                const SessionProgress& progress = {});

}  // namespace ett::host
