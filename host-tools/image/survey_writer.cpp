// survey_writer.cpp: synthetic survey sessions.
#include "image/survey_writer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "image/disk_maker.h"
#include "image/session_writer.h"

namespace ett::host {

namespace f = ett::format;

namespace {

void copy_text(char* to, size_t size, const char* text) {
  std::strncpy(to, text, size - 1);
}

f::SurveyProbe probe(f::ProbeSource source, uint32_t address, f::SurveyStatus status, uint32_t read_median,
                     uint32_t step_max, const char* detail) {
  f::SurveyProbe p{};
  p.source = static_cast<uint32_t>(source);
  p.address = address;
  p.status = static_cast<uint32_t>(status);
  p.read_ticks_min = read_median ? read_median - read_median / 10 : 0;
  p.read_ticks_median = read_median;
  p.read_ticks_max = read_median * 2;
  p.step_ticks_max = step_max;
  p.reads = read_median ? 10000 : 0;
  p.port_mode = 0xFFFFFFFFu;
  copy_text(p.detail, sizeof(p.detail), detail);
  return p;
}

}  // namespace

bool survey_example_from_name(const std::string& name, SurveyExample& example) {
  if (name == "fit")
    example = SurveyExample::Fit;
  else if (name == "smis")
    example = SurveyExample::Smis;
  else if (name == "no-probe")
    example = SurveyExample::NoProbe;
  else
    return false;
  return true;
}

SurveySpec survey_example(SurveyExample example) {
  SurveySpec spec;
  f::SurveyBlock& b = spec.block;
  spec.flags = f::kFlagInvariantTsc | f::kFlagSmiCount;
  b.timer_count = 3;
  b.timers[0] = {static_cast<uint32_t>(f::TscMethod::Pit), static_cast<uint32_t>(f::SurveyStatus::Usable),
                 3'000'000'000, 0, 0};
  b.timers[1] = {static_cast<uint32_t>(f::TscMethod::PmTimer), static_cast<uint32_t>(f::SurveyStatus::Usable),
                 3'000'009'000, 3, 0};
  b.timers[2] = {static_cast<uint32_t>(f::TscMethod::Hpet), static_cast<uint32_t>(f::SurveyStatus::Absent), 0,
                 0, 0};
  b.usable_memory_bytes = 2ull << 30;
  b.buffer_capacity = b.usable_memory_bytes / sizeof(f::EventRecord);
  b.keyboard = static_cast<uint32_t>(f::SurveyStatus::Usable);
  b.smi_window_ms = 10'000;
  b.hwlat_window_ms = 10'000;
  b.hwlat_threshold_ns = 10'000;
  // lpt: one read 1.0 us (3000 ticks), the longest loop step 1.2 us (3600 ticks).
  b.probe_count = 2;
  b.probes[0] = probe(f::ProbeSource::Lpt, 0x378, f::SurveyStatus::Usable, 3000, 3600, "bidirectional input");
  b.probes[0].port_mode = 1;
  b.probes[1] = probe(f::ProbeSource::Uart, 0x2f8, f::SurveyStatus::Failed, 0, 0, "loopback read back 0x0");
  b.disk_count = 2;
  b.disks[0] = {static_cast<uint32_t>(f::DiskInterface::Ahci),
                static_cast<uint32_t>(f::SurveyStatus::Usable),
                131072,
                512,
                0,
                {},
                {}};
  copy_text(b.disks[0].model, sizeof(b.disks[0].model), "QEMU HARDDISK");
  b.disks[1] = {static_cast<uint32_t>(f::DiskInterface::Nvme),
                static_cast<uint32_t>(f::SurveyStatus::Refused),
                1953525168,
                512,
                1,
                {},
                {}};
  copy_text(b.disks[1].model, sizeof(b.disks[1].model), "Samsung SSD 970 EVO 1TB");
  if (example == SurveyExample::Smis) {
    spec.smi_count = 3;
    b.hwlat_gaps = 3;
    b.hwlat_max_gap_ticks = 360'000;  // 120 us
    b.gap_histogram[17] = 1;          // [131072, 262144) ticks
    b.gap_histogram[18] = 2;          // [262144, 524288) ticks
  } else if (example == SurveyExample::NoProbe) {
    spec.flags = f::kFlagInvariantTsc;
    b.probe_count = 0;
    b.probes[0] = b.probes[1] = f::SurveyProbe{};
  }
  return spec;
}

Expected<SurveyWritten> write_survey_session(const std::string& path, const SurveySpec& spec) {
  SurveyWritten written;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return make_error(ErrorKind::Io, errno_message(path, errno));
    MakeDiskOptions disk;
    disk.path = path;
    disk.size_bytes = 1ull << 20;
    disk.size_given = true;
    disk.name = "ett synth";
    auto made = make_disk(disk);
    if (!made) return made.failure();
    written.created_disk = true;
  }
  auto writer = SessionWriter::open(path);
  if (!writer) return writer.failure();
  f::SurveyBlock block = spec.block;
  std::memcpy(block.magic, f::kSurveyMagic, sizeof(block.magic));
  if (block.version == 0) block.version = f::kSurveyVersion;
  SessionSpec session;
  session.survey = &block;
  session.tsc_hz = spec.tsc_hz;
  session.flags = spec.flags;
  session.smi_count = spec.smi_count;
  session.stop_reason = f::StopReason::None;
  session.cpu_vendor = spec.cpu_vendor;
  session.cpu_brand = spec.cpu_brand;
  session.cmdline = "mode=survey (ett synth)";
  session.captured_at_unix = static_cast<uint64_t>(std::time(nullptr));
  auto lba = writer->append(session);
  if (!lba) return lba.failure();
  written.session = writer->last_session();
  written.block_lba = *lba + f::sectors_before_chunks(f::kSessionFormatVersion);
  return written;
}

}  // namespace ett::host
