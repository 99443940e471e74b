// cli_util.cpp: what every `ett` subcommand shares: error reporting, JSON strings, times.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "commands.h"
#include "common/exit_codes.h"
#include "common/interrupt.h"
#include "common/output_target.h"
#include "db/database.h"
#include "progress.h"

namespace ett::cli {

int report(const host::HostError& error) {
  Progress::erase_current();
  std::fprintf(stderr, "ett: %s\n", error.message.c_str());
  // The exit status per error class (common/exit_codes.h): scripts tell a wrong disk from a damaged one.
  switch (error.kind) {
    case host::ErrorKind::NotTraceDisk:
      return host::kExitNotTraceDisk;
    case host::ErrorKind::UnknownVersion:
      return host::kExitUnknownVersion;
    case host::ErrorKind::BadCrc:
      return host::kExitBadCrc;
    case host::ErrorKind::Truncated:
      return host::kExitTruncated;
    case host::ErrorKind::EmptyDisk:
      return host::kExitEmptyDisk;
    case host::ErrorKind::NoSuchSession:
      return host::kExitNoSuchSession;
    case host::ErrorKind::KernelFailure:
      return host::kExitKernelFailure;
    case host::ErrorKind::Timeout:
      return host::kExitTimeout;
    case host::ErrorKind::QemuFailure:
      return host::kExitQemuFailure;
    case host::ErrorKind::Interrupted:
      return host::interrupt_exit_status();
    default:
      return host::kExitUsage;
  }
}

void warn(const std::string& message) {
  Progress::erase_current();
  std::fprintf(stderr, "ett: warning: %s\n", message.c_str());
}

std::string json_escape(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string format_unix_time(uint64_t seconds) {
  if (seconds == 0) return "unknown";
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  if (!gmtime_r(&time, &utc)) return "unknown";
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &utc);
  return text;
}

void add_db_option(CLI::App* sub, std::string& db) {
  sub->add_option("--db", db, "sqlite:FILE or postgresql://... (default: $ETT_DB or sqlite:traces.db)")
      ->type_name("DB")
      ->capture_default_str();
}

host::Status require_database(const std::string& url) {
  auto parsed = host::parse_db_url(url);
  if (!parsed) return parsed.failure();
  if (parsed->engine != host::DbEngine::Sqlite) return {};  // a server refuses an unknown database itself
  struct stat st {};
  if (::stat(parsed->target.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return host::make_error(
          host::ErrorKind::Usage,
          "--db " + url + ": no such database file (`ett load` creates one; check $ETT_DB)");
    return host::make_error(host::ErrorKind::Io, host::errno_message(parsed->target, errno));
  }
  if (!S_ISREG(st.st_mode))
    return host::make_error(host::ErrorKind::Usage, "--db " + url + ": not a regular file");
  host::note_database_input(parsed->target);
  return {};
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0)
          return "'" + text + "' is not a number >= 0";
        return {};
      },
      "NUMBER>=0");
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(value) || value <= 0)
          return "'" + text + "' is not a number > 0";
        return {};
      },
      "NUMBER>0");
}

void add_trace_option(CLI::App* sub, std::optional<int64_t>& trace) {
  sub->add_option("--trace", trace, "Trace id (default: the most recently loaded trace)")->type_name("ID");
}

void add_pair_option(CLI::App* sub, std::string& pair) {
  sub->add_option("--pair", pair,
                  "same-code: an end closes the oldest open start with its code; fifo: the oldest, any code")
      ->type_name("same-code|fifo")
      ->capture_default_str();
}

}  // namespace ett::cli
