// bochs_boot_test.cpp: the kernel's main paths on Bochs, a second PC model written apart from QEMU (its own
// BIOS, PIT, HPET, ACPI PM timer, IDE and parallel port): the GRUB ISO boot, the TSC calibration, a dump to
// an IDE trace disk read back by `ett ls` and `ett extract`, mode=hwlat, probe=lpt and the analysis stage's
// screen. Bochs runs with `clock: sync=none`: guest time is instruction count, so the TSC runs at exactly the
// configured `ips` and host load does not show in the guest.
#include <regex>

#include "bochs_machine.h"

namespace ett::test {
namespace {

constexpr double kIps = 200000000;  // BochsOptions::cpu's default: the guest's TSC rate

// Bochs's PIT advances on its microsecond clock, not count by count: OUT2 may rise up to 1 us late at each
// end of a 50 ms round, 40 ppm beyond the uncertainty the kernel states. (Its ACPI PM timer moves in steps of
// 3-4 counts for the same reason: the kernel measures that step and widens the PM timer's uncertainty by it.)
constexpr double kMicrosecondClockPpm = 40;

struct Reference {
  double hz = 0;
  double ppm = 0;
};

// "ETT: tsc vs <name>...: <hz> Hz +-<ppm> ppm" from the serial log.
Reference reference_line(const std::string& serial, const std::string& name_and_where) {
  std::smatch match;
  const std::regex pattern("ETT: tsc vs " + name_and_where + ": ([0-9]+) Hz \\+-([0-9]+) ppm");
  if (!std::regex_search(serial, match, pattern)) return {};
  return {std::stod(match[1]), std::stod(match[2])};
}

double ppm_from_ips(const Reference& reference) {
  return std::abs(reference.hz - kIps) / kIps * 1e6;
}

// One boot covers the GRUB ISO, the calibration, mode=hwlat, the IDE dump and the analysis screen.
TEST(BochsBoot, GrubIsoCalibratesAgainstThreeTimersAndAnHwlatDumpReadsBack) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  make_trace_disk(trace, "64M");  // 130 x 16 x 63 sectors and a little more: the geometry Bochs is given
  const fs::path iso = make_test_iso(dir / "", "mode=hwlat limit=0.2 auto=1");
  BochsMachine bochs(dir / "", {.iso = iso, .disk = trace});
  ASSERT_TRUE(bochs.wait_serial("ETT: RESULT", 120)) << bochs.serial();
  const double boot_seconds = bochs.elapsed();
  ASSERT_TRUE(bochs.wait_screen(0, "ETT analysis stage: 0 events", 30))
      << bochs.serial() << "\nscreen row 0: " << bochs.screen()[0];
  // Bochs's Athlon has no invariant TSC: the analysis screen's title says so.
  EXPECT_TRUE(has(bochs.screen()[0], "TSC NOT INVARIANT!")) << bochs.screen()[0];
  bochs.stop();
  std::printf("bochs: GRUB ISO to RESULT in %.1f s (host)\n", boot_seconds);
  const std::string serial = bochs.serial();

  EXPECT_TRUE(
      std::regex_search(serial, std::regex("ETT: command line \"mode=hwlat limit=0.2 auto=1\" from GRUB")))
      << serial;
  EXPECT_TRUE(has(serial, "ETT: RESULT OK events=0 session=1")) << serial;
  EXPECT_FALSE(has(serial, "PANIC")) << serial;

  // The three references Bochs offers, each within its stated bound of the true rate (the PIT: plus Bochs's
  // microsecond steps). The PM timer's bound includes its step: more than the +-8 ppm of a count-by-count
  // timer.
  const Reference hpet = reference_line(serial, "HPET \\(0xfed00000, period 10000000 fs\\)");
  const Reference pm = reference_line(serial, "ACPI PM timer \\(port 0xb008, 24-bit\\)");
  const Reference pit = reference_line(serial, "PIT");
  ASSERT_GT(hpet.hz, 0) << serial;
  ASSERT_GT(pm.hz, 0) << serial;
  ASSERT_GT(pit.hz, 0) << serial;
  std::printf(
      "bochs: tsc vs HPET %+.1f ppm (stated +-%.0f), PM timer %+.1f ppm (+-%.0f), PIT %+.1f ppm (+-%.0f)\n",
      (hpet.hz - kIps) / kIps * 1e6, hpet.ppm, (pm.hz - kIps) / kIps * 1e6, pm.ppm,
      (pit.hz - kIps) / kIps * 1e6, pit.ppm);
  EXPECT_LE(ppm_from_ips(hpet), hpet.ppm) << serial;
  EXPECT_LE(ppm_from_ips(hpet), 10) << serial;
  EXPECT_LE(ppm_from_ips(pm), pm.ppm) << serial;
  EXPECT_GE(pm.ppm, 15) << serial;
  EXPECT_LE(ppm_from_ips(pit), pit.ppm + kMicrosecondClockPpm) << serial;
  EXPECT_TRUE(std::regex_search(serial, std::regex("ETT: tsc [0-9]+ Hz \\+-[0-9]+ ppm from the HPET")))
      << serial;
  EXPECT_FALSE(has(serial, "the reference timers disagree")) << serial;

  // The dump on the primary slave (the CD is the primary master), read back.
  EXPECT_TRUE(has(serial, "ETT: ide primary master: ata: not an ATA disk (ATAPI or SATA signature)"))
      << serial;
  EXPECT_TRUE(std::regex_search(serial, std::regex("ETT: ide primary slave: disk \"[^\"]*\", [0-9]+ sectors: "
                                                   "ETT trace disk")))
      << serial;
  EXPECT_TRUE(has(serial, "ETT: dump verified")) << serial;
  const auto ls = run_ett({"ls", trace.string(), "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_TRUE(has(ls.output, "\"mode\":\"hwlat\"")) << ls.output;
  EXPECT_TRUE(has(ls.output, "\"tsc_method\":\"hpet\"")) << ls.output;
  EXPECT_TRUE(has(ls.output, "\"cpu_brand\":\"AMD Athlon(tm) processor\"")) << ls.output;
  const auto extracted = run_ett({"extract", trace.string()});
  EXPECT_EQ(extracted.exit_code, 0) << extracted.output;
}

// probe=lpt on Bochs's parallel port: no ECR, and the direction bit is honoured (0xff read back with it set),
// as on QEMU; an undriven input port captures nothing. Each port read costs Bochs ~1.4 us of host time (and
// one instruction of guest time: 5 ticks per poll), so the capture is kept to 50 ms.
TEST(BochsBoot, TheLptInputCheckPassesOnBochsParallelPort) {
  ScratchDir dir;
  const fs::path iso = make_test_iso(dir / "", "probe=lpt limit=0.05 auto=1 dump=none");
  BochsMachine bochs(dir / "", {.iso = iso, .parport = true});
  ASSERT_TRUE(bochs.wait_serial("ETT: RESULT", 120)) << bochs.serial();
  std::printf("bochs: probe=lpt boot to RESULT in %.1f s (host)\n", bochs.elapsed());
  bochs.stop();
  const std::string serial = bochs.serial();
  EXPECT_TRUE(std::regex_search(serial, std::regex("ETT: probe lpt at I/O 0x378: no ECR at 0x77a")))
      << serial;
  EXPECT_TRUE(has(serial,
                  "ETT: probe lpt at I/O 0x378: input, checked before the capture: wrote 0x55/0xaa, read "
                  "0x55/0xaa with the direction bit clear, 0xff/0xff set"))
      << serial;
  EXPECT_TRUE(has(serial, "ETT: captured 0 events (stop: deadline)")) << serial;
  EXPECT_TRUE(has(serial, "lines 0xff -> 0xff")) << serial;
  EXPECT_TRUE(has(serial, "ETT: RESULT OK")) << serial;
}

}  // namespace
}  // namespace ett::test
