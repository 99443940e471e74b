// survey_boot_test.cpp: mode=survey boots on three QEMU machine models (pc + SeaBIOS + IDE with a parallel
// port and two serial ports; q35 + OVMF + AHCI; q35 + NVMe without a parallel port) and on a machine without
// a trace disk. Each reads the survey session straight from the trace image through trace_format.h (CRCs
// checked) and asserts that it lists exactly what the machine model has.
#include <cstring>

#include "harness/qemu_disks.h"
#include "qemu_direct.h"
#include "survey_image.h"

namespace ett::test {
namespace {

using format::ProbeSource;
using format::SurveyStatus;
using host::AttachedDisk;
using host::DiskInterface;

const int kSuccess = vprobe::qemu_status_for(vprobe::kExitSuccess);
constexpr double kSurveySeconds = 120;
constexpr uint64_t kTraceSectors = 32768;  // 16 MiB
constexpr uint64_t kOtherSectors = 4096;   // 2 MiB

// -kernel boot options of a survey on `machine` with a hwlat window of `limit` seconds.
DirectOptions survey_options(const char* machine, const std::string& limit, std::vector<AttachedDisk> disks) {
  DirectOptions o;
  o.machine = machine;
  o.append = "mode=survey limit=" + limit + " exit=qemu";
  o.attached = std::move(disks);
  return o;
}

// Boots the survey and waits for QEMU to leave; the serial log, or "" (a failure recorded) unless QEMU left
// with the success status.
std::string boot_survey(const DirectOptions& o, const fs::path& dir) {
  QemuMachine qemu(o, dir);
  auto exit = qemu.wait_exit(kSurveySeconds);
  const bool ok = exit && exit->exited && exit->status == kSuccess;
  EXPECT_TRUE(ok) << qemu.serial();
  return ok ? qemu.serial() : "";
}

const format::SurveyProbe* find_probe(const format::SurveyBlock& b, ProbeSource source, uint32_t address) {
  for (uint32_t i = 0; i < b.probe_count && i < format::kSurveyMaxProbes; ++i)
    if (b.probes[i].source == static_cast<uint32_t>(source) &&
        (address == 0 || b.probes[i].address == address))
      return &b.probes[i];
  return nullptr;
}

uint32_t status(const format::SurveyProbe* p) {
  return p ? p->status : 0xFFFFFFFFu;
}
constexpr uint32_t S(SurveyStatus s) {
  return static_cast<uint32_t>(s);
}

// The expected status of every candidate, and the figures a usable one must have.
void expect_probes(const format::SurveyBlock& b, bool lpt_0x378, bool com2, const std::string& serial,
                   bool pci_serial = false) {
  EXPECT_EQ(b.probe_count, 10u);
  EXPECT_EQ(status(find_probe(b, ProbeSource::Lpt, 0x378)),
            S(lpt_0x378 ? SurveyStatus::Usable : SurveyStatus::Absent))
      << serial;
  EXPECT_EQ(status(find_probe(b, ProbeSource::Lpt, 0x278)), S(SurveyStatus::Absent)) << serial;
  EXPECT_EQ(status(find_probe(b, ProbeSource::Lpt, 0x3BC)), S(SurveyStatus::Absent)) << serial;
  EXPECT_EQ(status(find_probe(b, ProbeSource::PciLpt, 0)), S(SurveyStatus::Absent)) << serial;
  const format::SurveyProbe* com1 = find_probe(b, ProbeSource::Uart, 0x3F8);
  EXPECT_EQ(status(com1), S(SurveyStatus::Refused)) << serial;
  if (com1) {
    EXPECT_STREQ(com1->detail, "COM1, the kernel's serial console");
  }
  EXPECT_EQ(status(find_probe(b, ProbeSource::Uart, 0x2F8)),
            S(com2 ? SurveyStatus::Usable : SurveyStatus::Absent))
      << serial;
  EXPECT_EQ(status(find_probe(b, ProbeSource::Uart, 0x3E8)), S(SurveyStatus::Absent)) << serial;
  EXPECT_EQ(status(find_probe(b, ProbeSource::Uart, 0x2E8)), S(SurveyStatus::Absent)) << serial;
  const format::SurveyProbe* pci_uart = find_probe(b, ProbeSource::PciUart, 0);
  if (pci_serial) {
    ASSERT_EQ(status(pci_uart), S(SurveyStatus::Usable)) << serial;
    EXPECT_EQ(pci_uart->pci_vendor, 0x1B36);  // QEMU's pci-serial
    EXPECT_EQ(pci_uart->pci_device, 0x0002);
  } else {
    EXPECT_EQ(status(pci_uart), S(SurveyStatus::Absent)) << serial;
  }
  const format::SurveyProbe* ivshmem = find_probe(b, ProbeSource::Ivshmem, 0);
  ASSERT_EQ(status(ivshmem), S(SurveyStatus::Usable)) << serial;
  EXPECT_EQ(ivshmem->pci_vendor, 0x1AF4);
  EXPECT_EQ(ivshmem->pci_device, 0x1110);
  for (uint32_t i = 0; i < b.probe_count; ++i) {
    const format::SurveyProbe& p = b.probes[i];
    EXPECT_EQ(p.detail[sizeof(p.detail) - 1], '\0');
    if (p.status != S(SurveyStatus::Usable)) {
      EXPECT_EQ(p.reads, 0u);
      EXPECT_NE(p.detail[0], '\0') << "probe " << i << ": no reason given";
      continue;
    }
    EXPECT_EQ(p.reads, 4096u);
    EXPECT_LE(p.read_ticks_min, p.read_ticks_median);
    EXPECT_LE(p.read_ticks_median, p.read_ticks_max);
    EXPECT_GT(p.read_ticks_max, 0u);
    EXPECT_GT(p.step_ticks_max, 0u) << "probe " << i;
    EXPECT_EQ(p.port_mode, 0xFFFFFFFFu);  // QEMU's parallel port has no ECR; the others are not ports
  }
}

// HPET, PM timer and PIT present on QEMU's pc and q35; the qemu CPU models give no CPUID 0x15/0x16 rate.
void expect_timers(const Survey& s) {
  const format::SurveyBlock& b = s.block;
  ASSERT_EQ(b.timer_count, 4u);
  const format::TscMethod methods[] = {format::TscMethod::Hpet, format::TscMethod::PmTimer,
                                       format::TscMethod::Pit, format::TscMethod::Cpuid};
  bool chosen_seen = false;
  for (uint32_t i = 0; i < 4; ++i) {
    const format::SurveyTimer& t = b.timers[i];
    EXPECT_EQ(t.method, static_cast<uint32_t>(methods[i]));
    if (methods[i] == format::TscMethod::Cpuid) {
      EXPECT_EQ(t.status, S(SurveyStatus::Absent));
      continue;
    }
    ASSERT_EQ(t.status, S(SurveyStatus::Usable)) << i;
    EXPECT_GT(t.tsc_hz, 0u);
    const double ppm = (static_cast<double>(t.tsc_hz) - s.header.tsc_hz) / s.header.tsc_hz * 1e6;
    EXPECT_NEAR(t.ppm_vs_chosen, ppm, 1.0) << i;
    if (t.method == s.header.tsc_method) {
      chosen_seen = true;
      EXPECT_EQ(t.tsc_hz, s.header.tsc_hz);
      EXPECT_EQ(t.ppm_vs_chosen, 0);
    }
  }
  EXPECT_TRUE(chosen_seen);
}

void expect_common(const Survey& s, uint32_t window_ms) {
  const format::SurveyBlock& b = s.block;
  EXPECT_EQ(b.hwlat_window_ms, window_ms);
  EXPECT_EQ(b.hwlat_threshold_ns, 1000u);
  uint64_t binned = 0;
  uint32_t top = 0;
  for (uint32_t k = 0; k < format::kSurveyGapBins; ++k) {
    binned += b.gap_histogram[k];
    if (b.gap_histogram[k]) top = k;
  }
  EXPECT_EQ(binned, b.hwlat_gaps);
  if (b.hwlat_gaps) {
    EXPECT_EQ(top, 63 - static_cast<uint32_t>(__builtin_clzll(b.hwlat_max_gap_ticks)));
  }
  EXPECT_EQ(b.smi_window_ms, 0u);  // QEMU's CPU models have no MSR_SMI_COUNT
  EXPECT_EQ(s.header.flags & format::kFlagSmiCount, 0u);
  EXPECT_GT(b.buffer_capacity, 1000000u);  // most of 256 MiB
  EXPECT_EQ(b.usable_memory_bytes, b.buffer_capacity * sizeof(format::EventRecord));
  EXPECT_EQ(s.header.buffer_capacity, b.buffer_capacity);
  EXPECT_EQ(b.keyboard, S(SurveyStatus::Usable));
  for (uint8_t byte : b.reserved) ASSERT_EQ(byte, 0);
}

void expect_disk(const format::SurveyDisk& d, DiskInterface interface, uint32_t port, const char* model,
                 uint64_t sectors, const uint8_t* uuid) {
  const format::DiskInterface wanted = interface == DiskInterface::Ide    ? format::DiskInterface::Ide
                                       : interface == DiskInterface::Ahci ? format::DiskInterface::Ahci
                                                                          : format::DiskInterface::Nvme;
  EXPECT_EQ(d.interface, static_cast<uint32_t>(wanted));
  EXPECT_EQ(d.port, port);
  EXPECT_STREQ(d.model, model);
  EXPECT_EQ(d.sectors, sectors);
  EXPECT_EQ(d.logical_block_size, 512u);
  const uint8_t zero[16] = {};
  EXPECT_EQ(d.status, S(uuid ? SurveyStatus::Usable : SurveyStatus::Refused));
  EXPECT_EQ(std::memcmp(d.disk_uuid, uuid ? uuid : zero, 16), 0);
}

// pc + SeaBIOS + IDE: the parallel port at 0x378, COM1 (the console) and COM2, an unlabelled disk on the
// primary master and the trace disk on the primary slave.
TEST(SurveyBoot, PcIdeListsItsParallelPortSerialPortsTimersAndDisks) {
  ScratchDir dir;
  const std::string other = write_random_image(dir / "other.img", kOtherSectors * 512, 21);
  make_trace_disk(dir / "trace.img");
  DirectOptions o = survey_options("pc", "1",
                                   {AttachedDisk{(dir / "other.img").string(), DiskInterface::Ide, 0},
                                    AttachedDisk{(dir / "trace.img").string(), DiskInterface::Ide, 1}});
  o.qemu_args = {"-serial", "null"};  // COM2 at 0x2f8
  const std::string serial = boot_survey(o, dir / "");
  ASSERT_FALSE(serial.empty());
  EXPECT_NE(serial.find("ETT: RESULT OK events=0 session=1"), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: survey: probe lpt 0x378: usable, read "), std::string::npos) << serial;
  EXPECT_NE(
      serial.find("ETT: survey: disk ide 1: \"QEMU HARDDISK\", 32768 sectors of 512 bytes, ETT trace disk"),
      std::string::npos)
      << serial;
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";

  const Survey s = read_survey(dir / "trace.img");
  expect_probes(s.block, true, true, serial);
  expect_timers(s);
  expect_common(s, 1000);
  ASSERT_EQ(s.block.disk_count, 2u) << serial;
  expect_disk(s.block.disks[0], DiskInterface::Ide, 0, "QEMU HARDDISK", kOtherSectors, nullptr);
  expect_disk(s.block.disks[1], DiskInterface::Ide, 1, "QEMU HARDDISK", kTraceSectors, s.label.disk_uuid);
}

// q35 + OVMF (GRUB's UEFI loader) + AHCI: the trace disk on port 1 next to an unlabelled one on port 0 (the
// CD on port 2 is not a disk); q35's ISA parallel port; only COM1.
TEST(SurveyBoot, Q35UefiAhciListsItsAhciDisks) {
  ScratchDir dir;
  const std::string other = write_random_image(dir / "other.img", kOtherSectors * 512, 22);
  make_trace_disk(dir / "trace.img");
  DirectOptions o;
  o.machine = "q35";
  o.uefi = true;
  o.iso = make_test_iso(dir / "", "mode=survey limit=1 exit=qemu").string();
  o.attached = {AttachedDisk{(dir / "other.img").string(), DiskInterface::Ahci, 0},
                AttachedDisk{(dir / "trace.img").string(), DiskInterface::Ahci, 1}};
  const std::string serial = boot_survey(o, dir / "");
  ASSERT_FALSE(serial.empty());
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";
  const Survey s = read_survey(dir / "trace.img");
  expect_probes(s.block, true, false, serial);
  expect_timers(s);
  expect_common(s, 1000);
  ASSERT_EQ(s.block.disk_count, 2u) << serial;
  expect_disk(s.block.disks[0], DiskInterface::Ahci, 0, "QEMU HARDDISK", kOtherSectors, nullptr);
  expect_disk(s.block.disks[1], DiskInterface::Ahci, 1, "QEMU HARDDISK", kTraceSectors, s.label.disk_uuid);
}

// q35 + SeaBIOS + NVMe, with QEMU's parallel port turned off: no parallel port at all; a PCI serial card
// (QEMU's pci-serial, class 07/00) instead.
TEST(SurveyBoot, Q35NvmeWithoutAParallelPortWithAPciSerialCard) {
  ScratchDir dir;
  make_trace_disk(dir / "trace.img");
  DirectOptions o =
      survey_options("q35", "1", {AttachedDisk{(dir / "trace.img").string(), DiskInterface::Nvme, 0}});
  o.qemu_args = {"-parallel", "none", "-chardev", "null,id=card", "-device", "pci-serial,chardev=card"};
  const std::string serial = boot_survey(o, dir / "");
  ASSERT_FALSE(serial.empty());
  const Survey s = read_survey(dir / "trace.img");
  expect_probes(s.block, false, false, serial, true);
  expect_timers(s);
  expect_common(s, 1000);
  ASSERT_EQ(s.block.disk_count, 1u) << serial;
  expect_disk(s.block.disks[0], DiskInterface::Nvme, 1, "QEMU NVMe Ctrl", kTraceSectors, s.label.disk_uuid);
}

// A survey session reserves survey_session_sectors(): the next boot's session follows it, and the disk's
// sessions still read back with `ett ls`.
TEST(SurveyBoot, ASecondSurveyIsAppendedAfterTheFirst) {
  ScratchDir dir;
  make_trace_disk(dir / "trace.img");
  DirectOptions o =
      survey_options("pc", "0.2", {AttachedDisk{(dir / "trace.img").string(), DiskInterface::Ide, 0}});
  for (int session = 1; session <= 2; ++session) {
    const std::string serial = boot_survey(o, dir / "");
    ASSERT_FALSE(serial.empty());
    EXPECT_NE(serial.find("ETT: RESULT OK events=0 session=" + std::to_string(session)), std::string::npos)
        << serial;
  }
  const std::string bytes = slurp(dir / "trace.img");
  const uint64_t second = format::kFirstSessionLba + format::survey_session_sectors();
  format::SessionHeader header{};
  std::memcpy(&header, bytes.data() + second * format::kSectorSize, sizeof(header));
  EXPECT_EQ(header.crc, crc32c(&header, offsetof(format::SessionHeader, crc)));
  EXPECT_EQ(header.session_number, 2u);
  EXPECT_EQ(header.start_lba, second);
  EXPECT_EQ(header.mode, static_cast<uint32_t>(format::CaptureMode::Survey));
  format::SurveyBlock block{};
  std::memcpy(&block, bytes.data() + (second + 1 + format::kStallTableSectors) * format::kSectorSize,
              sizeof(block));
  EXPECT_EQ(block.crc, crc32c(&block, offsetof(format::SurveyBlock, crc)));
  EXPECT_EQ(block.hwlat_window_ms, 200u);
  const auto ls = run_ett({"ls", (dir / "trace.img").string()});
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
}

// No trace disk: the survey still runs, says so, and is on serial only; the unlabelled disk is not written.
TEST(SurveyBoot, WithoutATraceDiskTheSurveyIsOnSerialOnly) {
  ScratchDir dir;
  const std::string other = write_random_image(dir / "other.img", kOtherSectors * 512, 23);
  DirectOptions o =
      survey_options("pc", "0.5", {AttachedDisk{(dir / "other.img").string(), DiskInterface::Ide, 0}});
  const std::string serial = boot_survey(o, dir / "");
  ASSERT_FALSE(serial.empty());
  EXPECT_NE(
      serial.find("ETT: survey: no trace disk (no ETT trace disk found (1 disks searched on IDE, AHCI and "
                  "NVMe)"),
      std::string::npos)
      << serial;
  EXPECT_NE(serial.find("the survey is on the screen and serial only"), std::string::npos) << serial;
  EXPECT_NE(
      serial.find("ETT: survey: disk ide 0: \"QEMU HARDDISK\", 4096 sectors of 512 bytes, not labelled"),
      std::string::npos)
      << serial;
  EXPECT_NE(serial.find("ETT: survey: hwlat: "), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: RESULT OK events=0 session=0"), std::string::npos) << serial;
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";
}

}  // namespace
}  // namespace ett::test
