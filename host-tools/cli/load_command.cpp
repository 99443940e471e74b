// load_command.cpp: `ett load IMAGE`: bulk-loads decoded sessions into the trace database.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "common/output_target.h"
#include "db/database.h"
#include "db/loader.h"
#include "progress.h"

namespace ett::cli {

namespace {

struct LoadOptions {
  std::string image;
  std::optional<uint32_t> session;
  bool all = false;
  bool salvage = false;
  std::string db = host::default_db_url();
};

int run_load(const LoadOptions& options) {
  using namespace ett::host;
  // The database is the output here: never the trace disk it reads.
  note_input(options.image, "the trace disk");
  if (auto url = parse_db_url(options.db); url && url->engine == DbEngine::Sqlite)
    if (auto refused = refuse_output_on_input(url->target, "--db"); !refused) return report(refused.error());
  // Ctrl-C abandons the session's transaction at its next batch (and a database file this load created is
  // removed): an interrupted load leaves nothing behind.
  Progress bar("load");
  bar.cooperative();
  bar.phase("reading " + options.image);
  const SessionProgress progress = [&bar](uint32_t session, uint64_t done, uint64_t total) {
    bar.phase(fmt::format("session {}", session));
    bar.count(done, total);
    return !bar.interrupted();
  };
  const LoadRequest request{options.image, options.session, options.all, options.salvage};
  auto loaded = load_into(options.db, request, progress);
  bar.erase();
  if (!loaded) return report(loaded.error());
  int status = 0;
  size_t skipped = 0;
  for (const LoadedSession& session : *loaded) {
    if (!session.skipped.empty()) {
      warn(fmt::format("session {} skipped: {}", session.session, session.skipped));
      status = 1;
      ++skipped;
    } else if (session.already_loaded && !session.repaired.empty()) {
      std::printf("session %u of %s was loaded as trace %lld, but %s: its %llu events were loaded again\n",
                  session.session, options.image.c_str(), static_cast<long long>(session.trace_id),
                  session.repaired.c_str(), static_cast<unsigned long long>(session.events));
    } else if (session.already_loaded) {
      std::printf("session %u of %s is already loaded as trace %lld: nothing changed\n", session.session,
                  options.image.c_str(), static_cast<long long>(session.trace_id));
    } else {
      if (!session.lost.empty())
        warn(fmt::format("session {} is damaged: salvaged {} events; lost seqs {} (in the losses table)",
                         session.session, session.events, session.lost));
      std::printf("session %u of %s loaded as trace %lld: %llu events%s in %.2f s (%.2f M events/s)\n",
                  session.session, options.image.c_str(), static_cast<long long>(session.trace_id),
                  static_cast<unsigned long long>(session.events),
                  session.health == "ok" ? "" : (" (" + session.health + ")").c_str(), session.seconds,
                  session.seconds > 0 ? session.events / session.seconds / 1e6 : 0.0);
    }
  }
  if (skipped > 0)
    return report({host::ErrorKind::Usage,
                   fmt::format("{}: {} of {} sessions skipped (see the warnings; --salvage keeps a damaged "
                               "session's good chunks)",
                               options.image, skipped, loaded->size())});
  return status;
}

}  // namespace

Command add_load_command(CLI::App& app) {
  auto options = std::make_shared<LoadOptions>();
  CLI::App* sub = app.add_subcommand("load", "Load decoded sessions into the trace database");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")
      ->type_name("PATH")
      ->required();
  auto* session =
      sub->add_option("--session", options->session, "Session number (default: the newest)")->type_name("N");
  sub->add_flag("--all", options->all, "Every session on the disk")->excludes(session);
  sub->add_flag("--salvage", options->salvage,
                "Load a damaged session's good chunks (skip those that fail their CRC); the lost seqs are "
                "stored in the losses table and named on standard error");
  add_db_option(sub, options->db);
  sub->footer(
      "Each session is loaded in one transaction, identified by disk UUID, session number and a hash of its "
      "contents: loading it again changes nothing, and an interrupted load leaves nothing behind.");
  return {sub, [options] { return run_load(*options); }};
}

}  // namespace ett::cli
