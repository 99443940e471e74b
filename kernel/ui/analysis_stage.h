// analysis_stage.h: the ETT paper's user interface (its section 3.3) on the VGA text screen: a start screen
// that waits for Enter, and after a capture a scroll box with one event per line, S to save, ESC to go back.
#pragma once

#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::ui {

// A status line's text, NUL included.
inline constexpr uint32_t kStatusLength = 81;

// What a save attempt says; `message` is shown on the status line (and on serial).
struct SaveOutcome {
  bool saved;
  const char* message;
};
using SaveFunction = SaveOutcome (*)(void* context);

struct CaptureView {
  const format::EventRecord* events;
  uint64_t event_count;
  uint64_t start_tsc;  // time 0 of the timestamps shown
  uint64_t tsc_hz;
  uint32_t stop_reason;     // format::StopReason
  bool saved;               // already saved (the automatic dump of an unattended run)
  const char* status;       // the first status line ("" for none)
  const char* warning;      // shown in red on the title row (nullptr for none)
  const char* no_keyboard;  // why there is no keyboard (nullptr when there is one): the stage only shows
};

// Shows `lines` (nullptr-terminated) under a title, and `warning` (when not nullptr) in red above the key
// line, and waits for Enter. Keys pressed before are dropped. Returns the make code of the key that started
// the capture (it may still be held down when the capture starts). With `no_keyboard` (why there is none) it
// says so and returns 0 at once.
uint8_t run_start_screen(const char* const* lines, const char* warning, const char* no_keyboard = nullptr);

// The scroll box over `view`, until ESC. `save` runs on S (nullptr: saving is off, say so). Without a
// keyboard (view.no_keyboard) it shows the first events and the reason, and never returns.
void run_analysis_stage(const CaptureView& view, SaveFunction save, void* context);

// Nanoseconds in `ticks` at `tsc_hz` without overflow for any realistic capture.
constexpr uint64_t ns_for_ticks(uint64_t ticks, uint64_t tsc_hz) {
  return ticks / tsc_hz * 1'000'000'000 + ticks % tsc_hz * 1'000'000'000 / tsc_hz;
}

}  // namespace ett::ui
