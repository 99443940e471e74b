// perfetto_proto.cpp: writes Perfetto's protobuf trace format one TracePacket at a time: each is field 1 of
// the Trace message (its tag, its length as a varint, its bytes), so the file is a Trace without ever holding
// one. The few descriptor packets go through libprotobuf; the packets of the events and actions are encoded
// by hand (WireWriter).
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <array>
#include <optional>
#include <queue>
#include <span>
#include <utility>

#include "common/huge_pages.h"
#include "common/tsc_time.h"
#include "export/exporters.h"
#include "export/perfetto.h"
#include "export/perfetto_trace.pb.h"
#include "export/wire_writer.h"

namespace ett::host {

namespace {

namespace pb = perfetto::protos;

// The one sequence ETT writes: its interned names (event names, debug annotation names) are defined in its
// first packet, which clears the incremental state; every later event packet says it needs that state.
constexpr uint32_t kSequence = 1;
// Track uuids: the capture (a process track), then per probe its event track and its counter track, then
// the actions' tracks (one per overlap level).
constexpr uint64_t kCaptureTrack = 1;
constexpr uint64_t probe_track(int probe) {
  return 0x100 + static_cast<uint64_t>(probe);
}
constexpr uint64_t counter_track(int probe) {
  return 0x200 + static_cast<uint64_t>(probe);
}
constexpr uint64_t action_track(size_t level) {
  return 0x10000 + level;
}
// Interned name ids: "code N" is N + 1, "action code N" 0x101 + N; the debug annotations' names below.
constexpr uint64_t code_name(uint8_t code) {
  return 1 + code;
}
constexpr uint64_t action_name(uint8_t code) {
  return 0x101 + code;
}
enum AnnotationName : uint64_t { kSeq = 1, kLines, kTsc, kStartSeq, kEndSeq, kDurationNs };

using google::protobuf::io::CodedOutputStream;

// The start of one `packet` field of Trace, for a packet of `size` bytes: tag (field 1, length-delimited),
// length.
void append_packet_header(size_t size, fmt::memory_buffer& buffer) {
  uint8_t header[1 + 10];
  header[0] = (1 << 3) | 2;
  const uint8_t* const end = CodedOutputStream::WriteVarint64ToArray(size, header + 1);
  buffer.append(reinterpret_cast<const char*>(header), reinterpret_cast<const char*>(end));
}

// Appends `packet` as one `packet` field of Trace: its header, then its bytes.
void append_packet(const pb::TracePacket& packet, fmt::memory_buffer& buffer) {
  const size_t size = packet.ByteSizeLong();
  append_packet_header(size, buffer);
  const size_t at = buffer.size();
  buffer.resize(at + size);
  packet.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(buffer.data() + at));
}

// The packets of the events (one each) and of the actions (two each) are encoded by hand (WireWriter):
// libprotobuf's sizing and serialization of them cost more than the read of the events. Fields go in number
// order, like libprotobuf writes them, so the bytes are the ones it wrote (a test reparses and reserializes a
// whole export through libprotobuf and compares).

// Field numbers of perfetto_trace.proto that the hand-written packets use.
enum TraceField : uint32_t { kTracePacket = 1 };
enum PacketField : uint32_t {
  kPacketTimestamp = 8,
  kPacketSequenceId = 10,
  kPacketTrackEvent = 11,
  kPacketSequenceFlags = 13
};
enum TrackEventField : uint32_t {
  kEventDebugAnnotations = 4,
  kEventType = 9,
  kEventNameIid = 10,
  kEventTrackUuid = 11,
  kEventExtraCounterValues = 12,
  kEventExtraCounterTrackUuids = 31
};
enum DebugAnnotationField : uint32_t { kAnnotationNameIid = 1, kAnnotationUint = 3, kAnnotationDouble = 5 };

// The most bytes a hand-written packet takes, with its header: an event's is under 128 (three annotations
// of at most 15 bytes, five fields of the TrackEvent of at most 11, a 64-bit timestamp, two small fields and
// three headers), and each close() that moves a message adds at most 9.
constexpr size_t kPacketRoom = 256;

// Appends to `buffer` a `packet` field of Trace holding a TrackEvent at `timestamp`, wrapped in what every
// event of the sequence gets; `write_event` writes the TrackEvent's fields.
template <typename WriteEvent>
void append_track_event(fmt::memory_buffer& buffer, uint64_t timestamp, const WriteEvent& write_event) {
  const size_t at = buffer.size();
  buffer.reserve(at + kPacketRoom);
  WireWriter out(reinterpret_cast<uint8_t*>(buffer.data() + at));
  uint8_t* const packet = out.open(kTracePacket);
  out.varint(kPacketTimestamp, timestamp);
  out.varint(kPacketSequenceId, kSequence);
  uint8_t* const event = out.open(kPacketTrackEvent);
  write_event(out);
  out.close(event);
  out.varint(kPacketSequenceFlags, pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  out.close(packet);
  buffer.resize(static_cast<size_t>(out.at() - reinterpret_cast<uint8_t*>(buffer.data())));
}

void add_annotation(WireWriter& event, uint64_t name_iid, uint64_t value) {
  uint8_t* const annotation = event.open(kEventDebugAnnotations);
  event.varint(kAnnotationNameIid, name_iid);
  event.varint(kAnnotationUint, value);
  event.close(annotation);
}

// The event names "PREFIX N" of the 256 codes N, interned as iid(N).
void intern_code_names(pb::InternedData& interned, uint64_t (*iid)(uint8_t), const char* prefix) {
  for (unsigned code = 0; code < 256; ++code) {
    pb::EventName* name = interned.add_event_names();
    name->set_iid(iid(static_cast<uint8_t>(code)));
    name->set_name(fmt::format("{} {}", prefix, code));
  }
}

// A track of the capture in its own packet (`packet`: what else that packet carries).
void describe_track(TextOut& out, fmt::memory_buffer& buffer, uint64_t uuid, const std::string& name,
                    int rank, bool counter, pb::TracePacket packet = {}) {
  packet.set_trusted_packet_sequence_id(kSequence);
  pb::TrackDescriptor* track = packet.mutable_track_descriptor();
  track->set_uuid(uuid);
  track->set_parent_uuid(kCaptureTrack);
  track->set_name(name);
  track->set_sibling_order_rank(rank);
  if (counter) track->mutable_counter()->set_unit_name("code");
  buffer.clear();
  append_packet(packet, buffer);
  out.append(buffer);
}

// The indexes [0, n) in ascending order of key(i), ties in index order: what a stable sort of the indexes
// gives, at a fraction of its time for millions of keys. Each key (less the smallest) and its index are
// packed into one word, index in the low bits, and the words sorted by the key's bits with an LSD radix sort,
// which keeps the index order of equal keys; keys too far apart to pack take the stable sort.
class KeyOrder {
 public:
  template <typename Key>
  KeyOrder(size_t n, const Key& key) {
    if (n == 0) return;
    uint64_t low = key(0), high = low;
    for (size_t i = 1; i < n; ++i) {
      const uint64_t k = key(i);
      low = std::min(low, k);
      high = std::max(high, k);
    }
    const int index_bits = std::bit_width(n - 1);
    const int key_bits = std::bit_width(high - low);
    m_packed = faulted_in_vector<uint64_t>(n);
    if (index_bits + key_bits > 64) {
      std::vector<uint32_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
      std::copy(order.begin(), order.end(), m_packed.begin());
      return;
    }
    m_index_mask = (uint64_t{1} << index_bits) - 1;  // index_bits < 64: n fits in 32 bits
    for (size_t i = 0; i < n; ++i) m_packed[i] = (key(i) - low) << index_bits | i;
    constexpr int kDigitBits = 11;
    constexpr size_t kBuckets = size_t{1} << kDigitBits;
    auto spare = faulted_in_vector<uint64_t>(n);
    for (int shift = index_bits; shift < index_bits + key_bits; shift += kDigitBits) {
      std::array<size_t, kBuckets> start{};
      for (uint64_t word : m_packed) ++start[(word >> shift) & (kBuckets - 1)];
      size_t at = 0;
      for (size_t& bucket : start) at += std::exchange(bucket, at);
      for (uint64_t word : m_packed) spare[start[(word >> shift) & (kBuckets - 1)]++] = word;
      m_packed.swap(spare);
    }
  }
  uint32_t operator[](size_t k) const { return static_cast<uint32_t>(m_packed[k] & m_index_mask); }

 private:
  std::vector<uint64_t> m_packed;
  uint64_t m_index_mask = UINT32_MAX;
};

// The slices in ascending order of their starts, ties in index order, without a sort where it can:
// slices that do not overlap come in start order already (the order is the index), and the seqs of the
// slices' start events (seq_of, when given) usually are the start order, as events are in time order. The
// seqs are scattered into an array indexed by seq, which is walked; the order is used only if no two slices
// share a seq and their starts never go down along it (runs of equal starts are put in index order).
// Otherwise, and when the seqs spread over more than four per slice, a radix sort (KeyOrder): 4 bytes per seq
// instead of 16 per slice.
class StartOrder {
 public:
  template <typename SeqOf>
  StartOrder(std::span<const uint64_t> starts, const SeqOf* seq_of) {
    if (std::is_sorted(starts.begin(), starts.end())) return;
    if (seq_of && by_seq(starts, *seq_of)) return;
    m_sorted.emplace(starts.size(), [starts](size_t i) { return starts[i]; });
  }
  uint32_t operator[](size_t k) const {
    if (m_sorted) return (*m_sorted)[k];
    return m_by_seq.empty() ? static_cast<uint32_t>(k) : m_by_seq[k];
  }

 private:
  template <typename SeqOf>
  bool by_seq(std::span<const uint64_t> starts, const SeqOf& seq_of) {
    const size_t n = starts.size();
    uint64_t low = seq_of(0), high = low;
    for (size_t i = 1; i < n; ++i) {
      low = std::min(low, seq_of(i));
      high = std::max(high, seq_of(i));
    }
    if (n >= UINT32_MAX || high - low >= 4 * uint64_t{n}) return false;
    // slot[seq - low]: 1 + the slice whose start event it is, 0 for none.
    auto slot = faulted_in_vector<uint32_t>(high - low + 1);
    for (size_t i = 0; i < n; ++i) {
      uint32_t& at = slot[seq_of(i) - low];
      if (at != 0) return false;
      at = static_cast<uint32_t>(i + 1);
    }
    // Compacted in place into the order (k never passes the slot it reads).
    size_t k = 0, run = 0;  // order[run, k): slices with the start of the last one
    uint64_t last = 0;
    for (const uint32_t taken : slot) {
      if (taken == 0) continue;
      const uint32_t i = taken - 1;
      const uint64_t start = starts[i];
      if (k > 0 && start < last) return false;
      if (k == 0 || start != last) {
        std::sort(slot.begin() + static_cast<std::ptrdiff_t>(run),
                  slot.begin() + static_cast<std::ptrdiff_t>(k));
        run = k;
      }
      last = start;
      slot[k++] = i;
    }
    std::sort(slot.begin() + static_cast<std::ptrdiff_t>(run), slot.begin() + static_cast<std::ptrdiff_t>(k));
    slot.resize(k);
    m_by_seq = std::move(slot);
    return true;
  }

  std::optional<KeyOrder> m_sorted;
  std::vector<uint32_t> m_by_seq;  // empty, with no m_sorted: the index order
};

// slice_levels, with the seqs of the slices' start events given by seq_of (none: nullptr). The slices are
// walked in start order and in end order at once (an end before its start counts as the start): the slices
// that have ended by a start are a prefix of the end order, which replaces a heap of the busy levels (of
// which there can be thousands: 9,413 for the 5 M actions of a synthetic 10 M-event trace). pair_actions
// gives actions in the order of their end events, so the end order is usually the index and needs no sort.
template <typename SeqOf>
std::pair<std::vector<uint32_t>, size_t> place_slices(std::span<const uint64_t> starts,
                                                      std::span<const uint64_t> ends, const SeqOf* seq_of) {
  const size_t n = starts.size();
  const StartOrder by_start(starts, seq_of);
  auto slice_end = [starts, ends](size_t i) { return std::max(starts[i], ends[i]); };
  bool in_order = true;
  for (uint64_t i = 1, last = n ? slice_end(0) : 0; i < n && in_order; ++i) {
    const uint64_t end = slice_end(i);
    in_order = last <= end;
    last = end;
  }
  std::optional<KeyOrder> end_order;
  if (!in_order) end_order.emplace(n, slice_end);
  auto by_end = [&](size_t k) { return end_order ? (*end_order)[k] : static_cast<uint32_t>(k); };
  auto level = faulted_in_vector<uint32_t>(n);
  auto placed = faulted_in_vector<uint8_t>(n);
  uint32_t levels = 0;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free;  // lowest first
  size_t ended = 0;  // by_end[0, ended) have ended by the current start
  auto next_end = [&] { return ended < n ? slice_end(by_end(ended)) : UINT64_MAX; };
  uint64_t ending = next_end();   // the end of by_end[ended]
  std::vector<uint32_t> waiting;  // ended before they were placed (zero length, at a start not yet reached)
  for (size_t k = 0; k < n; ++k) {
    const uint32_t i = by_start[k];
    const uint64_t start = starts[i];
    // Free the level of every placed slice that ended at or before this start.
    for (; ended < n && ending <= start; ++ended, ending = next_end()) {
      const uint32_t slice = by_end(ended);
      if (placed[slice])
        free.push(level[slice]);
      else
        waiting.push_back(slice);
    }
    for (size_t w = 0; w < waiting.size();) {
      if (!placed[waiting[w]]) {
        ++w;
        continue;
      }
      free.push(level[waiting[w]]);
      waiting[w] = waiting.back();
      waiting.pop_back();
    }
    if (free.empty()) {
      level[i] = levels++;
    } else {
      level[i] = free.top();
      free.pop();
    }
    placed[i] = 1;
  }
  return {std::move(level), levels};
}

}  // namespace

std::pair<std::vector<uint32_t>, size_t> slice_levels(std::span<const uint64_t> starts,
                                                      std::span<const uint64_t> ends,
                                                      std::span<const uint64_t> seqs) {
  auto seq_of = [seqs](size_t i) { return seqs[i]; };
  return place_slices(starts, ends, seqs.empty() ? nullptr : &seq_of);
}

// Timestamps in ns: Unix ns from the PPS mapping, or ns from the capture start shifted by `origin` (<= 0,
// the earliest pretrigger event) so that none is negative.
class PerfettoProtoWriter::Clock {
 public:
  Clock(const CaptureInfo& info, const TscUtcClock* utc, double origin)
      : m_utc(utc), m_start_tsc(info.capture_start_tsc), m_tsc_hz(info.tsc_hz), m_origin(origin) {}
  uint64_t of_event(const AnalysisEvent& event) const {
    return m_utc ? static_cast<uint64_t>(m_utc->unix_ns(event.tsc)) : relative(event.time_ns);
  }
  uint64_t of_time(double time_ns) const {
    if (!m_utc) return relative(time_ns);
    return static_cast<uint64_t>(m_utc->unix_ns(tsc_at(time_ns, m_start_tsc, m_tsc_hz)));
  }

 private:
  uint64_t relative(double time_ns) const {
    return static_cast<uint64_t>(std::max<int64_t>(0, round_to_int64(time_ns - m_origin)));
  }
  const TscUtcClock* m_utc;
  uint64_t m_start_tsc, m_tsc_hz;
  double m_origin;
};

PerfettoProtoWriter::PerfettoProtoWriter(const CaptureInfo& info, int probes, double earliest_ns,
                                         TextOut& out, const PerfettoOptions& options)
    : m_out(out),
      m_clock(std::make_unique<const Clock>(info, options.utc, std::min(0.0, earliest_ns))),
      m_blocks([this](std::span<const AnalysisEvent> events, std::span<const ActionEnds>) { write(events); }) {
  fmt::memory_buffer buffer;
  // First packet: clears the sequence's incremental state and defines the interned names (the actions' in
  // finish, with their tracks).
  {
    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kSequence);
    packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    pb::InternedData* interned = packet.mutable_interned_data();
    intern_code_names(*interned, code_name, "code");
    for (const auto& [iid, text] : {std::pair<uint64_t, const char*>{kSeq, "seq"},
                                    {kLines, "lines"},
                                    {kTsc, "tsc"},
                                    {kStartSeq, "start_seq"},
                                    {kEndSeq, "end_seq"},
                                    {kDurationNs, "duration_ns"}}) {
      pb::DebugAnnotationName* name = interned->add_debug_annotation_names();
      name->set_iid(iid);
      name->set_name(text);
    }
    pb::TrackDescriptor* track = packet.mutable_track_descriptor();
    track->set_uuid(kCaptureTrack);
    track->mutable_process()->set_pid(1);
    track->mutable_process()->set_process_name(info.name.empty() ? "ETT capture" : info.name);
    track->set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    append_packet(packet, buffer);
    out.append(buffer);
  }
  probes = std::clamp(probes, 0, 255);
  for (int probe = 1; probe <= probes; ++probe) {
    const std::string name = probe_name(probe, options.probe_labels);
    describe_track(out, buffer, probe_track(probe), name, 2 * probe, false);
    describe_track(out, buffer, counter_track(probe), name + " code", 2 * probe + 1, true);
  }
}

PerfettoProtoWriter::~PerfettoProtoWriter() = default;

void PerfettoProtoWriter::write(std::span<const AnalysisEvent> events) {
  // Each event: an instant on its probe's track (seq, lines and tsc as arguments) that also sets the probe's
  // counter track to its code (an extra counter value: one packet per event, not two).
  const Clock& clock = *m_clock;
  write_independent_lines(
      events.size(),
      [events, &clock](size_t begin, size_t end, fmt::memory_buffer& chunk) {
        for (const AnalysisEvent& event : events.subspan(begin, end - begin)) {
          append_track_event(chunk, clock.of_event(event), [&event](WireWriter& instant) {
            add_annotation(instant, kSeq, event.seq);
            add_annotation(instant, kLines, event.lines);
            add_annotation(instant, kTsc, event.tsc);
            instant.varint(kEventType, pb::TrackEvent::TYPE_INSTANT);
            instant.varint(kEventNameIid, code_name(event.code));
            instant.varint(kEventTrackUuid, probe_track(event.probe));
            instant.varint(kEventExtraCounterValues, event.code);
            instant.varint(kEventExtraCounterTrackUuids, counter_track(event.probe));
          });
        }
      },
      m_out);
}

void PerfettoProtoWriter::finish(ActionList actions) {
  m_blocks.flush();
  if (actions.empty()) return;
  const Clock& clock = *m_clock;
  // Actions as slices: slices on one track must nest, so each goes to its level (track); see slice_levels.
  // The slices' times are computed once (a slice ends no earlier than it starts); the arrays are faulted in
  // on two threads, as are slice_levels': at 5 M actions they are 80 MB of fresh memory, filled by one
  // thread.
  auto starts = faulted_in_vector<uint64_t>(actions.size());
  auto ends = faulted_in_vector<uint64_t>(actions.size());
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action action = actions[i];
    starts[i] = clock.of_time(action.start_ns);
    ends[i] = std::max(starts[i], clock.of_time(action.end_ns));
  }
  auto seq_of = [actions](size_t i) { return actions[i].start_seq; };
  const auto placed = place_slices(starts, ends, &seq_of);
  const std::vector<uint32_t>& levels = placed.first;
  const size_t level_count = placed.second;
  // The actions' names, interned in the packet of their first track (the sequence's interned names grow).
  fmt::memory_buffer buffer;
  for (size_t level = 0; level < level_count; ++level) {
    pb::TracePacket packet;
    if (level == 0) {
      packet.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      intern_code_names(*packet.mutable_interned_data(), action_name, "action code");
    }
    describe_track(m_out, buffer, action_track(level),
                   level == 0 ? "actions" : fmt::format("actions {}", level + 1), static_cast<int>(level),
                   false, std::move(packet));
  }
  // Each action: a slice begin and end on its level's track.
  write_independent_lines(
      actions.size(),
      [actions, &starts, &ends, &levels](size_t begin, size_t end, fmt::memory_buffer& chunk) {
        for (size_t i = begin; i < end; ++i) {
          const Action action = actions[i];
          const uint64_t track = action_track(levels[i]);
          append_track_event(chunk, starts[i], [&action, track](WireWriter& slice) {
            add_annotation(slice, kStartSeq, action.start_seq);
            add_annotation(slice, kEndSeq, action.end_seq);
            uint8_t* const annotation = slice.open(kEventDebugAnnotations);
            slice.varint(kAnnotationNameIid, kDurationNs);
            slice.fixed64(kAnnotationDouble, action.duration_ns);
            slice.close(annotation);
            slice.varint(kEventType, pb::TrackEvent::TYPE_SLICE_BEGIN);
            slice.varint(kEventNameIid, action_name(action.start_code));
            slice.varint(kEventTrackUuid, track);
          });
          append_track_event(chunk, ends[i], [track](WireWriter& slice) {
            slice.varint(kEventType, pb::TrackEvent::TYPE_SLICE_END);
            slice.varint(kEventTrackUuid, track);
          });
        }
      },
      m_out);
}

void write_perfetto_proto(const Capture& capture, ActionList actions, TextOut& out,
                          const PerfettoOptions& options) {
  double earliest = 0;
  int probes = capture.info.probe_count;
  for (const AnalysisEvent& event : capture.events) {
    earliest = std::min(earliest, event.time_ns);
    probes = std::max<int>(probes, event.probe);
  }
  PerfettoProtoWriter writer(capture.info, probes, earliest, out, options);
  writer.add(capture.events);
  writer.finish(actions);
}

std::string export_perfetto_proto(const Capture& capture, ActionList actions,
                                  const PerfettoOptions& options) {
  TextOut out;
  write_perfetto_proto(capture, actions, out, options);
  return out.take();
}

}  // namespace ett::host
