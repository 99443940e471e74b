// perfetto.cpp: writes the Chrome trace-event JSON format (timestamps in microseconds).
#include "export/perfetto.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "common/decimals.h"
#include "common/row_cursor.h"
#include "common/tsc_time.h"
#include "export/exporters.h"

namespace ett::host {

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else
      out += c;
  }
  return out + "\"";
}

// The "ts" of an instant: µs with three decimals, from the capture start or (UTC) since 1970, the latter from
// integer ns (a double of µs since 1970 keeps only about a quarter of a µs).
class Timestamps {
 public:
  Timestamps(const CaptureInfo& info, const TscUtcClock* utc)
      : m_utc(utc), m_start_tsc(info.capture_start_tsc), m_tsc_hz(info.tsc_hz) {}

  // Writes at most kMaxBytes characters at `at` and returns the end.
  char* write(char* at, double time_ns) const {
    if (!m_utc) return write_fixed<3>(at, time_ns / 1000.0);
    // Through the TSC of the instant (events and action ends are TSC stamps; time_ns came from them).
    const int64_t ns = m_utc->unix_ns(tsc_at(time_ns, m_start_tsc, m_tsc_hz));
    return fmt::format_to(at, FMT_COMPILE("{}.{:03}"), ns / 1000, static_cast<int>(ns % 1000));
  }
  static constexpr size_t kMaxBytes = kFixedRoom;

 private:
  const TscUtcClock* m_utc;
  uint64_t m_start_tsc;
  uint64_t m_tsc_hz;
};

}  // namespace

// What formatting a line takes: the probes' names as JSON strings and the times.
struct PerfettoWriter::Format {
  Format(const CaptureInfo& info, const PerfettoOptions& options) : stamps(info, options.utc) {
    for (size_t probe = 0; probe < names.size(); ++probe) {
      names[probe] = json_string(probe_name(static_cast<int>(probe), options.probe_labels));
      longest_name = std::max(longest_name, names[probe].size());
    }
  }
  std::array<std::string, 256> names;  // [probe]
  size_t longest_name = 0;
  Timestamps stamps;
};

PerfettoWriter::PerfettoWriter(const CaptureInfo& info, int probes, TextOut& out,
                               const PerfettoOptions& options)
    : m_out(out),
      m_format(std::make_unique<const Format>(info, options)),
      m_blocks([this](std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed) {
        write(events, closed);
      }) {
  out.append("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  const std::string name = info.name.empty() ? "ETT capture" : info.name;
  out.print("{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json_string(name));
  probes = std::clamp(probes, 0, 255);
  for (int probe = 1; probe <= probes; ++probe)
    out.print(",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
              probe, m_format->names[static_cast<size_t>(probe)]);
}

PerfettoWriter::~PerfettoWriter() = default;

namespace {

std::vector<ActionEnds> action_ends(ActionList actions) {
  std::vector<ActionEnds> ends;
  ends.reserve(actions.size());
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action action = actions[i];
    ends.push_back({action.start_seq, action.end_seq, action.start_ns, action.end_ns, action.start_code,
                    action.end_code});
  }
  return ends;
}

// An action's lines: its slice's begin ('b', with the action's seqs and duration) and end ('e') on the
// capture's track; its name "action code N" needs no JSON escaping. At most kActionBytes.
constexpr size_t kActionBytes = 230 + 6 * 20 + 3 * Timestamps::kMaxBytes;
char* put_action(char* at, const ActionEnds& action, uint64_t id, const Timestamps& stamps) {
  // The begin or end event up to its name, which the begin's args follow.
  auto slice_event = [&](char* at, char phase, double time_ns) {
    at = put(at, ",\n{\"ph\":\"");
    *at++ = phase;
    at = put(at, "\",\"cat\":\"action\",\"id\":");
    at = put_int(at, id);
    at = put(at, ",\"pid\":1,\"tid\":0,\"ts\":");
    at = stamps.write(at, time_ns);
    at = put(at, ",\"name\":\"action code ");
    return put_int(at, action.start_code);
  };
  at = slice_event(at, 'b', action.start_ns);
  at = put(at, "\",\"args\":{\"start_seq\":");
  at = put_int(at, action.start_seq);
  at = put(at, ",\"end_seq\":");
  at = put_int(at, action.end_seq);
  at = put(at, ",\"duration_ns\":");
  at = write_tenths(at, action.end_ns - action.start_ns);
  at = put(at, "}}");
  at = slice_event(at, 'e', action.end_ns);
  return put(at, "\"}");
}

// The actions of `closed` (in end seq order) that go after events [begin, end) of `events`: those ending
// from the first of them on (from the start for the first), before the event after them (to the end for
// the last).
std::pair<size_t, size_t> actions_after(std::span<const AnalysisEvent> events, size_t begin, size_t end,
                                        std::span<const ActionEnds> closed) {
  auto ending_before = [closed](uint64_t seq) {
    return static_cast<size_t>(
        std::partition_point(closed.begin(), closed.end(),
                             [seq](const ActionEnds& action) { return action.end_seq < seq; }) -
        closed.begin());
  };
  return {begin == 0 ? 0 : ending_before(events[begin].seq),
          end == events.size() ? closed.size() : ending_before(events[end].seq)};
}

}  // namespace

void PerfettoWriter::write(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed) {
  // Each event: an instant on its probe's track and the probe's code on its counter track ("NAME code"), both
  // at the same time, written once. About 230 bytes; room for 150 of fixed text, the longest probe
  // name, 80 of integers (seq and tsc, 20 digits each; probe, code twice and lines, 3 each) and 2 times. Then
  // the actions whose end falls before the next event: about 260 bytes each.
  const Format& format = *m_format;
  const uint64_t first_id = m_actions_written + 1;
  if (events.empty()) {
    // Actions alone (added after the last event): a row each.
    write_independent_lines(
        closed.size(),
        [closed, first_id, &format](size_t begin, size_t end, fmt::memory_buffer& buffer) {
          RowCursor rows(buffer, end - begin, 260, kActionBytes);
          for (size_t i = begin; i < end; ++i)
            rows.done(put_action(rows.next(), closed[i], first_id + i, format.stamps));
        },
        m_out);
    m_actions_written += closed.size();
    return;
  }
  const size_t typical_row = 240 + 260 * closed.size() / events.size();
  write_independent_lines(
      events.size(),
      [events, closed, first_id, typical_row, &format](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        auto [action, last_action] = actions_after(events, begin, end, closed);
        RowCursor rows(buffer, end - begin, typical_row,
                       150 + 4 * 20 + 2 * Timestamps::kMaxBytes + format.longest_name);
        // After event `next - 1`: the actions that end before event `next` (all that are left after the
        // last).
        auto put_actions = [&](char* at, size_t next) {
          const bool all = next == events.size();
          for (; action < last_action && (all || closed[action].end_seq < events[next].seq); ++action)
            at = put_action(rows.room(at, kActionBytes), closed[action], first_id + action, format.stamps);
          return at;
        };
        char* at = put_actions(rows.next(), begin);  // those ending before the first event (chunk 0 only)
        for (size_t i = begin; i < end; ++i) {
          const AnalysisEvent& event = events[i];
          at = put(at, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":");
          at = put_int(at, event.probe);
          at = put(at, ",\"ts\":");
          const char* const ts = at;
          at = format.stamps.write(at, event.time_ns);
          const std::string_view time(ts, static_cast<size_t>(at - ts));
          at = put(at, ",\"name\":\"code ");
          at = put_int(at, event.code);
          at = put(at, "\",\"args\":{\"seq\":");
          at = put_int(at, event.seq);
          at = put(at, ",\"lines\":");
          at = put_int(at, event.lines);
          at = put(at, ",\"tsc\":");
          at = put_int(at, event.tsc);
          at = put(at, "}},\n{\"ph\":\"C\",\"pid\":1,\"name\":");
          at = put(at, format.names[event.probe]);
          at = put(at, ",\"ts\":");
          at = put(at, time);
          at = put(at, ",\"args\":{\"code\":");
          at = put_int(at, event.code);
          at = put(at, "}}");
          rows.done(put_actions(at, i + 1));
          if (i + 1 < end) at = rows.next();
        }
      },
      m_out);
  m_actions_written += closed.size();
}

void PerfettoWriter::finish(ActionList actions) {
  m_blocks.flush();
  if (!actions.empty()) write({}, action_ends(actions));
  m_out.append("\n]}\n");
}

void write_perfetto(const Capture& capture, ActionList actions, TextOut& out,
                    const PerfettoOptions& options) {
  int probes = capture.info.probe_count;
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  PerfettoWriter writer(capture.info, probes, out, options);
  // Each after the event that closed it, as `ett export` writes them; a list not in end seq order (not from
  // a pairing) after all the events, each action's id still its place in the list.
  const std::vector<ActionEnds> ends = action_ends(actions);
  if (std::is_sorted(ends.begin(), ends.end(),
                     [](const ActionEnds& a, const ActionEnds& b) { return a.end_seq < b.end_seq; })) {
    writer.add(capture.events, ends);
    writer.finish();
  } else {
    writer.add(capture.events);
    writer.finish(actions);
  }
}

std::string export_perfetto(const Capture& capture, ActionList actions, const PerfettoOptions& options) {
  TextOut out;
  write_perfetto(capture, actions, out, options);
  return out.take();
}

}  // namespace ett::host
