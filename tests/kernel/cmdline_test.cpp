// cmdline_test.cpp: the kernel command-line parser (kernel/config/cmdline) on good and bad input.
#include "config/cmdline.h"

#include <gtest/gtest.h>

#include <string>

namespace ett::config {
namespace {

using format::CaptureMode;
using format::Layout;
using format::ProbeSource;

Config parse_ok(const char* arguments) {
  auto result = parse_cmdline(arguments);
  EXPECT_TRUE(result.ok()) << "for \"" << arguments << "\": " << (result.ok() ? "" : result.error().message);
  return result.ok() ? result.value() : Config{};
}

std::string parse_error(const char* arguments) {
  auto result = parse_cmdline(arguments);
  EXPECT_FALSE(result.ok()) << "for \"" << arguments << "\"";
  return result.ok() ? std::string() : std::string(result.error().message);
}

TEST(KernelCmdline, EmptyGivesDefaults) {
  for (const char* arguments : {"", " ", "  \t "}) {
    const Config config = parse_ok(arguments);
    EXPECT_EQ(config.probe, ProbeSource::Ivshmem);
    EXPECT_EQ(config.layout, Layout::Double2x4);
    EXPECT_EQ(config.limit_ms, 0u);
    EXPECT_EQ(config.exit, ExitAction::Halt);
    EXPECT_EQ(config.dump, DumpTarget::Ata);
    EXPECT_EQ(config.mode, CaptureMode::Capture);
  }
}

TEST(KernelCmdline, AllOptions) {
  const Config config = parse_ok("probe=ivshmem layout=8x1 limit=2.5 exit=qemu dump=none mode=capture");
  EXPECT_EQ(config.probe, ProbeSource::Ivshmem);
  EXPECT_EQ(config.layout, Layout::Single8x1);
  EXPECT_EQ(config.limit_ms, 2500u);
  EXPECT_EQ(config.exit, ExitAction::Qemu);
  EXPECT_EQ(config.dump, DumpTarget::None);
  EXPECT_EQ(config.mode, CaptureMode::Capture);
}

TEST(KernelCmdline, ExtraSpacesAndTabs) {
  const Config config = parse_ok("  layout=4x2\t\texit=halt   dump=ata  ");
  EXPECT_EQ(config.layout, Layout::Quad4x2);
  EXPECT_EQ(config.exit, ExitAction::Halt);
  EXPECT_EQ(config.dump, DumpTarget::Ata);
}

TEST(KernelCmdline, EveryLayout) {
  EXPECT_EQ(parse_ok("layout=2x4").layout, Layout::Double2x4);
  EXPECT_EQ(parse_ok("layout=8x1").layout, Layout::Single8x1);
  EXPECT_EQ(parse_ok("layout=4x2").layout, Layout::Quad4x2);
  EXPECT_EQ(parse_ok("layout=1x8").layout, Layout::Byte1x8);
}

TEST(KernelCmdline, ValuesAreSpelledAsTheHostToolsNameThem) {
  for (Layout layout : {Layout::Double2x4, Layout::Single8x1, Layout::Quad4x2, Layout::Byte1x8}) {
    const std::string option = std::string("layout=") + format::layout_name(static_cast<uint32_t>(layout));
    EXPECT_EQ(parse_ok(option.c_str()).layout, layout);
  }
  const std::string mode =
      std::string("mode=") + format::mode_name(static_cast<uint32_t>(CaptureMode::Capture));
  EXPECT_EQ(parse_ok(mode.c_str()).mode, CaptureMode::Capture);
  const std::string probe =
      std::string("probe=") + format::probe_source_name(static_cast<uint32_t>(ProbeSource::Ivshmem));
  EXPECT_EQ(parse_ok(probe.c_str()).probe, ProbeSource::Ivshmem);
}

TEST(KernelCmdline, LimitForms) {
  EXPECT_EQ(parse_ok("limit=1").limit_ms, 1000u);
  EXPECT_EQ(parse_ok("limit=60").limit_ms, 60000u);
  EXPECT_EQ(parse_ok("limit=0.5").limit_ms, 500u);
  EXPECT_EQ(parse_ok("limit=0.05").limit_ms, 50u);
  EXPECT_EQ(parse_ok("limit=0.001").limit_ms, 1u);
  EXPECT_EQ(parse_ok("limit=2.125").limit_ms, 2125u);
  EXPECT_EQ(parse_ok("limit=007").limit_ms, 7000u);
  EXPECT_EQ(parse_ok("limit=4294967").limit_ms, 4294967000u);
  EXPECT_EQ(parse_ok("limit=4294967.295").limit_ms, 4294967295u);
}

TEST(KernelCmdline, BadLimits) {
  EXPECT_EQ(parse_error("limit=abc"), "limit: 'abc' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=-1"), "limit: '-1' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=1e3"), "limit: '1e3' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=.5"), "limit: '.5' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=5."), "limit: '5.' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=1.2.3"), "limit: '1.2.3' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=1s"), "limit: '1s' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=+1"), "limit: '+1' is not a number of seconds");
  EXPECT_EQ(parse_error("limit=1.2345"), "limit: '1.2345' has more than 3 decimals (milliseconds)");
  EXPECT_EQ(parse_error("limit=0"), "limit: '0' must be more than 0 seconds");
  EXPECT_EQ(parse_error("limit=0.000"), "limit: '0.000' must be more than 0 seconds");
  EXPECT_EQ(parse_error("limit=4294968"), "limit: '4294968' is too long (at most 4294967 seconds)");
  EXPECT_EQ(parse_error("limit=4294967.296"), "limit: '4294967.296' is too long (at most 4294967 seconds)");
  EXPECT_EQ(parse_error("limit=99999999999999999999"),
            "limit: '99999999999999999999' is too long (at most 4294967 seconds)");
}

TEST(KernelCmdline, UnknownOption) {
  EXPECT_EQ(parse_error("foo=1"), "unknown option 'foo=1'");
  EXPECT_EQ(parse_error("limit=1 Layout=2x4"), "unknown option 'Layout=2x4'");
  EXPECT_EQ(parse_error("=2x4"), "unknown option '=2x4'");
}

TEST(KernelCmdline, MissingEquals) {
  EXPECT_EQ(parse_error("limit"), "option 'limit' is not key=value");
  EXPECT_EQ(parse_error("quiet"), "option 'quiet' is not key=value");
}

TEST(KernelCmdline, EmptyValue) {
  EXPECT_EQ(parse_error("limit="), "option 'limit=' has an empty value");
  EXPECT_EQ(parse_error("layout= exit=qemu"), "option 'layout=' has an empty value");
}

TEST(KernelCmdline, DuplicateKey) {
  EXPECT_EQ(parse_error("limit=1 limit=2"), "option 'limit=2' is given twice");
  EXPECT_EQ(parse_error("exit=qemu layout=2x4 exit=qemu"), "option 'exit=qemu' is given twice");
}

TEST(KernelCmdline, BadValues) {
  EXPECT_EQ(parse_error("layout=3x3"), "layout: unknown layout '3x3' (expected 2x4, 8x1, 4x2 or 1x8)");
  EXPECT_EQ(parse_error("exit=reboot"), "exit: unknown action 'reboot' (expected qemu or halt)");
  EXPECT_EQ(parse_error("dump=tape"), "dump: unknown target 'tape' (expected ata, serial or none)");
  EXPECT_EQ(parse_error("auto=yes"), "auto: 'yes' must be 0 or 1");
  EXPECT_EQ(parse_error("mode=fast"),
            "mode: unknown mode 'fast' (expected capture, calibrate, hwlat or survey)");
  EXPECT_EQ(parse_error("probe=usb"),
            "probe: unknown source 'usb' (expected ivshmem, lpt, lpt:BASE, pci-lpt, lpt-loopback, uart, "
            "uart:BASE, uart-loopback or pci-uart[:BUS:DEV.FN])");
  EXPECT_EQ(parse_error("probe=lpt:"), "probe: 'lpt:' is not an I/O port base (e.g. lpt:0x378, uart:0x2f8)");
  EXPECT_EQ(parse_error("probe=lpt:0xZZ"),
            "probe: 'lpt:0xZZ' is not an I/O port base (e.g. lpt:0x378, uart:0x2f8)");
  EXPECT_EQ(parse_error("probe=lpt:0x10000"),
            "probe: 'lpt:0x10000' is not an I/O port base (e.g. lpt:0x378, uart:0x2f8)");
  EXPECT_EQ(parse_error("probe=lpt:0"),
            "probe: 'lpt:0' is not an I/O port base (e.g. lpt:0x378, uart:0x2f8)");
}

TEST(KernelCmdline, ValuesAreCaseSensitive) {
  EXPECT_EQ(parse_error("exit=QEMU"), "exit: unknown action 'QEMU' (expected qemu or halt)");
}

TEST(KernelCmdline, ParallelPortSources) {
  EXPECT_EQ(parse_ok("probe=lpt").probe, format::ProbeSource::Lpt);
  EXPECT_EQ(parse_ok("probe=lpt").probe_io_base, 0);
  EXPECT_EQ(parse_ok("probe=lpt:0x278").probe_io_base, 0x278);
  EXPECT_EQ(parse_ok("probe=lpt:888").probe_io_base, 888);
  EXPECT_EQ(parse_ok("probe=pci-lpt").probe, format::ProbeSource::PciLpt);
  EXPECT_EQ(parse_ok("probe=lpt-loopback").probe, format::ProbeSource::LptLoopback);
}

TEST(KernelCmdline, UartSources) {
  EXPECT_EQ(parse_ok("probe=uart").probe, format::ProbeSource::Uart);
  EXPECT_EQ(parse_ok("probe=uart").probe_io_base, 0);
  EXPECT_EQ(parse_ok("probe=uart:0x3e8").probe, format::ProbeSource::Uart);
  EXPECT_EQ(parse_ok("probe=uart:0x3e8").probe_io_base, 0x3e8);
  EXPECT_EQ(parse_ok("probe=uart-loopback").probe, format::ProbeSource::UartLoopback);
  EXPECT_EQ(parse_ok("probe=uart-loopback:760").probe_io_base, 760);
  EXPECT_EQ(parse_ok("probe=uart-loopback:760").probe, format::ProbeSource::UartLoopback);
  EXPECT_EQ(parse_error("probe=uart:0x"),
            "probe: 'uart:0x' is not an I/O port base (e.g. lpt:0x378, uart:0x2f8)");
}

TEST(KernelCmdline, Modes) {
  EXPECT_EQ(parse_ok("mode=calibrate").mode, CaptureMode::Calibrate);
  EXPECT_EQ(parse_ok("mode=hwlat").mode, CaptureMode::HwLat);
  EXPECT_EQ(parse_ok("mode=hwlat threshold=2500").hwlat_threshold_ns, 2500u);
  EXPECT_EQ(parse_error("threshold=0 mode=hwlat"),
            "threshold: '0' is not a number of nanoseconds (1 to 1000000000)");
  EXPECT_EQ(parse_error("threshold=10us mode=hwlat"),
            "threshold: '10us' is not a number of nanoseconds (1 to 1000000000)");
  EXPECT_EQ(parse_error("threshold=100"), "threshold= applies to mode=hwlat and mode=survey only");
}

TEST(KernelCmdline, SurveyTakesItsWindowAndThreshold) {
  const Config survey = parse_ok("mode=survey limit=3 threshold=500");
  EXPECT_EQ(survey.mode, CaptureMode::Survey);
  EXPECT_EQ(survey.limit_ms, 3000u);
  EXPECT_EQ(survey.hwlat_threshold_ns, 500u);
  EXPECT_EQ(std::string("mode=") + format::mode_name(static_cast<uint32_t>(CaptureMode::Survey)),
            "mode=survey");
  EXPECT_EQ(parse_error("mode=survey stop=zero"),
            "trigger=, filter= and stop= apply to mode=capture only, not mode=survey");
  EXPECT_EQ(parse_error("mode=survey bench=20"), "bench= applies to mode=capture only");
}

TEST(KernelCmdline, LoopBenchmark) {
  EXPECT_EQ(parse_ok("").bench_windows, 0u);
  EXPECT_EQ(parse_ok("bench=32 filter=XXXX1111").bench_windows, 32u);
  EXPECT_EQ(parse_error("bench=19"), "bench: '19' is not a number of window pairs (20 to 1000)");
  EXPECT_EQ(parse_error("bench=1001"), "bench: '1001' is not a number of window pairs (20 to 1000)");
  EXPECT_EQ(parse_error("bench=32 mode=calibrate"), "bench= applies to mode=capture only");
}

TEST(KernelCmdline, TriggerAndPretrigger) {
  const Config config = parse_ok("trigger=1X0XXXXx pretrigger=16");
  EXPECT_TRUE(config.trigger_enabled);
  EXPECT_EQ(config.trigger_mask, 0xA0);
  EXPECT_EQ(config.trigger_match, 0x80);
  EXPECT_EQ(config.pretrigger, 16u);
  EXPECT_FALSE(parse_ok("").trigger_enabled);
  EXPECT_EQ(parse_error("trigger=1X0"), "trigger: '1X0' must be 8 trits, D7 first (e.g. 1X0XXXXX)");
  EXPECT_EQ(parse_error("trigger=1X0XXXX2"), "trigger: '1X0XXXX2' may hold only 1, 0 and X");
  EXPECT_EQ(parse_error("trigger=XXXXXXXX"), "trigger: 'XXXXXXXX' has no 1 or 0: it would match always");
  EXPECT_EQ(parse_error("pretrigger=8"), "pretrigger= needs a trigger=");
  EXPECT_EQ(parse_error("trigger=1XXXXXXX pretrigger=-1"), "pretrigger: '-1' is not a number of events");
  EXPECT_EQ(parse_error("trigger=1XXXXXXX mode=calibrate"),
            "trigger=, filter= and stop= apply to mode=capture only, not mode=calibrate");
}

TEST(KernelCmdline, Filter) {
  EXPECT_EQ(parse_ok("filter=XXXX1111").filter_mask, 0x0F);
  EXPECT_EQ(parse_ok("").filter_mask, 0xFF);
  EXPECT_EQ(parse_error("filter=XXXX0111"), "filter: 'XXXX0111' may hold only 1 and X");
  EXPECT_EQ(parse_error("filter=XXXXXXXX"), "filter: 'XXXXXXXX' has no 1: no line would give events");
  EXPECT_EQ(parse_error("filter=111"), "filter: '111' must be 8 trits, D7 first (e.g. 1X0XXXXX)");
}

TEST(KernelCmdline, StopRulesAndKeyboard) {
  EXPECT_EQ(parse_ok("stop=zero").stop_rule, format::StopReason::ZeroCode);
  const Config code = parse_ok("stop=code:2:15");
  EXPECT_EQ(code.stop_rule, format::StopReason::CodeMatch);
  EXPECT_EQ(code.stop_probe, 2);
  EXPECT_EQ(code.stop_code, 15);
  EXPECT_EQ(parse_ok("layout=1x8 stop=code:1:0xC8").stop_code, 0xC8);
  EXPECT_EQ(parse_error("stop=one"), "stop: unknown rule 'one' (expected zero or code:P:C)");
  EXPECT_EQ(parse_error("stop=code:2"), "stop: 'code:2' is not code:PROBE:CODE (e.g. code:2:15)");
  EXPECT_EQ(parse_error("stop=code:0:1"), "stop: 'code:0:1' is not code:PROBE:CODE (e.g. code:2:15)");
  EXPECT_EQ(parse_error("stop=code:3:1"),
            "stop=code:3:1 does not exist under layout=2x4 (2 probes of 4 bits)");
  EXPECT_EQ(parse_error("stop=code:1:16"),
            "stop=code:1:16 does not exist under layout=2x4 (2 probes of 4 bits)");
  EXPECT_TRUE(parse_ok("keyboard=1").keyboard);
  EXPECT_FALSE(parse_ok("keyboard=0").keyboard);
  EXPECT_EQ(parse_error("keyboard=yes"), "keyboard: 'yes' must be 0 or 1");
}

TEST(Cmdline, UsbTakesTheControllersOnlyWhenNoKeyboardIsNeeded) {
  EXPECT_FALSE(takes_usb(parse_ok("")));
  EXPECT_TRUE(takes_usb(parse_ok("auto=1")));
  EXPECT_TRUE(takes_usb(parse_ok("exit=qemu")));
  EXPECT_TRUE(takes_usb(parse_ok("usb=take")));
  EXPECT_FALSE(takes_usb(parse_ok("usb=keep auto=1")));
  EXPECT_FALSE(takes_usb(parse_ok("usb=auto auto=0")));
  EXPECT_EQ(parse_error("usb=off"), "usb: 'off' must be auto, take or keep");
}

TEST(Cmdline, BufferPlacementDefaultsToAllOfRam) {
  EXPECT_EQ(parse_ok("").buffer, BufferPlacement::All);
  EXPECT_EQ(parse_ok("buffer=above4g").buffer, BufferPlacement::Above4G);
  EXPECT_EQ(parse_ok("buffer=all").buffer, BufferPlacement::All);
  EXPECT_EQ(parse_ok("buffer=split").buffer, BufferPlacement::Split);
  EXPECT_EQ(parse_error("buffer=high"), "buffer: 'high' must be all, above4g or split");
}

TEST(KernelCmdline, SyntaxErrorsWinOverUnsupportedSettings) {
  EXPECT_EQ(parse_error("probe=lpt foo=1"), "unknown option 'foo=1'");
}

TEST(KernelCmdline, FirstErrorWins) {
  EXPECT_EQ(parse_error("foo=1 limit=abc"), "unknown option 'foo=1'");
}

TEST(KernelCmdline, LongWordIsTruncatedInTheMessageNotOverflowed) {
  const std::string word(500, 'x');
  const std::string arguments = word + "=1";
  const std::string message = parse_error(arguments.c_str());
  EXPECT_EQ(message.rfind("unknown option 'xxxx", 0), 0u);
  EXPECT_LT(message.size(), sizeof(CmdlineError::message));
}

TEST(KernelCmdline, QemuPutsTheKernelPathFirst) {
  const char* cmdline = "/build/bin/ett-kernel.elf exit=qemu limit=1";
  EXPECT_STREQ(kernel_arguments(cmdline, "qemu"), "exit=qemu limit=1");
  const Config config = parse_ok(kernel_arguments(cmdline, "qemu"));
  EXPECT_EQ(config.exit, ExitAction::Qemu);
  EXPECT_EQ(config.limit_ms, 1000u);
  // The path is never parsed, even when it looks like an option.
  EXPECT_STREQ(kernel_arguments("exit=qemu limit=2", "qemu"), "limit=2");
}

TEST(KernelCmdline, Grub2PassesOnlyTheArguments) {
  // `multiboot /boot/ett-kernel.elf probe=ivshmem limit=60` in grub.cfg reaches the kernel as this.
  EXPECT_STREQ(kernel_arguments("probe=ivshmem limit=60", "GRUB 2.06-13+deb12u1"), "probe=ivshmem limit=60");
  EXPECT_STREQ(kernel_arguments("  limit=60", "GRUB 1.99"), "limit=60");
  EXPECT_STREQ(kernel_arguments("", "GRUB 2.12"), "");
}

TEST(KernelCmdline, OtherLoadersPutTheKernelPathFirst) {
  EXPECT_STREQ(kernel_arguments("/boot/kernel limit=60", "GNU GRUB 0.97"), "limit=60");
  EXPECT_STREQ(kernel_arguments("/boot/kernel limit=60", ""), "limit=60");
  EXPECT_STREQ(kernel_arguments("  k   a=b ", "GRUB"), "a=b ");
  EXPECT_STREQ(kernel_arguments("/boot/kernel", "qemu"), "");
  EXPECT_STREQ(kernel_arguments("", "qemu"), "");
}

TEST(KernelCmdline, HasWord) {
  EXPECT_TRUE(has_word("k exit=qemu limit=x", "exit=qemu"));
  EXPECT_TRUE(has_word("k limit=x\texit=qemu", "exit=qemu"));
  EXPECT_FALSE(has_word("k exit=qemux", "exit=qemu"));
  EXPECT_FALSE(has_word("k xexit=qemu", "exit=qemu"));
  EXPECT_FALSE(has_word("k exit=halt", "exit=qemu"));
  EXPECT_FALSE(has_word("", "exit=qemu"));
}

}  // namespace
}  // namespace ett::config
