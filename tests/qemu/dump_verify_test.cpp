// dump_verify_test.cpp: boot tests of what the dump checks on an NVMe trace disk: namespace formats the
// driver does not handle are refused by name (metadata, 8192-byte blocks), a 4Kn namespace (4096-byte
// blocks) takes a dump written in whole blocks that `ett ls`/`extract` read back from the image, and a
// read-back that fails (a blkdebug rule on a chunk's sector) is no RESULT OK: the capture stays in RAM and S
// saves it again.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "qemu_direct.h"

namespace ett::test {
namespace {

constexpr double kBootSeconds = 30;
const int kSuccess = vprobe::qemu_status_for(vprobe::kExitSuccess);
const int kFailure = vprobe::qemu_status_for(vprobe::kExitFailure);

// One NVMe controller whose namespace 1 is `image`, with nvme-ns `options` (e.g. ",ms=8,mset=1").
DirectOptions nvme_options(const std::string& file, const std::string& ns_options,
                           const std::string& append) {
  DirectOptions o;
  o.machine = "q35";
  o.append = append;
  o.qemu_args = {"-drive",  "file=" + file + ",format=raw,if=none,id=trace",
                 "-device", "nvme,id=nvme0,serial=ettverify",
                 "-device", "nvme-ns,drive=trace,bus=nvme0,nsid=1" + ns_options};
  return o;
}

struct FormatCase {
  const char* name;
  const char* ns_options;
  const char* refusal;
  friend void PrintTo(const FormatCase& c, std::ostream* out) { *out << c.name; }
};

class NvmeFormat : public ::testing::TestWithParam<FormatCase> {};

TEST_P(NvmeFormat, IsRefusedByNameAndNothingIsWritten) {
  ScratchDir dir;
  const std::string before = make_trace_disk(dir / "trace.img");
  QemuMachine qemu(nvme_options((dir / "trace.img").string(), GetParam().ns_options, "exit=qemu"), dir / "");
  auto exit = qemu.wait_exit(kBootSeconds);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, kFailure) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find(std::string("namespace 1: nvme: ") + GetParam().refusal + "; skipped"),
            std::string::npos)
      << serial;
  EXPECT_NE(
      serial.find("RESULT FAILED no ETT trace disk found (0 disks searched on IDE, AHCI and NVMe; NVMe "
                  "namespaces passed over for their format: 1, see above); `ett mkdisk` does not change a "
                  "namespace's format"),
      std::string::npos)
      << serial;
  EXPECT_EQ(serial.find("RESULT OK"), std::string::npos) << serial;
  EXPECT_TRUE(slurp(dir / "trace.img") == before) << "the refused namespace was written";
}

const FormatCase kFormats[] = {
    {"ExtendedMetadata", ",ms=8,mset=1",
     "the namespace's format has 8 bytes of metadata per block (extended LBA); a trace disk needs a format "
     "without metadata"},
    {"SeparateMetadata", ",ms=16",
     "the namespace's format has 16 bytes of metadata per block (separate buffer); a trace disk needs a "
     "format "
     "without metadata"},
    {"EightKiBBlocks", ",logical_block_size=8192,physical_block_size=8192",
     "the namespace has 8192-byte blocks; a trace disk needs 512-, 1024-, 2048- or 4096-byte blocks"},
};

INSTANTIATE_TEST_SUITE_P(Formats, NvmeFormat, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.name); });

constexpr const char* k4Kn = ",logical_block_size=4096,physical_block_size=4096";

// A 4Kn namespace labelled by `ett mkdisk --block-size 4096`: session 1 at LBA 15 (the last sector of block
// 1), its chunks from LBA 24 (block 3), 16 + 64 sectors reserved (the next session would be at LBA 95, again
// the last sector of a block); the image reads back as the 5 events.
TEST(DumpVerify, AFourKnNamespaceTakesWholeBlockDumps) {
  ScratchDir dir;
  auto made = run_ett({"mkdisk", (dir / "trace.img").string(), "--size", "16M", "--block-size", "4096"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_NE(made.output.find("first session at LBA 15 (larger blocks)"), std::string::npos) << made.output;
  DirectOptions o = nvme_options((dir / "trace.img").string(), k4Kn, "auto=1");
  o.monitor = true;
  QemuMachine qemu(o, dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, kBootSeconds)) << qemu.serial();
  play_changes(qemu, 5);
  qemu.request_stop();
  ASSERT_TRUE(qemu.wait_serial("ETT: RESULT OK events=5 session=1", kBootSeconds)) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(
      serial.find("namespace 1: disk \"QEMU NVMe Ctrl\", 32768 sectors, 4096-byte blocks: ETT trace disk"),
      std::string::npos)
      << serial;
  EXPECT_NE(serial.find("ETT: dump session 1 at LBA 15: 5 events in 1 chunks"), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: dump verified: the header, the stall table and 1 chunk read back as written"),
            std::string::npos)
      << serial;
  EXPECT_EQ(serial.find("FAILED"), std::string::npos) << serial;
  (void)qemu.process().kill_and_wait();

  const std::string image = slurp(dir / "trace.img");
  ASSERT_EQ(image.size(), 16u << 20);
  // Block 1 ends with the header; nothing else of it was written (zeros, never patched).
  for (const uint64_t header : {15u}) {
    const uint64_t block = header / 8 * 8;
    EXPECT_TRUE(std::all_of(image.begin() + block * 512, image.begin() + header * 512, [](char c) {
      return c == 0;
    })) << header;
    EXPECT_EQ(image.compare(header * 512, 8, "ETTSESS1"), 0) << header;
  }
  auto ls = run_ett({"ls", (dir / "trace.img").string(), "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("\"start_lba\":15,\"reserved_sectors\":80"), std::string::npos) << ls.output;
  for (const char* session : {"1"}) {
    auto extracted = run_ett({"extract", (dir / "trace.img").string(), "--session", session});
    ASSERT_EQ(extracted.exit_code, 0) << extracted.output;
    int rows = 0;
    std::istringstream lines(extracted.output);
    for (std::string row; std::getline(lines, row);)
      if (!row.empty() && std::isdigit(static_cast<unsigned char>(row[0]))) ++rows;
    EXPECT_EQ(rows, 5) << extracted.output;
  }
}

// A label made for 512-byte blocks (first session at LBA 8, the first sector of a 4 KiB block) on a 4Kn
// namespace: refused before anything is written, naming the fix.
TEST(DumpVerify, AFiveHundredTwelveByteLabelOnAFourKnNamespaceIsRefused) {
  ScratchDir dir;
  const std::string before = make_trace_disk(dir / "trace.img");
  QemuMachine qemu(nvme_options((dir / "trace.img").string(), k4Kn, "exit=qemu"), dir / "");
  auto exit = qemu.wait_exit(kBootSeconds);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, kFailure) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(
      serial.find("RESULT FAILED the next session would start at LBA 8, which is not the last 512-byte "
                  "sector of a 4096-byte block (the label was made for 512-byte blocks): run `ett mkdisk` "
                  "on this disk, or with --block-size 4096"),
      std::string::npos)
      << serial;
  EXPECT_TRUE(slurp(dir / "trace.img") == before) << "nothing was written";
}

// The first read of chunk 0 fails (blkdebug: EIO once on a sector only the read-back reads). The kernel
// says so, prints RESULT FAILED and no RESULT OK, and keeps the capture: S in the analysis stage writes the
// session again, it reads back, and `ett extract` finds the events.
TEST(DumpVerify, AReadBackThatFailsKeepsTheCaptureAndSavingAgainWorks) {
  ScratchDir dir;
  make_trace_disk(dir / "trace.img");
  // A fresh disk: session 1's header at LBA 8, its stall table at 9-16, chunk 0 from LBA 17. The rule is
  // armed by the first read and then fails the first read (only: iotype) that covers sector 30.
  std::ofstream(dir / "blkdebug.conf")
      << "[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"5\"\nsector = \"30\"\n"
         "once = \"on\"\n";
  DirectOptions o = nvme_options(
      "blkdebug:" + (dir / "blkdebug.conf").string() + ":" + (dir / "trace.img").string(), "", "auto=1");
  o.monitor = true;
  QemuMachine qemu(o, dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, kBootSeconds)) << qemu.serial();
  play_changes(qemu, 5);
  qemu.request_stop();
  ASSERT_TRUE(qemu.wait_state(KernelState::Failed, kBootSeconds)) << qemu.serial();
  std::string serial = qemu.serial();
  EXPECT_NE(
      serial.find("ETT: dump FAILED: the dump could not be read back: chunk 0 (LBA 17): nvme: READ failed"),
      std::string::npos)
      << serial;
  EXPECT_NE(serial.find("the session is left unfinished and the events stay in RAM: S saves them again"),
            std::string::npos)
      << serial;
  EXPECT_NE(serial.find("ETT: RESULT FAILED the dump could not be read back"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("RESULT OK"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("dump verified"), std::string::npos) << serial;

  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage:", kBootSeconds)) << qemu.serial();
  const size_t mark = qemu.serial().size();
  qemu.send_key("s");
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: S: saved as session 1", kBootSeconds, mark))
      << qemu.serial();
  serial = qemu.serial();
  EXPECT_NE(
      serial.find("ETT: dump verified: the header, the stall table and 1 chunk read back as written", mark),
      std::string::npos)
      << serial;
  EXPECT_EQ(qemu.state(), KernelState::Done);
  (void)qemu.process().kill_and_wait();
  expect_extracted(dir / "trace.img", 5);
}

}  // namespace
}  // namespace ett::test
