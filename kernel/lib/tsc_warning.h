// tsc_warning.h: the loud warning for a TSC that is not invariant (CPUID 80000007H:EDX[8] clear): its rate
// may follow the CPU's P-states and it may stop in deep C-states, so every time computed from it may be
// wrong. The capture still runs (the loop holds one P-state with interrupts off), but nobody may miss the
// warning: boot log (screen and serial), the start screen and the analysis stage (in red), and the session
// flags.
#pragma once

namespace ett::lib {

// The boot-log lines (nullptr-terminated), or nullptr when the TSC is invariant.
inline const char* const* tsc_warning_lines(bool invariant_tsc) {
  static constexpr const char* kLines[] = {
      "ETT: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
      "ETT: WARNING: THE TSC IS NOT INVARIANT (CPUID 80000007H:EDX[8] is clear).",
      "ETT: WARNING: its rate may change with the CPU's P-/C-states: timestamps may be",
      "ETT: WARNING: wrong. Turn off SpeedStep/Cool'n'Quiet and C-states in the BIOS.",
      "ETT: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
      nullptr,
  };
  return invariant_tsc ? nullptr : kLines;
}

// The start screen's red row, or nullptr.
inline const char* tsc_screen_warning(bool invariant_tsc) {
  return invariant_tsc ? nullptr
                       : " WARNING: THE TSC IS NOT INVARIANT: times may be wrong (see the boot log)";
}

// The analysis stage's title-row mark, or nullptr.
inline const char* tsc_title_warning(bool invariant_tsc) {
  return invariant_tsc ? nullptr : "TSC NOT INVARIANT!";
}

}  // namespace ett::lib
