// event_packs.cpp: packs a trace's events into rows of event_packs and unpacks them.
#include "db/event_packs.h"

#include <fmt/format.h>

namespace ett::host {

namespace {

char* put_varint(char* at, uint64_t value) {
  while (value >= 0x80) {
    *at++ = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  *at++ = static_cast<char>(value);
  return at;
}

uint64_t zigzag(uint64_t difference) {
  return (difference << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(difference) >> 63);
}

uint64_t unzigzag(uint64_t value) {
  return (value >> 1) ^ (~(value & 1) + 1);
}

// Reads a varint at `at`; false when the data ends inside it or it runs past 64 bits.
bool get_varint(const unsigned char*& at, const unsigned char* end, uint64_t& value) {
  value = 0;
  for (unsigned shift = 0; at < end && shift < 64; shift += 7) {
    const unsigned char byte = *at++;
    value |= uint64_t{byte & 0x7Fu} << shift;
    if (!(byte & 0x80)) return shift < 63 || byte <= 1;
  }
  return false;
}

}  // namespace

void EventPacker::add(const Event& event) {
  if (m_open.events > 0 && m_used + kMostPackedEventBytes > kPackBytes) close();
  if (m_open.events == 0) {
    m_open.first_seq = event.seq;
    m_open.data.resize(kPackBytes);  // written through a pointer, cut to size when the pack closes
    m_used = 0;
    m_last_seq = event.seq;
    m_last_tsc = 0;
  }
  char* at = m_open.data.data() + m_used;
  at = put_varint(at, event.seq - m_last_seq);
  at = put_varint(at, zigzag(event.tsc - m_last_tsc));
  *at++ = static_cast<char>(event.probe);
  *at++ = static_cast<char>(event.code);
  *at++ = static_cast<char>(event.lines);
  m_used = static_cast<size_t>(at - m_open.data.data());
  m_open.last_seq = event.seq;
  ++m_open.events;
  m_last_seq = event.seq;
  m_last_tsc = event.tsc;
}

void EventPacker::finish() {
  if (m_open.events > 0) close();
}

void EventPacker::close() {
  m_open.data.resize(m_used);
  m_packs.push_back(std::move(m_open));
  m_open = {};
}

Status unpack_events(uint64_t first_seq, uint64_t last_seq, uint64_t events, std::string_view data,
                     std::vector<EventRow>& batch, const FullBatch& full) {
  auto damaged = [&](std::string_view what) {
    return make_error(ErrorKind::Io, fmt::format("the pack of seqs {}-{}: {}", first_seq, last_seq, what));
  };
  const auto* at = reinterpret_cast<const unsigned char*>(data.data());
  const unsigned char* const end = at + data.size();
  uint64_t seq = first_seq, tsc = 0;
  for (uint64_t i = 0; i < events; ++i) {
    uint64_t seq_step = 0, tsc_step = 0;
    if (!get_varint(at, end, seq_step) || !get_varint(at, end, tsc_step) || end - at < 3)
      return damaged(fmt::format("its data ends inside event {} of {}", i + 1, events));
    if ((i == 0) != (seq_step == 0) || seq + seq_step < seq)
      return damaged(fmt::format("the seq of event {} does not rise from the one before", i + 1));
    seq += seq_step;
    tsc += unzigzag(tsc_step);
    EventRow& row = batch.emplace_back();
    row.seq = seq;
    row.tsc = tsc;
    row.probe = at[0];
    row.code = at[1];
    row.lines = at[2];
    at += 3;
    if (batch.size() >= kEventBatchRows) {
      ETT_TRY(full(batch));
      batch.clear();
    }
  }
  if (at != end)
    return damaged(fmt::format("its data goes on after its {} events ({} bytes)", events, end - at));
  if (events > 0 && seq != last_seq) return damaged(fmt::format("its last event has seq {}", seq));
  return {};
}

PackedTraceReader::PackedTraceReader(EventBatchSink rows, Damaged damaged)
    : m_rows(std::move(rows)), m_damaged(std::move(damaged)) {
  m_batch.reserve(kEventBatchRows);
}

Status PackedTraceReader::add(int64_t first_seq, int64_t last_seq, int64_t events, std::string_view data) {
  if (first_seq < 0 || last_seq < first_seq || events <= 0 ||
      (m_any && first_seq <= static_cast<int64_t>(m_last_seq)))
    return m_damaged(fmt::format("the pack at seq {} overlaps the one before or is empty", first_seq));
  m_any = true;
  m_last_seq = static_cast<uint64_t>(last_seq);
  m_events += static_cast<uint64_t>(events);
  bool sink_failed = false;  // an error of the sink's, not of the pack
  auto full = [this, &sink_failed](std::span<const EventRow> rows) {
    Status taken = m_rows(rows);
    sink_failed = !taken;
    return taken;
  };
  if (Status unpacked = unpack_events(static_cast<uint64_t>(first_seq), m_last_seq,
                                      static_cast<uint64_t>(events), data, m_batch, full);
      !unpacked)
    return sink_failed ? unpacked : m_damaged(unpacked.error().message);
  return {};
}

Status PackedTraceReader::finish(uint64_t expected) {
  if (m_events != expected)
    return m_damaged(fmt::format("they hold {} of its {} events", m_events, expected));
  if (!m_batch.empty()) ETT_TRY(m_rows(m_batch));
  m_batch.clear();
  return {};
}

std::string packed_trace_sql(int64_t trace_id) {
  return fmt::format(
      "SELECT (SELECT first_seq FROM event_packs WHERE trace_id = {0} ORDER BY first_seq LIMIT 1), (SELECT "
      "last_seq FROM event_packs WHERE trace_id = {0} ORDER BY first_seq DESC LIMIT 1), (SELECT sum(events) "
      "FROM event_codes WHERE trace_id = {0})",
      trace_id);
}

}  // namespace ett::host
