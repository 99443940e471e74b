// vcd.cpp: writes a capture as VCD for GTKWave, sigrok/PulseView and other waveform viewers.
#include "export/vcd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "common/line_names.h"
#include "common/probe_layout.h"
#include "common/tsc_time.h"

namespace ett::host {

namespace {

// VCD identifiers: printable characters from '!'; lines D0..D7 first, then the probes' wires, then the bits
// of their codes (probe 1's from its lowest bit, then probe 2's, ...: 8 bits in every layout).
char line_id(int line) {
  return static_cast<char>('!' + line);
}
char probe_id(int probe) {
  return static_cast<char>('!' + 8 + probe - 1);
}
char code_bit_id(int probe, int width, int bit) {
  return static_cast<char>('!' + 16 + (probe - 1) * width + bit);
}

// A VCD reference is one word: ASCII spaces, punctuation and control characters become '_' (a '[' would read
// as a bit select, a '$' as a keyword); the bytes of UTF-8 characters are kept as they are (GTKWave and
// sigrok show `Kühlung_Ω` as it was labelled).
std::string vcd_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 && !std::isalnum(byte) && c != '_') c = '_';
  }
  return out;
}

std::string timescale_text(int64_t ps) {
  static constexpr struct {
    int64_t ps;
    const char* unit;
  } kUnits[] = {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1000, "ns"}, {1, "ps"}};
  for (const auto& unit : kUnits)
    if (ps >= unit.ps) return fmt::format("{} {}", ps / unit.ps, unit.unit);
  return "1 ps";
}

// The text of one timestamp block is built here, then appended: no formatting library per event.
class VcdText {
 public:
  explicit VcdText(TextOut& out) : m_out(out) {}
  ~VcdText() { flush(); }
  void time(int64_t t) {
    room(24);
    *m_at++ = '#';
    m_at = std::to_chars(m_at, m_end, t).ptr;
    *m_at++ = '\n';
  }
  void bit(unsigned value, char id) {
    room(3);
    *m_at++ = static_cast<char>('0' + (value & 1));
    *m_at++ = id;
    *m_at++ = '\n';
  }
  void flush() {
    m_out.append(std::string_view(m_buffer, static_cast<size_t>(m_at - m_buffer)));
    m_at = m_buffer;
  }

 private:
  void room(size_t bytes) {
    if (static_cast<size_t>(m_end - m_at) < bytes) flush();
  }
  TextOut& m_out;
  char m_buffer[1 << 16];
  char* m_at = m_buffer;
  char* const m_end = m_buffer + sizeof m_buffer;
};

}  // namespace

Expected<int64_t> parse_vcd_timescale(std::string_view text) {
  int64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  const std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  static constexpr struct {
    std::string_view name;
    int64_t ps;
  } kUnits[] = {{"s", 1'000'000'000'000}, {"ms", 1'000'000'000}, {"us", 1'000'000}, {"ns", 1000}, {"ps", 1}};
  if (ec == std::errc() && (number == 1 || number == 10 || number == 100))
    for (const auto& u : kUnits)
      if (unit == u.name) return number * u.ps;
  return make_error(
      ErrorKind::Usage,
      fmt::format("--timescale '{}': expected 1, 10 or 100 of s, ms, us, ns or ps (e.g. 10ns)", text));
}

// What the writer keeps between batches: the values written last and the block of events being gathered.
struct VcdWriter::State {
  explicit State(TextOut& out) : text(out) {}
  VcdText text;
  std::optional<ProbeLayout> layout;
  int probes = 0;
  int bus_probes = 0;  // probes whose code is written as its bits
  int width = 0;       // of a code
  double origin = 0;
  double per_ns = 0;   // ticks per ns
  bool merge = false;  // a tick coarser than 1 ns: the polls within one tick are one block
  double end_ns = 0;
  // The values written last.
  uint8_t lines = 0;
  uint8_t toggles = 0;
  uint8_t codes[8] = {};
  int64_t last = 0;  // the tick of the last block
  // The block being gathered (open): the events of one poll, or of one tick when merging.
  bool open = false;
  uint64_t first_tsc = 0;
  int64_t first_tick = 0;
  uint8_t block_toggles = 0;
  uint8_t new_lines = 0;
  uint8_t new_codes[8] = {};

  int64_t tick(double ns) const { return round_to_int64((ns - origin) * per_ns); }
  // Writes the open block's timestamp and changes.
  void write_block() {
    const int64_t time = merge ? std::max(first_tick, last) : std::max(first_tick, last + 1);
    const uint8_t changed = lines ^ new_lines;
    bool codes_changed = false;
    for (int probe = 1; probe <= bus_probes; ++probe)
      codes_changed |= new_codes[probe - 1] != codes[probe - 1];
    // A merged tick whose changes cancel out (a pulse shorter than the tick) leaves no timestamp.
    if (time > last && (!merge || changed || block_toggles || codes_changed)) text.time(time);
    for (int line = 0; line < 8; ++line)
      if ((changed >> line) & 1) text.bit((new_lines >> line) & 1, line_id(line));
    toggles ^= block_toggles;
    for (int probe = 1; probe <= probes; ++probe)
      if ((block_toggles >> (probe - 1)) & 1) text.bit((toggles >> (probe - 1)) & 1, probe_id(probe));
    for (int probe = 1; probe <= bus_probes; ++probe) {
      const unsigned flipped = new_codes[probe - 1] ^ codes[probe - 1];
      for (int bit = width - 1; bit >= 0; --bit)
        if ((flipped >> bit) & 1) text.bit(new_codes[probe - 1] >> bit, code_bit_id(probe, width, bit));
      codes[probe - 1] = new_codes[probe - 1];
    }
    lines = new_lines;
    last = time;
    open = false;
  }
};

VcdWriter::VcdWriter(const CaptureInfo& info, int probes, double origin_ns, TextOut& out,
                     const VcdOptions& options)
    : m_state(std::make_unique<State>(out)) {
  State& s = *m_state;
  probes = std::clamp(probes, 0, 8);
  s.probes = probes;
  s.layout = ProbeLayout::from_name(info.layout);
  // The code bits of each probe of the layout (as many as the layout's width); probes beyond it (corrupt
  // data) get none.
  s.bus_probes = options.bus && s.layout ? std::min(probes, s.layout->probe_count()) : 0;
  s.width = s.layout ? s.layout->bits_per_probe() : 0;
  s.origin = std::min(origin_ns, 0.0);
  s.end_ns = info.end_ns();

  if (options.utc) {
    const int64_t start_ns = options.utc->unix_ns(info.capture_start_tsc) + std::llround(s.origin);
    const UtcNs zero{start_ns / 1'000'000'000 - (start_ns % 1'000'000'000 < 0 ? 1 : 0),
                     ((start_ns % 1'000'000'000) + 1'000'000'000) % 1'000'000'000};
    out.print("$date {} $end\n", format_iso_utc(zero));
  } else if (!info.captured_at.empty()) {
    out.print("$date {} $end\n", info.captured_at);
  }
  out.append("$version ett " ETT_VERSION " $end\n");
  out.print("$comment {}, layout {}, TSC {} Hz{} $end\n", info.name.empty() ? "ETT capture" : info.name,
            info.layout, info.tsc_hz, options.utc ? ", time 0 in UTC from the PPS mapping" : "");
  out.print("$timescale {} $end\n$scope module ett $end\n", timescale_text(options.timescale_ps));
  // A serial port's inputs by their names (DCD, DSR, CTS, RI); it has no D4..D7.
  const int lines = line_count(info.probe_source);
  std::vector<std::string> names;
  for (int line = 0; line < lines; ++line) {
    names.push_back(line_name(info.probe_source, line));
    out.print("$var wire 1 {} {} $end\n", line_id(line), names.back());
  }
  const size_t line_names = names.size();
  for (int probe = 1; probe <= probes; ++probe) {
    const bool labelled =
        static_cast<size_t>(probe) <= options.probe_labels.size() && !options.probe_labels[probe - 1].empty();
    std::string name = labelled ? vcd_name(options.probe_labels[probe - 1]) : fmt::format("probe{}", probe);
    // A label that repeats another name (or a line's) keeps the probe's number.
    if (std::find(names.begin(), names.end(), name) != names.end() || (name.size() == 2 && name[0] == 'D'))
      name = fmt::format("probe{}_{}", probe, name);
    names.push_back(name);
    out.print("$var wire 1 {} {} $end\n", probe_id(probe), name);
  }
  // Each code as 1-bit wires NAME_code[3] .. NAME_code[0] (one NAME_code at width 1), not as one vector:
  // libsigrok 0.5 (Debian 12's sigrok-cli and PulseView) stops reading at the first vector value, and
  // GTKWave joins split bits back into a vector (its autocoalesce).
  for (int probe = 1; probe <= s.bus_probes; ++probe)
    for (int bit = s.width - 1; bit >= 0; --bit)
      out.print("$var wire 1 {} {}_code{} $end\n", code_bit_id(probe, s.width, bit),
                names[line_names + static_cast<size_t>(probe) - 1],
                s.width > 1 ? fmt::format("[{}]", bit) : "");
  out.append("$upscope $end\n$enddefinitions $end\n");

  s.lines = info.initial_lines;
  out.append("#0\n$dumpvars\n");
  for (int line = 0; line < lines; ++line) s.text.bit((s.lines >> line) & 1, line_id(line));
  for (int probe = 1; probe <= probes; ++probe) s.text.bit(0, probe_id(probe));
  for (int probe = 1; probe <= s.bus_probes; ++probe) {
    s.codes[probe - 1] = s.layout->code_of(s.lines, probe);
    for (int bit = s.width - 1; bit >= 0; --bit)
      s.text.bit(s.codes[probe - 1] >> bit, code_bit_id(probe, s.width, bit));
  }
  s.text.flush();
  out.append("$end\n");

  // Ticks from the origin; at 1 ns or finer a poll is its own block, coarser ones merge the polls of a tick.
  s.per_ns = 1000.0 / static_cast<double>(options.timescale_ps);
  s.merge = options.timescale_ps > 1000;
}

VcdWriter::~VcdWriter() = default;

void VcdWriter::add(std::span<const AnalysisEvent> events) {
  State& s = *m_state;
  for (const AnalysisEvent& event : events) {
    // An event joins the open block when it is of the block's poll, or (merging) of its tick or earlier.
    if (s.open && event.tsc != s.first_tsc &&
        !(s.merge && s.tick(event.time_ns) <= std::max(s.first_tick, s.last)))
      s.write_block();
    if (!s.open) {
      s.open = true;
      s.first_tsc = event.tsc;
      s.first_tick = s.tick(event.time_ns);
      s.block_toggles = 0;
      s.new_lines = s.lines;
      std::copy(std::begin(s.codes), std::end(s.codes), s.new_codes);
    }
    if (event.probe >= 1 && event.probe <= s.probes) {
      s.block_toggles ^= static_cast<uint8_t>(1u << (event.probe - 1));
      if (event.probe <= s.bus_probes) s.new_codes[event.probe - 1] = event.code;
    }
    s.new_lines = event.lines;
  }
}

void VcdWriter::finish() {
  State& s = *m_state;
  if (s.open) s.write_block();
  s.text.time(std::max<int64_t>(s.tick(s.end_ns), s.last + 1));
  s.text.flush();
}

void write_vcd(const Capture& capture, TextOut& out, const VcdOptions& options) {
  int probes = capture.info.probe_count;
  double origin = 0;
  for (const AnalysisEvent& event : capture.events) {
    probes = std::max<int>(probes, event.probe);
    origin = std::min(origin, event.time_ns);
  }
  VcdWriter writer(capture.info, probes, origin, out, options);
  writer.add(capture.events);
  writer.finish();
}

std::string export_vcd(const Capture& capture, const VcdOptions& options) {
  TextOut out;
  write_vcd(capture, out, options);
  return out.take();
}

}  // namespace ett::host
