// ps2_presence.cpp: one harmless command to the 8042 and one echo to the keyboard behind it, every wait
// against a deadline (written against lib::IoPorts and a clock: the host tests run it against register
// models).
#include "drivers/input/ps2_presence.h"

#include "lib/format.h"

namespace ett::drivers {

namespace {
char g_message[128];  // the failure with the bytes seen (Error holds a static string)
}  // namespace

Status Ps2Presence::check(lib::IoPorts& io, Clock& clock, uint64_t ticks_per_ms) {
  const lib::PortWindow data(io, kDataPort);
  const lib::PortWindow controller(io, kControllerPort);
  const uint64_t step_ticks = ticks_per_ms * kControllerTimeoutMs;
  if (controller.in8(kStatus) == kFloatingBus) return fail("port 0x64 reads 0xFF: no controller there");
  // Keys pressed before (or mouse bytes) would be taken for the reply.
  for (uint32_t i = 0; i < kMaxStaleBytes && (controller.in8(kStatus) & kOutputFull); ++i) data.in8(kData);

  uint64_t deadline = clock.now() + step_ticks;
  while (controller.in8(kStatus) & kInputFull)
    if (clock.now() > deadline) return fail("the 8042 does not take commands (input buffer stays full)");
  controller.out8(kCommand, kReadConfiguration);
  deadline = clock.now() + step_ticks;
  while (!(controller.in8(kStatus) & kOutputFull))
    if (clock.now() > deadline) return fail("the 8042 does not answer a command");
  data.in8(kData);

  // The keyboard: a controller answers with or without one.
  uint8_t last_status = 0, last_byte = 0;
  bool got_byte = false;
  for (uint32_t attempt = 0; attempt < kEchoAttempts; ++attempt) {
    deadline = clock.now() + step_ticks;
    while (controller.in8(kStatus) & kInputFull)
      if (clock.now() > deadline) return fail("the 8042 does not take a byte for the keyboard");
    data.out8(kData, kEcho);
    deadline = clock.now() + ticks_per_ms * kKeyboardTimeoutMs;
    for (;;) {
      const uint8_t status = controller.in8(kStatus);
      if (status & kOutputFull) {
        const uint8_t byte = data.in8(kData);
        if (status & kFromAux) continue;  // a mouse byte
        got_byte = true;
        last_status = status;
        last_byte = byte;
        if (status & (kTimeout | kParityError)) break;  // the controller's verdict: no (working) keyboard
        if (byte == kResend || byte == kError) break;   // ask again
        return {};                                      // the echo, or a key being pressed
      }
      if (clock.now() > deadline) break;
    }
  }
  if (!got_byte)
    lib::format(g_message, sizeof(g_message),
                "the 8042 answers, but no keyboard replied to %u echoes (0xEE) within %u ms each",
                kEchoAttempts, kKeyboardTimeoutMs);
  else
    lib::format(g_message, sizeof(g_message),
                "the 8042 answers, but no keyboard: an echo (0xEE) got 0x%02x with status 0x%02x%s",
                last_byte, last_status, last_status & kTimeout ? " (timeout)" : "");
  return fail(g_message);
}

}  // namespace ett::drivers
