// vcd.cpp: writes a capture as VCD for GTKWave, sigrok/PulseView and other waveform viewers.
#include "export/vcd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ett::host {

namespace {

// VCD identifiers: printable characters from '!'; lines D0..D7 first, then the probes.
char line_id(int line) {
  return static_cast<char>('!' + line);
}
char probe_id(int probe) {
  return static_cast<char>('!' + 8 + probe - 1);
}

}  // namespace

void write_vcd(const Capture& capture, TextOut& out) {
  const CaptureInfo& info = capture.info;
  int probes = info.probe_count;
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  probes = std::clamp(probes, 0, 8);
  if (!info.captured_at.empty()) out.print("$date {} $end\n", info.captured_at);
  out.append("$version ett " ETT_VERSION " $end\n");
  out.print("$comment {}, layout {}, TSC {} Hz $end\n", info.name.empty() ? "ETT capture" : info.name,
            info.layout, info.tsc_hz);
  out.append("$timescale 1 ns $end\n$scope module ett $end\n");
  for (int line = 0; line < 8; ++line) out.print("$var wire 1 {} D{} $end\n", line_id(line), line);
  for (int probe = 1; probe <= probes; ++probe)
    out.print("$var wire 1 {} probe{} $end\n", probe_id(probe), probe);
  out.append("$upscope $end\n$enddefinitions $end\n");

  double origin = 0;
  if (!capture.events.empty()) origin = std::min(0.0, capture.events.front().time_ns);
  for (const AnalysisEvent& event : capture.events) origin = std::min(origin, event.time_ns);

  uint8_t lines = info.initial_lines;
  uint8_t toggles = 0;
  out.append("#0\n$dumpvars\n");
  for (int line = 0; line < 8; ++line) out.print("{}{}\n", (lines >> line) & 1, line_id(line));
  for (int probe = 1; probe <= probes; ++probe) out.print("0{}\n", probe_id(probe));
  out.append("$end\n");

  int64_t last = 0;
  for (size_t i = 0; i < capture.events.size();) {
    size_t j = i;
    uint8_t block_toggles = 0;
    uint8_t new_lines = lines;
    for (; j < capture.events.size() && capture.events[j].tsc == capture.events[i].tsc; ++j) {
      const AnalysisEvent& event = capture.events[j];
      if (event.probe >= 1 && event.probe <= probes)
        block_toggles ^= static_cast<uint8_t>(1u << (event.probe - 1));
      new_lines = event.lines;
    }
    const int64_t time = std::max<int64_t>(std::llround(capture.events[i].time_ns - origin), last + 1);
    out.print("#{}\n", time);
    for (int line = 0; line < 8; ++line)
      if (((lines ^ new_lines) >> line) & 1) out.print("{}{}\n", (new_lines >> line) & 1, line_id(line));
    toggles ^= block_toggles;
    for (int probe = 1; probe <= probes; ++probe)
      if ((block_toggles >> (probe - 1)) & 1)
        out.print("{}{}\n", (toggles >> (probe - 1)) & 1, probe_id(probe));
    lines = new_lines;
    last = time;
    i = j;
  }
  const int64_t end = std::max<int64_t>(std::llround(capture.end_ns() - origin), last + 1);
  out.print("#{}\n", end);
}

std::string export_vcd(const Capture& capture) {
  TextOut out;
  write_vcd(capture, out);
  return out.take();
}

}  // namespace ett::host
