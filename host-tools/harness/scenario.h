// scenario.h: scenario files for the QEMU injector: when each probe takes which code.
//
//   # time_us  probe  code
//   0          1      3       # probe 1 (D0-D3 under 2x4) becomes 3 at the start
//   12.5       2      15      # probe 2 (D4-D7) becomes 15 12.5 us later
//   12.5       1      0       # same time, other probe: one simultaneous write of both
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/probe_layout.h"
#include "common/status.h"

namespace ett::host {

struct ScenarioEvent {
  uint64_t time_ns = 0;  // offset from the start of the scenario
  uint8_t probe = 0;     // 1-based
  uint8_t code = 0;
  uint8_t lines =
      0;  // all eight lines D7..D0 once this event's write is done (shared by a simultaneous group)
  int line_number = 0;  // in the scenario file
  // A PPS line's edge (with_pps_edges): +1 rising (the UTC second `pps_second` begins), -1 falling, 0 none.
  int pps_edge = 0;
  int64_t pps_second = 0;
};

// Events with the same time form one write; `first`..`first + count` index Scenario::events.
struct ScenarioWrite {
  uint64_t time_ns = 0;
  uint8_t lines = 0;
  size_t first = 0;
  size_t count = 0;
};

struct Scenario {
  ProbeLayout layout;
  uint8_t initial_lines = 0;
  std::vector<ScenarioEvent> events;
  std::vector<ScenarioWrite> writes;
};

// `file_name` only labels the error messages ("scn.txt:12: ...").
Expected<Scenario> parse_scenario(std::string_view text, const std::string& file_name, ProbeLayout layout,
                                  uint8_t initial_lines = 0);
// A scenario file holds at most this much text (about 10 M events) and lines of at most 64 KiB of text
// (text_input.h): /dev/zero or a binary file is refused at once.
inline constexpr uint64_t kMaxScenarioBytes = uint64_t{256} << 20;
Expected<Scenario> load_scenario(const std::string& path, ProbeLayout layout, uint8_t initial_lines = 0);

// One edge of a PPS line: high at a rising edge (UTC second `second` begins), low at a falling one.
struct PpsEdge {
  uint64_t time_ns = 0;  // scenario time
  bool high = true;
  int64_t second = 0;
};

// The scenario with a PPS line's edges on data line `line` (0..7) merged in; events of the probe that holds
// the line keep its level. Usage errors: the scenario changes that line, or it starts high. An edge due at
// the same instant as a change of its probe moves 1 ns later. No edges: the checks alone.
Expected<Scenario> with_pps_edges(const Scenario& scenario, int line, std::span<const PpsEdge> edges,
                                  const std::string& file_name);

}  // namespace ett::host
