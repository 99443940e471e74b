// trace_disk_test.cpp: boot tests of the trace disk: found on any IDE position next to an unlabelled disk
// that stays byte-for-byte identical, a dump cut off by killing QEMU (a full disk and a missing label, on
// each interface: trace_disk_interface_test.cpp).
#include <fcntl.h>
#include <signal.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "ett/trace_format.h"
#include "qemu_direct.h"

namespace ett::test {
namespace {

constexpr double kBootSeconds = 30;
const int kSuccess = vprobe::qemu_status_for(vprobe::kExitSuccess);

struct PositionCase {
  int index;
  const char* name;
  friend void PrintTo(const PositionCase& c, std::ostream* out) { *out << "ide index " << c.index; }
};

class TraceDiskPosition : public ::testing::TestWithParam<PositionCase> {};

// The kernel searches both channels, master and slave; the unlabelled disk at index 0 (primary master,
// searched first) is never written.
TEST_P(TraceDiskPosition, IsFoundAndTheUnlabelledDiskIsLeftIdentical) {
  ScratchDir dir;
  const std::string other = write_random_image(dir / "other.img", 2 << 20, 7);
  make_trace_disk(dir / "trace.img");
  QemuMachine qemu(
      {.append = "exit=qemu",
       .disks = {{0, (dir / "other.img").string()}, {GetParam().index, (dir / "trace.img").string()}}},
      dir / "");
  ASSERT_EQ(capture_and_stop(qemu, 5), kSuccess) << qemu.serial();
  EXPECT_NE(qemu.serial().find(std::string("ide ") + GetParam().name + ": disk"), std::string::npos)
      << qemu.serial();
  EXPECT_NE(qemu.serial().find("ide primary master: disk \"QEMU HARDDISK\""), std::string::npos);
  EXPECT_NE(qemu.serial().find("not an ETT trace disk (run `ett mkdisk`); not touched"), std::string::npos);
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";
  auto ls = run_ett({"ls", (dir / "trace.img").string(), "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
  EXPECT_EQ(sessions[0].at("events").get<int>(), 5) << ls.output;
  EXPECT_EQ(sessions[0].at("status"), "ok") << ls.output;
}

INSTANTIATE_TEST_SUITE_P(Positions, TraceDiskPosition,
                         ::testing::Values(PositionCase{1, "primary slave"},
                                           PositionCase{2, "secondary master"},
                                           PositionCase{3, "secondary slave"}),
                         [](const auto& info) {
                           return std::string("Index") + std::to_string(info.param.index);
                         });

// The ISO boot puts the CD-ROM at index 2 (secondary master, ATAPI): the search skips it and finds the trace
// disk at index 3.
TEST(TraceDisk, IsoBootFindsTheDiskNextToTheCdrom) {
  ScratchDir dir;
  const std::string other = write_random_image(dir / "other.img", 1 << 20, 8);
  make_trace_disk(dir / "trace.img");
  QemuMachine qemu({.iso = std::string(ETT_BIN_DIR) + "/ett.iso",
                    .disks = {{0, (dir / "other.img").string()}, {3, (dir / "trace.img").string()}}},
                   dir / "");
  ASSERT_EQ(capture_and_stop(qemu, 3), kSuccess) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ide secondary master: ata: not an ATA disk"), std::string::npos)
      << qemu.serial();
  EXPECT_TRUE(slurp(dir / "other.img") == other);
  auto ls = run_ett({"ls", (dir / "trace.img").string(), "--json"});
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
  EXPECT_EQ(sessions[0].at("events").get<int>(), 3) << ls.output;
}

// Reads sector `lba` of an image into `out`.
bool read_sector(const fs::path& image, uint64_t lba, void* out) {
  const int fd = ::open(image.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::pread(fd, out, format::kSectorSize, static_cast<off_t>(lba * format::kSectorSize)) ==
                  static_cast<ssize_t>(format::kSectorSize);
  ::close(fd);
  return ok;
}

// Power loss during a dump: QEMU is killed (SIGKILL) while the kernel writes the chunks of a large session.
// The earlier session stays intact, the cut one is listed as partial with what was lost, and its complete
// chunks are extracted. The disk is throttled (a slow disk) so that the cut lands between two chunks
// however loaded the host is; layout 8x1 and all eight lines flipping give eight events per change.
TEST(TraceDisk, DumpCutOffByKillingQemuLeavesAPartialSession) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  make_trace_disk(trace, "64M");
  {
    QemuMachine qemu({.append = "exit=qemu", .disks = {{0, trace.string()}}}, dir / "");
    ASSERT_EQ(capture_and_stop(qemu, 6), kSuccess) << qemu.serial();
  }
  const std::string first_session = slurp(trace).substr(0, (8 + 1 + 8 + 64) * 512);

  QemuMachine qemu({.append = "exit=qemu layout=8x1",
                    .disks = {{0, trace.string()}},
                    .drive_options = ",throttling.bps-write=262144"},
                   dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, kBootSeconds)) << qemu.serial();
  // Flips paced on the kernel's heartbeat, so that each one is seen (free-running flips on a loaded host were
  // seen 78 times in 2.5 s: too few for two chunks): 1,200 flips, 9,600 events, five chunks.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (uint32_t i = 0; i < 1200 && std::chrono::steady_clock::now() < until; ++i) {
    qemu.set_lines(i & 1 ? 0xFF : 0x00);
    const uint32_t beat = qemu.heartbeat();
    qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 5);
  }
  qemu.request_stop();
  ASSERT_TRUE(qemu.wait_state(KernelState::Dumping, 30)) << qemu.serial();
  const uint64_t events = std::atomic_ref<uint64_t>(qemu.control()->event_count).load();
  ASSERT_GT(events, format::kRecordsPerChunk) << "too few events for a dump of two chunks or more";

  // Cut once chunk 1 has begun (so chunk 0 is whole on the image), then check that the header still says
  // Writing: the kernel had not finished.
  const uint64_t header_lba = 8 + 1 + format::kStallTableSectors + 64;
  auto chunk_begun = [&](uint64_t index) {
    format::ChunkHeader chunk{};
    uint8_t sector[512];
    if (!read_sector(trace, header_lba + 1 + format::kStallTableSectors + index * 64, sector)) return false;
    std::memcpy(&chunk, sector, sizeof(chunk));
    return std::memcmp(chunk.magic, format::kChunkMagic, 4) == 0 && chunk.session_number == 2;
  };
  ASSERT_TRUE(qemu.wait_until([&] { return chunk_begun(1); }, 30)) << qemu.serial();
  ::kill(qemu.process().pid(), SIGKILL);
  qemu.process().kill_and_wait();
  format::SessionHeader header{};
  ASSERT_TRUE(read_sector(trace, header_lba, &header));
  ASSERT_EQ(header.status, static_cast<uint32_t>(format::SessionStatus::Writing))
      << "the dump finished before it could be cut";

  EXPECT_TRUE(slurp(trace).substr(0, first_session.size()) == first_session) << "session 1 was changed";
  auto ls = run_ett({"ls", trace.string()});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("ok"), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find("partial: "), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find(" of " + std::to_string(events) + " events recovered"), std::string::npos)
      << ls.output;
  auto extract = run_ett({"extract", trace.string(), "--session", "2", "-o", (dir / "cut.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  EXPECT_NE(extract.output.find("session 2 is partial"), std::string::npos) << extract.output;
  const CsvTable cut = read_csv(dir / "cut.csv");
  EXPECT_GE(cut.rows.size(), format::kRecordsPerChunk);
  EXPECT_LT(cut.rows.size(), events);
  EXPECT_EQ(cut.rows.size() % format::kRecordsPerChunk, 0u) << "only whole chunks are recovered";
}

// dump=serial: the session streamed over COM1 in the same format; `ett ls` and `ett extract` read the saved
// serial log and give back exactly the events that were sent.
TEST(TraceDisk, SerialDumpIsDecodedFromTheSavedSerialLog) {
  ScratchDir dir;
  {
    std::ofstream scenario(dir / "s.scn");
    for (int i = 0; i < 40; ++i) scenario << i * 300 << ' ' << 1 + i % 2 << ' ' << 1 + (i / 2) % 15 << '\n';
  }
  auto run = run_ett({"qemu", "run", "--disk", (dir / "unused.img").string(), "--scenario",
                      (dir / "s.scn").string(), "--append", "dump=serial", "--serial-log",
                      (dir / "serial.log").string(), "--sent-log", (dir / "sent.csv").string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto ls = run_ett({"ls", (dir / "serial.log").string()});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find(" ok"), std::string::npos) << ls.output;
  auto extract = run_ett({"extract", (dir / "serial.log").string(), "-o", (dir / "events.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable events = read_csv(dir / "events.csv"), sent = read_csv(dir / "sent.csv");
  ASSERT_EQ(events.rows.size(), 40u);
  ASSERT_EQ(sent.rows.size(), 40u);
  for (size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(events.number(i, "probe"), sent.number(i, "probe")) << "event " << i;
    EXPECT_EQ(events.number(i, "code"), sent.number(i, "code")) << "event " << i;
  }
}

}  // namespace
}  // namespace ett::test
