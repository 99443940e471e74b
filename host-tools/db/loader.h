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
  bool salvage = false;             // a damaged session's good chunks too; its lost seqs go to `losses`
};

struct LoadedSession {
  uint32_t session = 0;
  int64_t trace_id = 0;
  uint64_t events = 0;
  bool already_loaded = false;
  std::string repaired;  // already loaded, but its events rows were not all there: why (they were reloaded)
  std::string health;    // "ok", "partial"
  std::string skipped;   // why the session was not loaded (--all only; "" when it was)
  std::string lost;      // --salvage: the seqs lost, lost_ranges_text ("" when none)
  // Time spent in the database (a session loaded as it is decoded: with the decoding, which runs beside it)
  // and this thread's CPU time in it (user + system).
  double seconds = 0;
  double cpu_seconds = 0;
};

// Called with the session being loaded and the load's progress; returning false abandons the load.
using SessionProgress = std::function<bool(uint32_t session, uint64_t done, uint64_t total)>;

// Loads what `request` names. With --all, a session that cannot be used (corrupt, truncated) is reported in
// `skipped` and the others still load; otherwise it is an error.
Expected<std::vector<LoadedSession>> load_image(Database& db, const LoadRequest& request,
                                                const SessionProgress& progress = {});

// `ett load`: opens the database at `url` (creating a new SQLite file) and runs load_image. A SQLite file
// that this call created is removed again when nothing was loaded into it (the load failed, or every session
// was skipped): a failed load leaves no empty database behind.
Expected<std::vector<LoadedSession>> load_into(const std::string& url, const LoadRequest& request,
                                               const SessionProgress& progress = {});

}  // namespace ett::host
