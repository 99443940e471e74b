// fuzz_export_vcd.cpp: arbitrary captures -> VCD. Whatever the events (times out of order, equal, negative,
// huge, not a number; probes outside the layout; any layout, timescale, with or without the code bits), the
// file must be one a waveform viewer accepts: a header that declares every identifier used, timestamps that
// strictly increase from #0, only 0/1 values of declared 1-bit wires, and no vector at all (libsigrok 0.5
// stops reading at the first vector value).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "analysis/capture.h"
#include "export/vcd.h"
#include "fuzz_support.h"

namespace {

// Reads little pieces of the input; past its end everything is zero.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : m_data(data), m_size(size) {}
  bool done() const { return m_at >= m_size; }
  template <typename T>
  T take() {
    T value{};
    const size_t n = std::min(sizeof(T), m_size - std::min(m_at, m_size));
    std::memcpy(&value, m_data + m_at, n);
    m_at += sizeof(T);
    return value;
  }

 private:
  const uint8_t* m_data;
  size_t m_size;
  size_t m_at = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  ett::host::Capture capture;
  ett::host::CaptureInfo& info = capture.info;
  const uint8_t flags = in.take<uint8_t>();
  info.probe_count = in.take<uint8_t>() % 10;
  info.initial_lines = in.take<uint8_t>();
  info.tsc_hz = in.take<uint32_t>();
  info.capture_start_tsc = in.take<uint64_t>();
  info.capture_end_tsc = in.take<uint64_t>();
  // The options: code bits or not (bit 2), the layout (bits 3-4: their widths), the timescale (bits 5-7).
  static constexpr const char* kLayouts[] = {"2x4", "8x1", "4x2", "1x8"};
  static constexpr int64_t kTimescales[] = {1000,    1,         100,           10'000,
                                            100'000, 1'000'000, 1'000'000'000, 1'000'000'000'000};
  ett::host::VcdOptions options;
  options.bus = !(flags & 4);
  info.layout = kLayouts[(flags >> 3) & 3];
  options.timescale_ps = kTimescales[(flags >> 5) & 7];
  // Times as load_capture computes them from the TSC (flag bit 0), or any double at all.
  while (!in.done() && capture.events.size() < 4096) {
    ett::host::AnalysisEvent event;
    event.seq = capture.events.size();
    event.probe = in.take<uint8_t>();
    event.code = in.take<uint8_t>();
    event.lines = in.take<uint8_t>();
    if (flags & 1) {
      event.tsc = info.capture_start_tsc + in.take<int32_t>();
      if (!capture.events.empty() && (flags & 2))
        event.tsc += capture.events.back().tsc - info.capture_start_tsc;
      event.time_ns = info.tsc_hz
                          ? static_cast<double>(static_cast<int64_t>(event.tsc - info.capture_start_tsc)) *
                                1e9 / static_cast<double>(info.tsc_hz)
                          : 0;
    } else {
      event.tsc = in.take<uint16_t>();
      event.time_ns = in.take<double>();
    }
    capture.events.push_back(event);
  }

  const std::string vcd = ett::host::export_vcd(capture, options);
  const size_t body = vcd.find("$enddefinitions $end\n");
  ETT_FUZZ_CHECK(body != std::string::npos);
  std::set<std::string> ids;
  std::map<std::string, size_t> vectors;  // id -> width
  size_t at = 0;
  while (at < body) {
    const size_t end = vcd.find('\n', at);
    const std::string_view line(vcd.data() + at, end - at);
    at = end + 1;
    if (!line.starts_with("$var wire ")) continue;
    const std::string_view rest = line.substr(10);
    const size_t width = std::strtoul(std::string(rest).c_str(), nullptr, 10);
    const std::string_view after = rest.substr(rest.find(' ') + 1);
    const std::string id(after.substr(0, after.find(' ')));
    ETT_FUZZ_CHECK(!ids.count(id) && !vectors.count(id));  // each identifier declared once
    if (width == 1)
      ids.insert(id);
    else
      vectors[id] = width;
  }
  ETT_FUZZ_CHECK(ids.size() >= 8);
  ETT_FUZZ_CHECK(vectors.empty());
  at = body + std::strlen("$enddefinitions $end\n");
  bool first = true;
  long long last = 0;
  size_t stamps = 0;
  while (at < vcd.size()) {
    const size_t end = vcd.find('\n', at);
    ETT_FUZZ_CHECK(end != std::string::npos);  // every line is complete
    const std::string line = vcd.substr(at, end - at);
    at = end + 1;
    if (line == "$dumpvars" || line == "$end") continue;
    ETT_FUZZ_CHECK(!line.empty());
    if (line[0] == '#') {
      char* stop = nullptr;
      errno = 0;
      const long long time = std::strtoll(line.c_str() + 1, &stop, 10);
      ETT_FUZZ_CHECK(errno == 0 && *stop == '\0' && line.size() > 1 && line[1] != '-');
      ETT_FUZZ_CHECK(first ? time == 0 : time > last);
      first = false;
      last = time;
      ++stamps;
      continue;
    }
    ETT_FUZZ_CHECK(!first);
    if (line[0] == 'b') {
      const size_t space = line.find(' ');
      ETT_FUZZ_CHECK(space != std::string::npos && vectors.count(line.substr(space + 1)) == 1);
      ETT_FUZZ_CHECK(space - 1 == vectors[line.substr(space + 1)]);
      ETT_FUZZ_CHECK(line.find_first_not_of("01", 1) == space);
      continue;
    }
    ETT_FUZZ_CHECK(line[0] == '0' || line[0] == '1');
    ETT_FUZZ_CHECK(ids.count(line.substr(1)) == 1);
  }
  ETT_FUZZ_CHECK(stamps >= 2);  // #0 and the final timestamp
  return 0;
}
