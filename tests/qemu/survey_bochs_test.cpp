// survey_bochs_test.cpp: mode=survey on Bochs, the second PC model: its parallel port without an ECR, its
// three reference timers, no ivshmem, the trace disk on the primary slave (the GRUB CD, ATAPI, is no disk).
#include "bochs_machine.h"
#include "survey_image.h"

namespace ett::test {
namespace {

constexpr uint32_t S(format::SurveyStatus s) {
  return static_cast<uint32_t>(s);
}

TEST(SurveyBochs, ListsTheParallelPortTimersAndTheTraceDisk) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  make_trace_disk(trace, "64M");  // the geometry BochsMachine gives the disk
  const fs::path iso = make_test_iso(dir / "", "mode=survey limit=0.5 auto=1");
  BochsMachine bochs(dir / "", {.iso = iso, .disk = trace, .parport = true});
  ASSERT_TRUE(bochs.wait_serial("ETT: RESULT", 300)) << bochs.serial();
  std::printf("bochs: survey boot to RESULT in %.1f s (host)\n", bochs.elapsed());
  bochs.stop();
  const std::string serial = bochs.serial();
  ASSERT_TRUE(has(serial, "ETT: RESULT OK events=0 session=1")) << serial;
  EXPECT_FALSE(has(serial, "PANIC")) << serial;
  // The figures, for the record: Bochs's port read and the survey's length in guest time.
  for (const char* line : {"ETT: survey: probe lpt 0x378: ", "ETT: survey: done "}) {
    const size_t at = serial.find(line);
    if (at != std::string::npos)
      std::printf("bochs: %s\n", serial.substr(at, serial.find('\n', at) - at).c_str());
  }

  const Survey s = read_survey(trace);
  const format::SurveyBlock& b = s.block;
  // Bochs's Athlon: no invariant TSC, no MSR_SMI_COUNT.
  EXPECT_EQ(s.header.flags & format::kFlagInvariantTsc, 0u);
  EXPECT_EQ(s.header.flags & format::kFlagSmiCount, 0u);
  ASSERT_EQ(b.timer_count, 4u);
  for (uint32_t i = 0; i < 3; ++i) {  // HPET, PM timer, PIT: all there, within 100 ppm of the chosen one
    EXPECT_EQ(b.timers[i].status, S(format::SurveyStatus::Usable)) << i;
    EXPECT_LE(std::abs(b.timers[i].ppm_vs_chosen), 100) << i;
  }
  EXPECT_EQ(b.timers[3].status, S(format::SurveyStatus::Absent));  // no CPUID 0x15/0x16
  EXPECT_EQ(b.hwlat_window_ms, 500u);

  uint32_t usable = 0;
  for (uint32_t i = 0; i < b.probe_count; ++i) {
    const format::SurveyProbe& p = b.probes[i];
    const auto source = static_cast<format::ProbeSource>(p.source);
    if (source == format::ProbeSource::Lpt && p.address == 0x378) {
      ASSERT_EQ(p.status, S(format::SurveyStatus::Usable)) << p.detail;
      EXPECT_EQ(p.port_mode, 0xFFFFFFFFu);  // Bochs's port has no ECR
      EXPECT_EQ(p.reads, 4096u);
      EXPECT_GT(p.step_ticks_max, 0u);
      ++usable;
    } else if (source == format::ProbeSource::Uart && p.address == 0x3F8) {
      EXPECT_EQ(p.status, S(format::SurveyStatus::Refused));
    } else {
      EXPECT_EQ(p.status, S(format::SurveyStatus::Absent))
          << format::probe_source_name(p.source) << " 0x" << std::hex << p.address << ": " << p.detail;
    }
  }
  EXPECT_EQ(usable, 1u);

  ASSERT_EQ(b.disk_count, 1u) << serial;
  const format::SurveyDisk& d = b.disks[0];
  EXPECT_EQ(d.interface, static_cast<uint32_t>(format::DiskInterface::Ide));
  EXPECT_EQ(d.port, 1u);  // primary slave
  EXPECT_EQ(d.status, S(format::SurveyStatus::Usable));
  EXPECT_EQ(std::memcmp(d.disk_uuid, s.label.disk_uuid, 16), 0);
  EXPECT_GE(d.sectors, 130u * 16 * 63);
  EXPECT_EQ(b.keyboard, S(format::SurveyStatus::Usable));
}

}  // namespace
}  // namespace ett::test
