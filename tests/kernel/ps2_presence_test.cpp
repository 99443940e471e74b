// ps2_presence_test.cpp: the keyboard check (drivers/input/ps2_presence.cpp) against a register model of the
// 8042: no controller, a controller that never answers, a controller without a keyboard (timeout bit, or no
// byte at all), a keyboard that answers the echo, one that asks for a resend first, and mouse bytes in the
// way.
#include "drivers/input/ps2_presence.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>

namespace ett::drivers {
namespace {

constexpr uint64_t kTicksPerMs = 10;

// Every read of the clock is one tick: a wait that never ends runs into its deadline.
struct CountingClock final : Ps2Presence::Clock {
  uint64_t ticks = 0;
  uint64_t now() override { return ++ticks; }
};

struct Controller8042 final : lib::IoPorts {
  enum class Keyboard {
    Present,        // answers 0xEE to an echo
    ResendOnce,     // asks for the first echo again (0xFE), then answers
    AbsentTimeout,  // nothing on the keyboard port: the controller answers 0xFE with its timeout bit
    AbsentSilent,   // nothing on the keyboard port, and the controller says nothing at all
  };
  bool present = true;  // false: nothing decodes 0x60/0x64
  bool answers = true;  // false: commands are taken but never answered
  Keyboard keyboard = Keyboard::Present;
  std::deque<std::pair<uint8_t, uint8_t>> out;  // (status bits, byte) waiting in the output buffer
  int echoes = 0;

  uint8_t in8(uint16_t port) override {
    if (!present) return 0xFF;
    if (port == 0x64) return out.empty() ? 0x1C : static_cast<uint8_t>(0x1D | out.front().first);
    if (port == 0x60 && !out.empty()) {
      const uint8_t byte = out.front().second;
      out.pop_front();
      return byte;
    }
    return 0x00;
  }
  void out8(uint16_t port, uint8_t value) override {
    if (!present) return;
    if (port == 0x64 && value == 0x20 && answers) out.emplace_back(0, 0x65);  // the configuration byte
    if (port == 0x60 && value == 0xEE) {
      ++echoes;
      switch (keyboard) {
        case Keyboard::Present:
          out.emplace_back(0, 0xEE);
          break;
        case Keyboard::ResendOnce:
          out.emplace_back(0, echoes == 1 ? 0xFE : 0xEE);
          break;
        case Keyboard::AbsentTimeout:
          out.emplace_back(0x40, 0xFE);
          break;
        case Keyboard::AbsentSilent:
          break;
      }
    }
  }
};

Status check(Controller8042& model) {
  CountingClock clock;
  return Ps2Presence::check(model, clock, kTicksPerMs);
}

TEST(KernelPs2Presence, KeyboardThatAnswersTheEchoIsThere) {
  Controller8042 model;
  model.out.emplace_back(0, 0x1C);  // a key pressed before the check: not taken for the reply
  auto present = check(model);
  EXPECT_TRUE(present) << present.error().message;
  EXPECT_EQ(model.echoes, 1);
  EXPECT_TRUE(model.out.empty());  // its reply read, nothing left for the start screen to take for a key
}

TEST(KernelPs2Presence, KeyboardThatAsksForAResendIsAskedAgain) {
  Controller8042 model;
  model.keyboard = Controller8042::Keyboard::ResendOnce;
  auto present = check(model);
  EXPECT_TRUE(present) << present.error().message;
  EXPECT_EQ(model.echoes, 2);
}

TEST(KernelPs2Presence, MouseBytesAreNotTakenForTheKeyboardsReply) {
  Controller8042 model;
  model.keyboard = Controller8042::Keyboard::AbsentSilent;
  struct MouseFirst final : lib::IoPorts {
    Controller8042& inner;
    explicit MouseFirst(Controller8042& c) : inner(c) {}
    uint8_t in8(uint16_t port) override { return inner.in8(port); }
    void out8(uint16_t port, uint8_t value) override {
      inner.out8(port, value);
      if (port == 0x60 && value == 0xEE) inner.out.emplace_back(0x20, 0x08);  // a mouse packet byte
    }
  } io(model);
  CountingClock clock;
  auto present = Ps2Presence::check(io, clock, kTicksPerMs);
  ASSERT_FALSE(present);
  EXPECT_EQ(std::string(present.error().message),
            "the 8042 answers, but no keyboard replied to 2 echoes (0xEE) within 100 ms each");
}

TEST(KernelPs2Presence, ControllerWithoutKeyboardReportingItsTimeoutIsNoKeyboard) {
  Controller8042 model;
  model.keyboard = Controller8042::Keyboard::AbsentTimeout;
  auto present = check(model);
  ASSERT_FALSE(present);
  EXPECT_EQ(std::string(present.error().message),
            "the 8042 answers, but no keyboard: an echo (0xEE) got 0xfe with status 0x5d (timeout)");
  EXPECT_EQ(model.echoes, int(Ps2Presence::kEchoAttempts));
}

TEST(KernelPs2Presence, SilentControllerWithoutKeyboardTimesOutAfterTheStatedWait) {
  Controller8042 model;
  model.keyboard = Controller8042::Keyboard::AbsentSilent;
  CountingClock clock;
  auto present = Ps2Presence::check(model, clock, kTicksPerMs);
  ASSERT_FALSE(present);
  EXPECT_EQ(std::string(present.error().message),
            "the 8042 answers, but no keyboard replied to 2 echoes (0xEE) within 100 ms each");
  // It waited out each echo's deadline, and not much longer: the start screen is not held up for long.
  const uint64_t echo_wait = Ps2Presence::kKeyboardTimeoutMs * kTicksPerMs;
  EXPECT_GE(clock.ticks, Ps2Presence::kEchoAttempts * echo_wait);
  EXPECT_LE(clock.ticks,
            Ps2Presence::kEchoAttempts * echo_wait + 4 * Ps2Presence::kControllerTimeoutMs * kTicksPerMs);
}

TEST(KernelPs2Presence, NoControllerAndASilentControllerAreRefusedByName) {
  Controller8042 absent;
  absent.present = false;
  auto none = check(absent);
  ASSERT_FALSE(none);
  EXPECT_EQ(std::string(none.error().message), "port 0x64 reads 0xFF: no controller there");

  Controller8042 mute;
  mute.answers = false;
  auto silent = check(mute);
  ASSERT_FALSE(silent);
  EXPECT_EQ(std::string(silent.error().message), "the 8042 does not answer a command");
  EXPECT_EQ(mute.echoes, 0);
}

}  // namespace
}  // namespace ett::drivers
