// histogram.cpp: counters by code, probe or time bucket behind a trit mask/match filter.
#include "analysis/histogram.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <vector>

namespace ett::host {

Expected<TritPattern> parse_trits(std::string_view text) {
  if (text.size() != 8)
    return make_error(
        ErrorKind::Usage,
        fmt::format("--match '{}': expected 8 trits D7..D0, each 1, 0 or X (e.g. 1X0XXXXX)", text));
  TritPattern pattern;
  for (size_t i = 0; i < 8; ++i) {
    const uint8_t bit = static_cast<uint8_t>(1u << (7 - i));
    switch (text[i]) {
      case '1':
        pattern.mask |= bit;
        pattern.match |= bit;
        break;
      case '0':
        pattern.mask |= bit;
        break;
      case 'X':
      case 'x':
        break;
      default:
        return make_error(ErrorKind::Usage,
                          fmt::format("--match '{}': '{}' (D{}) is not 1, 0 or X", text, text[i], 7 - i));
    }
  }
  return pattern;
}

std::string trits_text(const TritPattern& pattern) {
  std::string text;
  for (int line = 7; line >= 0; --line) {
    const uint8_t bit = static_cast<uint8_t>(1u << line);
    text += !(pattern.mask & bit) ? 'X' : (pattern.match & bit) ? '1' : '0';
  }
  return text;
}

Expected<double> parse_duration_ns(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  double scale = 0;
  if (unit.empty() || unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  if (ec != std::errc() || scale == 0 || !(value > 0) || !std::isfinite(value))
    return make_error(ErrorKind::Usage,
                      fmt::format("'{}': expected a positive time such as 250ns, 10us, 1.5ms or 2s", text));
  return value * scale;
}

Expected<HistogramSpec> parse_histogram_by(std::string_view text) {
  HistogramSpec spec;
  if (text == "code") return spec;
  if (text == "probe") {
    spec.key = HistogramKey::Probe;
    return spec;
  }
  if (text.starts_with("time:")) {
    auto bucket = parse_duration_ns(text.substr(5));
    if (!bucket) return bucket.failure();
    spec.key = HistogramKey::Time;
    spec.bucket_ns = *bucket;
    return spec;
  }
  return make_error(ErrorKind::Usage,
                    fmt::format("--by '{}': expected code, probe or time:BUCKET (e.g. time:1ms)", text));
}

HistogramCounter::HistogramCounter(const HistogramSpec& spec, const std::optional<TritPattern>& filter)
    : m_counts(spec.key == HistogramKey::Time ? 0 : 256 * 256) {
  m_totals.spec = spec;
  m_totals.filter = filter;
}

void HistogramCounter::add(std::span<const AnalysisEvent> events) {
  const HistogramSpec& spec = m_totals.spec;
  const std::optional<TritPattern>& filter = m_totals.filter;
  // The current time bucket at hand (events come in time order, so most fall in the bucket of the one
  // before): no tree walk per event.
  int64_t current_bucket = 0;
  uint64_t* current_count = nullptr;
  for (const AnalysisEvent& event : events) {
    m_totals.total++;
    if (filter && !filter->matches(event.lines)) continue;
    m_totals.matched++;
    switch (spec.key) {
      case HistogramKey::Code:
      case HistogramKey::Probe:
        ++slot(event.probe, event.code);
        break;
      case HistogramKey::Time: {
        const auto bucket = static_cast<int64_t>(std::floor(event.time_ns / spec.bucket_ns));
        if (!current_count || bucket != current_bucket) {
          current_bucket = bucket;
          current_count = &m_buckets[bucket];
        }
        ++*current_count;
        break;
      }
    }
  }
}

void HistogramCounter::add_tally(uint8_t probe, uint8_t code, uint64_t events) {
  m_totals.total += events;
  m_totals.matched += events;
  if (m_totals.spec.key != HistogramKey::Time) slot(probe, code) += events;
}

void HistogramCounter::merge(const HistogramCounter& other) {
  m_totals.total += other.m_totals.total;
  m_totals.matched += other.m_totals.matched;
  for (size_t key = 0; key < m_counts.size() && key < other.m_counts.size(); ++key)
    m_counts[key] += other.m_counts[key];
  for (const auto& [bucket, count] : other.m_buckets) m_buckets[bucket] += count;
}

HistogramResult HistogramCounter::result() const {
  HistogramResult result = m_totals;
  const HistogramSpec& spec = m_totals.spec;
  if (spec.key == HistogramKey::Time) {
    if (!m_buckets.empty())
      for (int64_t b = m_buckets.begin()->first; b <= m_buckets.rbegin()->first; ++b) {
        HistogramRow row;
        row.start_ns = static_cast<double>(b) * spec.bucket_ns;
        row.label = fmt::format("{}", row.start_ns);
        auto it = m_buckets.find(b);
        row.count = it == m_buckets.end() ? 0 : it->second;
        result.rows.push_back(row);
      }
    return result;
  }
  for (size_t key = 0; key < m_counts.size(); ++key) {
    if (m_counts[key] == 0) continue;
    const int probe = static_cast<int>(key / 256), code = static_cast<int>(key % 256);
    HistogramRow row;
    row.probe = static_cast<uint8_t>(probe);
    row.code = static_cast<uint8_t>(code);
    row.label = spec.key == HistogramKey::Code ? fmt::format("{}:{}", probe, code) : fmt::format("{}", probe);
    row.count = m_counts[key];
    result.rows.push_back(row);
  }
  return result;
}

HistogramResult histogram(std::span<const AnalysisEvent> events, const HistogramSpec& spec,
                          const std::optional<TritPattern>& filter) {
  HistogramCounter counter(spec, filter);
  counter.add(events);
  return counter.result();
}

}  // namespace ett::host
