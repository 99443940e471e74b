// utc_columns.h: `--time utc` for the analyses: their report with the UTC of each time added, from the
// trace's stored PPS mapping (`ett analyze pps`); the conversion and the ISO-8601 text are analysis/pps.h's.
#pragma once

#include <string>
#include <string_view>

#include "analysis/capture.h"
#include "analysis/histogram.h"
#include "analysis/intervals.h"
#include "analysis/output.h"
#include "analysis/pps.h"
#include "common/status.h"
#include "db/database.h"

namespace ett::cli {

// A capture's times (ns from its start) as UTC text.
struct UtcClock {
  host::PpsResult mapping;
  uint64_t start_tsc = 0;
  uint64_t tsc_hz = 0;
  std::string at(double time_ns) const;
  // A TSC stamp as UTC text (exact: the mapping is in TSC ticks).
  std::string at_tsc(uint64_t tsc) const;
  // A UTC instant as ns from the capture's start: the inverse of at().
  double capture_ns(const host::UtcNs& time) const;
  // at() and the label source, for a report that adds UTC times as it is written.
  host::UtcLabels labels() const;
};

// `--time ns|utc`: true for utc; a usage error for anything else.
host::Expected<bool> parse_time_option(const std::string& text);

// The stored mapping of the capture; a usage error naming `ett analyze pps` when there is none or it has no
// UTC labels.
host::Expected<UtcClock> utc_clock(host::Database& db, const host::CaptureInfo& info);

// "2026-11-23T16:00:05.5Z": an ISO-8601 UTC time with up to 9 digits of a second (Z, +00:00 or no zone).
host::Expected<host::UtcNs> parse_utc_instant(std::string_view text);

// `out` (format_histogram's, by time buckets) with start_utc for every bucket.
std::string histogram_with_utc(const std::string& out, const host::HistogramResult& result,
                               const UtcClock& clock, host::OutputFormat format);

// `out` (format_intervals') with the UTC of each probe's first and last event (first_utc, last_utc) and of
// both events of every pair closer than tau (previous_time_utc, time_utc; JSON and text).
std::string intervals_with_utc(const std::string& out, const host::IntervalsResult& result,
                               const UtcClock& clock, host::OutputFormat format);

// `ett query --time utc`: the rows handed on to `next` with a last column time_utc, each row's tsc in UTC.
// Errors (from columns()): a result without a tsc column, named by `query`.
class TimeUtcColumn final : public host::RowSink {
 public:
  TimeUtcColumn(host::RowSink& next, const UtcClock& clock, std::string query)
      : m_next(next), m_clock(clock), m_query(std::move(query)) {}
  host::Status columns(std::span<const std::string> names) override;
  host::Status rows(std::span<const std::vector<host::DbValue>> batch) override;

 private:
  host::RowSink& m_next;
  const UtcClock& m_clock;
  std::string m_query;
  size_t m_tsc = 0;  // the tsc column
  std::vector<std::vector<host::DbValue>> m_batch;
};

}  // namespace ett::cli
