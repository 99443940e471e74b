// histogram.h: Sun Fire-style event counters: counts by code, probe or time bucket, optionally only of
// events whose eight lines pass a mask/match filter written as trits (D7..D0, each 1, 0 or X for don't care).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/capture.h"
#include "common/status.h"

namespace ett::host {

// "1X0XXXXX": D7 = 1, D5 = 0, the rest don't care -> mask 0b10100000, match 0b10000000.
struct TritPattern {
  uint8_t mask = 0;   // lines that are tested
  uint8_t match = 0;  // the values they must have
  bool matches(uint8_t lines) const { return (lines & mask) == match; }
};
Expected<TritPattern> parse_trits(std::string_view text);
std::string trits_text(const TritPattern& pattern);

// "250ns", "10us", "1.5ms", "2s" or a plain number of nanoseconds; must be > 0.
Expected<double> parse_duration_ns(std::string_view text);

enum class HistogramKey { Code, Probe, Time };
struct HistogramSpec {
  HistogramKey key = HistogramKey::Code;
  double bucket_ns = 0;  // HistogramKey::Time
};
// "code", "probe" or "time:BUCKET".
Expected<HistogramSpec> parse_histogram_by(std::string_view text);

struct HistogramRow {
  std::string label;  // "1:3" (probe:code), "2" (probe) or the bucket's start in ns
  uint8_t probe = 0;
  uint8_t code = 0;
  double start_ns = 0;  // time buckets: [start, start + bucket)
  uint64_t count = 0;
};

struct HistogramResult {
  HistogramSpec spec;
  std::optional<TritPattern> filter;
  uint64_t total = 0;              // events considered
  uint64_t matched = 0;            // events that passed the filter
  std::vector<HistogramRow> rows;  // by code: ascending probe then code; time: every bucket from the first
                                   // event's to the last's, empty ones included
};

// Counts events a batch at a time, as a trace is read (stored_histogram): no event is held. Counters of parts
// of the events merge into the counter of them all.
class HistogramCounter {
 public:
  HistogramCounter(const HistogramSpec& spec, const std::optional<TritPattern>& filter);
  void add(std::span<const AnalysisEvent> events);
  // `events` events of (probe, code) counted before (a load's event_codes): for a counter by code or probe
  // without a filter only, since a tally has neither times nor lines.
  void add_tally(uint8_t probe, uint8_t code, uint64_t events);
  void merge(const HistogramCounter& other);
  HistogramResult result() const;

 private:
  // The counter of an event of (probe, code): by code its own, by probe the probe's.
  uint64_t& slot(uint8_t probe, uint8_t code) {
    return m_counts[probe * 256 + (m_totals.spec.key == HistogramKey::Code ? code : 0)];
  }

  HistogramResult m_totals;               // spec, filter, total and matched; rows made by result()
  std::vector<uint64_t> m_counts;         // per (probe, code) at probe * 256 + code (by probe: code 0)
  std::map<int64_t, uint64_t> m_buckets;  // time buckets by index
};

HistogramResult histogram(std::span<const AnalysisEvent> events, const HistogramSpec& spec,
                          const std::optional<TritPattern>& filter);

}  // namespace ett::host
