// fuzz_scenario.cpp: the scenario parser over arbitrary text, under each layout. A parsed scenario must be
// one the injector can play: times never decrease, probes and codes fit the layout, every event changes its
// probe, and the writes partition the events with the lines each write leaves.
#include <array>
#include <string_view>

#include "common/probe_layout.h"
#include "fuzz_support.h"
#include "harness/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static constexpr std::array<std::string_view, 4> kLayouts = {"2x4", "8x1", "4x2", "1x8"};
  const auto layout = ett::host::ProbeLayout::from_name(kLayouts[data[0] % kLayouts.size()]);
  ETT_FUZZ_CHECK(layout.has_value());
  const uint8_t initial = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  auto scenario = ett::host::parse_scenario(text, "fuzz.scn", *layout, initial);
  if (!scenario) {
    ETT_FUZZ_CHECK(scenario.error().message.starts_with("fuzz.scn:"));
    return 0;
  }
  ETT_FUZZ_CHECK(!scenario->events.empty());
  uint8_t lines = initial;
  size_t next = 0;
  uint64_t previous_time = 0;
  for (const ett::host::ScenarioWrite& write : scenario->writes) {
    ETT_FUZZ_CHECK(write.first == next && write.count > 0);
    ETT_FUZZ_CHECK(write.time_ns >= previous_time);
    ETT_FUZZ_CHECK(next == 0 || write.time_ns > previous_time);
    for (size_t i = write.first; i < write.first + write.count; ++i) {
      const ett::host::ScenarioEvent& event = scenario->events[i];
      ETT_FUZZ_CHECK(event.time_ns == write.time_ns);
      ETT_FUZZ_CHECK(event.probe >= 1 && event.probe <= layout->probe_count());
      ETT_FUZZ_CHECK(event.code <= layout->max_code());
      ETT_FUZZ_CHECK(layout->code_of(lines, event.probe) != event.code);
      lines = layout->with_code(lines, event.probe, event.code);
      ETT_FUZZ_CHECK(event.lines == write.lines);
    }
    ETT_FUZZ_CHECK(lines == write.lines);
    previous_time = write.time_ns;
    next = write.first + write.count;
  }
  ETT_FUZZ_CHECK(next == scenario->events.size());
  return 0;
}
