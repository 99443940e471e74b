// analysis_stage.cpp: the start screen and the analysis scroll box, drawn row by row and driven by polled
// PS/2 keys (interrupts stay off).
#include "ui/analysis_stage.h"

#include "arch/x86/cpu.h"
#include "drivers/console/console.h"
#include "drivers/input/ps2_keyboard.h"
#include "drivers/input/stop_key_filter.h"
#include "ui/keys.h"
#include "ui/scroll_box.h"
#include "ui/text_screen.h"

namespace ett::ui {

namespace {

constexpr uint32_t kTitleRow = 0;
constexpr uint32_t kHeaderRow = 1;
constexpr uint32_t kFirstEventRow = 2;
constexpr uint32_t kStatusRow = TextScreen::kRows - 2;
constexpr uint32_t kKeysRow = TextScreen::kRows - 1;
constexpr uint32_t kBoxHeight = kStatusRow - kFirstEventRow;

Key wait_for_key(const drivers::Ps2Keyboard& keyboard, KeyDecoder& decoder) {
  for (;;) {
    if (keyboard.key_pending()) {
      const Key key = decoder.feed(keyboard.read_scancode());
      if (key != Key::None) return key;
    } else {
      x86::pause();
    }
  }
}

void draw_events(const CaptureView& view, const ScrollBox& box) {
  for (uint32_t i = 0; i < kBoxHeight; ++i) {
    const uint64_t seq = box.top() + i;
    const uint32_t row = kFirstEventRow + i;
    if (seq >= view.event_count) {
      TextScreen::draw_row(row, seq == 0 ? "  (no events)" : "");
      continue;
    }
    const format::EventRecord& event = view.events[seq];
    const uint64_t ticks = event.tsc >= view.start_tsc ? event.tsc - view.start_tsc : 0;
    TextScreen::print_row(row, TextScreen::kNormal, "%12llu  %5u  %4u   0x%02x  %20llu", seq, event.probe,
                          event.code, event.lines, view.tsc_hz ? ns_for_ticks(ticks, view.tsc_hz) : 0);
  }
}

void draw_keys(const CaptureView& view, const ScrollBox& box, bool saved) {
  const uint64_t first = box.line_count() ? box.top() + 1 : 0;
  TextScreen::print_row(kKeysRow, TextScreen::kInverse,
                        " PgUp PgDn Home End arrows: scroll  %s  ESC: new capture   %llu-%llu of %llu",
                        saved ? "(saved)" : "S: save", first, box.bottom(), view.event_count);
}

void set_status(const char* message) {
  TextScreen::draw_row(kStatusRow, message, TextScreen::kBright);
}

}  // namespace

uint8_t run_start_screen(const char* const* lines, const char* warning, const char* no_keyboard) {
  drivers::Ps2Keyboard keyboard;
  console::set_screen_output(false);
  TextScreen::clear();
  TextScreen::draw_row(kTitleRow, " ETT - Event Timestamping Toolkit: capture stage", TextScreen::kInverse);
  uint32_t row = 2;
  for (const char* const* line = lines; *line && row < kStatusRow; ++line) TextScreen::draw_row(row++, *line);
  if (warning) TextScreen::draw_row(kStatusRow, warning, TextScreen::kWarning);
  if (no_keyboard) {
    TextScreen::print_row(kKeysRow, TextScreen::kInverse, " No keyboard (%s): starting at once", no_keyboard);
    console::write("ETT: start screen: no keyboard, starting at once\n");
    console::set_screen_output(true);
    return 0;
  }
  TextScreen::draw_row(kKeysRow, " Enter: start the capture", TextScreen::kInverse);
  keyboard.drain();  // before the line that tells a user (or a test) that keys are read now
  console::write("ETT: start screen: press Enter to capture\n");
  KeyDecoder decoder;
  while (wait_for_key(keyboard, decoder) != Key::Enter) {
  }
  console::set_screen_output(true);  // the capture's lines show on screen again
  return drivers::StopKeyFilter::kEnter;
}

void run_analysis_stage(const CaptureView& view, SaveFunction save, void* context) {
  drivers::Ps2Keyboard keyboard;
  ScrollBox box(view.event_count, kBoxHeight);
  bool saved = view.saved;
  console::set_screen_output(false);
  TextScreen::clear();
  if (view.warning)
    TextScreen::print_row(kTitleRow, TextScreen::kWarning, " ETT analysis stage: %llu events, stop: %s  %s",
                          view.event_count, format::stop_reason_name(view.stop_reason), view.warning);
  else
    TextScreen::print_row(kTitleRow, TextScreen::kInverse, " ETT analysis stage: %llu events, stop: %s",
                          view.event_count, format::stop_reason_name(view.stop_reason));
  TextScreen::draw_row(kHeaderRow, "         seq  probe  code  lines             time (ns)");
  draw_events(view, box);
  set_status(view.status);
  if (view.no_keyboard) {
    if (!view.status[0]) set_status(view.no_keyboard);
    TextScreen::print_row(kKeysRow, TextScreen::kInverse, " No keyboard: %s; restart the PC to capture again",
                          saved ? "saved by itself" : "not saved");
    console::print("ETT: analysis stage: %llu events (no keyboard: the screen stays)\n", view.event_count);
    x86::halt_forever();
  }
  draw_keys(view, box, saved);
  keyboard.drain();  // before the line that tells a user (or a test) that keys are read now
  console::print("ETT: analysis stage: %llu events (PgUp/PgDn/Home/End/arrows, S: save, ESC: new capture)\n",
                 view.event_count);
  KeyDecoder decoder;
  for (;;) {
    const Key key = wait_for_key(keyboard, decoder);
    if (key == Key::Escape) {
      console::write("ETT: analysis stage: ESC, back to the start screen\n");
      return;
    }
    if (key == Key::Save) {
      SaveOutcome outcome{false, "saving is off (dump=none)"};
      if (saved) {
        outcome = {true, "already saved"};
      } else if (save) {
        set_status("saving ...");
        outcome = save(context);
      }
      saved = saved || outcome.saved;
      console::print("ETT: analysis stage: S: %s\n", outcome.message);
      // The dump's progress lines went through the console, which also writes the screen: redraw it all.
      TextScreen::print_row(kTitleRow, TextScreen::kInverse, " ETT analysis stage: %llu events, stop: %s",
                            view.event_count, format::stop_reason_name(view.stop_reason));
      TextScreen::draw_row(kHeaderRow, "         seq  probe  code  lines             time (ns)");
      draw_events(view, box);
      set_status(outcome.message);
      draw_keys(view, box, saved);
      continue;
    }
    if (box.apply(key)) {
      draw_events(view, box);
      draw_keys(view, box, saved);
    }
  }
}

}  // namespace ett::ui
