// perfetto_proto.cpp: writes Perfetto's protobuf trace format one TracePacket at a time: each is field 1 of
// the Trace message (its tag, its length as a varint, its bytes), so the file is a Trace without ever holding
// one. The few descriptor packets go through libprotobuf; the packets of the events and actions are encoded
// by hand (WireMessage).
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <queue>
#include <span>
#include <tuple>
#include <utility>

#include "common/huge_pages.h"
#include "export/exporters.h"
#include "export/perfetto.h"
#include "export/perfetto_trace.pb.h"

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

// The packets of the events (one each) and of the actions (two each), encoded by hand: libprotobuf's sizing
// and serialization of them cost more than the read of the events. Protobuf's wire format: a field is its tag
// (a varint of number << 3 | wire type: 0 varint, 1 fixed 64 bits, 2 length and bytes) and its value; fields
// go in number order, like libprotobuf writes them, so the bytes are the ones it wrote (a test reparses and
// reserializes a whole export through libprotobuf and compares).
class WireMessage {
 public:
  void varint(uint32_t field, uint64_t value) {
    put(uint64_t{field} << 3);
    put(value);
  }
  void fixed64(uint32_t field, double value) {
    put(uint64_t{field} << 3 | 1);
    m_size =
        CodedOutputStream::WriteLittleEndian64ToArray(std::bit_cast<uint64_t>(value), end()) - m_bytes.data();
  }
  void message(uint32_t field, const WireMessage& inner) {
    put(uint64_t{field} << 3 | 2);
    put(inner.m_size);
    std::memcpy(end(), inner.m_bytes.data(), inner.m_size);
    m_size += inner.m_size;
  }
  void clear() { m_size = 0; }
  // As one `packet` field of Trace.
  void append_as_packet(fmt::memory_buffer& buffer) const {
    append_packet_header(m_size, buffer);
    const auto* bytes = reinterpret_cast<const char*>(m_bytes.data());
    buffer.append(bytes, bytes + m_size);
  }

 private:
  uint8_t* end() { return m_bytes.data() + m_size; }
  void put(uint64_t value) {
    m_size = CodedOutputStream::WriteVarint64ToArray(value, end()) - m_bytes.data();
  }
  // The largest message here, an event's packet, is under 100 bytes: three annotations of at most 15, five
  // small fields of the TrackEvent, a 64-bit timestamp and two flags of the packet.
  std::array<uint8_t, 256> m_bytes;
  size_t m_size = 0;
};

// Field numbers of perfetto_trace.proto that the hand-written packets use.
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

// A TrackEvent wrapped in the packet every event of the sequence gets.
void append_track_event(uint64_t timestamp, const WireMessage& event, WireMessage& packet,
                        fmt::memory_buffer& buffer) {
  packet.clear();
  packet.varint(kPacketTimestamp, timestamp);
  packet.varint(kPacketSequenceId, kSequence);
  packet.message(kPacketTrackEvent, event);
  packet.varint(kPacketSequenceFlags, pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  packet.append_as_packet(buffer);
}

void add_annotation(WireMessage& event, uint64_t name_iid, uint64_t value, WireMessage& annotation) {
  annotation.clear();
  annotation.varint(kAnnotationNameIid, name_iid);
  annotation.varint(kAnnotationUint, value);
  event.message(kEventDebugAnnotations, annotation);
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

// The indexes of `keys` in ascending order of key, ties in index order: what a stable sort of the indexes
// gives, at a fraction of its time for millions of keys. Each key (less the smallest) and its index are
// packed into one word, index in the low bits, and the words sorted by the key's bits with an LSD radix sort,
// which keeps the index order of equal keys; keys too far apart to pack take the stable sort.
class KeyOrder {
 public:
  explicit KeyOrder(std::span<const uint64_t> keys) {
    const size_t n = keys.size();
    if (n == 0) return;
    const auto [low, high] = std::minmax_element(keys.begin(), keys.end());
    const int index_bits = std::bit_width(n - 1);
    const int key_bits = std::bit_width(*high - *low);
    m_packed = faulted_in_vector<uint64_t>(n);
    if (index_bits + key_bits > 64) {
      std::vector<uint32_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
      std::copy(order.begin(), order.end(), m_packed.begin());
      return;
    }
    m_index_mask = (uint64_t{1} << index_bits) - 1;  // index_bits < 64: n fits in 32 bits
    for (size_t i = 0; i < n; ++i) m_packed[i] = (keys[i] - *low) << index_bits | i;
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

}  // namespace

std::pair<std::vector<uint32_t>, size_t> slice_levels(std::span<const uint64_t> starts,
                                                      std::span<const uint64_t> ends) {
  const size_t n = starts.size();
  // Slices in start order; the index breaks ties, so the order (and the file) is always the same. Actions
  // that do not overlap come in start order already: then the order is the index and needs no list.
  std::optional<KeyOrder> by_start;
  if (!std::is_sorted(starts.begin(), starts.end())) by_start.emplace(starts);
  // Slices in end order (an end before its start counts as the start): pair_actions gives actions in the
  // order of their end events, so this is usually the identity and needs no sort. Walking it replaces a heap
  // of the busy levels: the slices that have ended by a start are a prefix of it.
  auto end_of = [&](size_t i) { return std::max(starts[i], ends[i]); };
  bool in_order = true;
  for (size_t i = 1; i < n && in_order; ++i) in_order = end_of(i - 1) <= end_of(i);
  std::optional<KeyOrder> end_order;
  if (!in_order) {
    auto slice_ends = faulted_in_vector<uint64_t>(n);
    for (size_t i = 0; i < n; ++i) slice_ends[i] = end_of(i);
    end_order.emplace(slice_ends);
  }
  auto by_end = [&](size_t k) { return end_order ? (*end_order)[k] : static_cast<uint32_t>(k); };
  auto level = faulted_in_vector<uint32_t>(n);
  auto placed = faulted_in_vector<uint8_t>(n);
  uint32_t levels = 0;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free;  // lowest first
  size_t ended = 0;               // by_end[0, ended) have ended by the current start
  std::vector<uint32_t> waiting;  // ended before they were placed (zero length, at a start not yet reached)
  for (size_t k = 0; k < n; ++k) {
    const uint32_t i = by_start ? (*by_start)[k] : static_cast<uint32_t>(k);
    const uint64_t start = starts[i];
    // Free the level of every placed slice that ended at or before this start.
    for (; ended < n && end_of(by_end(ended)) <= start; ++ended) {
      const uint32_t slice = by_end(ended);
      if (placed[slice])
        free.push(level[slice]);
      else
        waiting.push_back(slice);
    }
    for (size_t k = 0; k < waiting.size();) {
      if (!placed[waiting[k]]) {
        ++k;
        continue;
      }
      free.push(level[waiting[k]]);
      waiting[k] = waiting.back();
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
    const double ticks = time_ns * static_cast<double>(m_tsc_hz) / 1e9;
    return static_cast<uint64_t>(m_utc->unix_ns(m_start_tsc + static_cast<uint64_t>(std::llround(ticks))));
  }

 private:
  uint64_t relative(double time_ns) const {
    return static_cast<uint64_t>(std::max<int64_t>(0, std::llround(time_ns - m_origin)));
  }
  const TscUtcClock* m_utc;
  uint64_t m_start_tsc, m_tsc_hz;
  double m_origin;
};

PerfettoProtoWriter::PerfettoProtoWriter(const CaptureInfo& info, int probes, double earliest_ns,
                                         TextOut& out, const PerfettoOptions& options)
    : m_out(out),
      m_clock(std::make_unique<const Clock>(info, options.utc, std::min(0.0, earliest_ns))),
      m_blocks([this](std::span<const AnalysisEvent> events) { write(events); }) {
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
        WireMessage packet, instant, annotation;
        for (const AnalysisEvent& event : events.subspan(begin, end - begin)) {
          instant.clear();
          add_annotation(instant, kSeq, event.seq, annotation);
          add_annotation(instant, kLines, event.lines, annotation);
          add_annotation(instant, kTsc, event.tsc, annotation);
          instant.varint(kEventType, pb::TrackEvent::TYPE_INSTANT);
          instant.varint(kEventNameIid, code_name(event.code));
          instant.varint(kEventTrackUuid, probe_track(event.probe));
          instant.varint(kEventExtraCounterValues, event.code);
          instant.varint(kEventExtraCounterTrackUuids, counter_track(event.probe));
          append_track_event(clock.of_event(event), instant, packet, chunk);
        }
      },
      m_out);
}

void PerfettoProtoWriter::finish(ActionList actions) {
  m_blocks.flush();
  if (actions.empty()) return;
  const Clock& clock = *m_clock;
  // Actions as slices: slices on one track must nest, so each goes to its level (track); see slice_levels.
  // The arrays are faulted in on two threads, as are slice_levels': at 5 M actions they are about 100 MB of
  // fresh memory, filled by one thread.
  std::vector<uint32_t> levels;
  size_t level_count = 0;
  {
    auto starts = faulted_in_vector<uint64_t>(actions.size());
    auto ends = faulted_in_vector<uint64_t>(actions.size());
    for (size_t i = 0; i < actions.size(); ++i) {
      starts[i] = clock.of_time(actions[i].start_ns);
      ends[i] = clock.of_time(actions[i].end_ns);
    }
    std::tie(levels, level_count) = slice_levels(starts, ends);
  }
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
      [actions, &clock, &levels](size_t begin, size_t end, fmt::memory_buffer& chunk) {
        WireMessage packet, slice, annotation;
        for (size_t i = begin; i < end; ++i) {
          const Action action = actions[i];
          const uint64_t begin_time = clock.of_time(action.start_ns);
          slice.clear();
          add_annotation(slice, kStartSeq, action.start_seq, annotation);
          add_annotation(slice, kEndSeq, action.end_seq, annotation);
          annotation.clear();
          annotation.varint(kAnnotationNameIid, kDurationNs);
          annotation.fixed64(kAnnotationDouble, action.duration_ns);
          slice.message(kEventDebugAnnotations, annotation);
          slice.varint(kEventType, pb::TrackEvent::TYPE_SLICE_BEGIN);
          slice.varint(kEventNameIid, action_name(action.start_code));
          slice.varint(kEventTrackUuid, action_track(levels[i]));
          append_track_event(begin_time, slice, packet, chunk);
          slice.clear();
          slice.varint(kEventType, pb::TrackEvent::TYPE_SLICE_END);
          slice.varint(kEventTrackUuid, action_track(levels[i]));
          append_track_event(std::max(begin_time, clock.of_time(action.end_ns)), slice, packet, chunk);
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
