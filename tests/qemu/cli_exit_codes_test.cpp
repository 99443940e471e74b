// cli_exit_codes_test.cpp: `ett ls` and `ett extract` on real images through the real binary: each class of
// bad trace disk gets its documented exit code (docs/guide/ett-command.md) and a message naming the
// problem, and `ls --json` carries the session header.
#include <cstring>

#include "ett/crc32c.h"
#include "ett/trace_format.h"
#include "qemu_test_support.h"

namespace ett::test {
namespace {

namespace f = ett::format;

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A trace disk with one complete session of `events` synthetic events.
std::string synth_disk(const fs::path& path, int events) {
  auto made = run_ett({"synth", path.string(), "--events", std::to_string(events), "--seed", "3"});
  EXPECT_EQ(made.exit_code, 0) << made.output;
  return slurp(path);
}

struct Outcome {
  CommandResult ls;
  CommandResult extract;
};

Outcome ls_and_extract(const ScratchDir& dir, const fs::path& image, std::vector<std::string> extra = {}) {
  std::vector<std::string> extract = {"extract", image.string(), "-o", (dir / "out.csv").string(), "--force"};
  extract.insert(extract.end(), extra.begin(), extra.end());
  return {run_ett({"ls", image.string()}), run_ett(extract)};
}

TEST(CliExitCodes, NotATraceDisk) {
  ScratchDir dir;
  write_file(dir / "random.img", std::string(1 << 20, '\x5a'));
  auto outcome = ls_and_extract(dir, dir / "random.img");
  EXPECT_EQ(outcome.ls.exit_code, 10) << outcome.ls.output;
  EXPECT_EQ(outcome.extract.exit_code, 10) << outcome.extract.output;
  EXPECT_NE(outcome.extract.output.find("not a trace disk"), std::string::npos) << outcome.extract.output;
}

TEST(CliExitCodes, UnknownFormatVersion) {
  ScratchDir dir;
  std::string disk = synth_disk(dir / "t.img", 100);
  f::DiskLabel label;
  std::memcpy(&label, disk.data(), sizeof label);
  label.format_version = 99;
  label.crc = crc32c(&label, offsetof(f::DiskLabel, crc));  // a valid label of a version we do not know
  std::memcpy(disk.data(), &label, sizeof label);
  write_file(dir / "t.img", disk);
  auto outcome = ls_and_extract(dir, dir / "t.img");
  EXPECT_EQ(outcome.ls.exit_code, 11) << outcome.ls.output;
  EXPECT_EQ(outcome.extract.exit_code, 11) << outcome.extract.output;
  EXPECT_NE(outcome.extract.output.find("99"), std::string::npos) << outcome.extract.output;
}

TEST(CliExitCodes, BadChunkCrc) {
  ScratchDir dir;
  std::string disk = synth_disk(dir / "t.img", 100);
  // First chunk of session 1: after its header and stall table; flip a byte inside the records.
  const size_t chunk = (f::kFirstSessionLba + 1 + f::kStallTableSectors) * f::kSectorSize;
  disk[chunk + sizeof(f::ChunkHeader) + 40] ^= 0x01;
  write_file(dir / "t.img", disk);
  auto outcome = ls_and_extract(dir, dir / "t.img");
  EXPECT_EQ(outcome.ls.exit_code, 12) << outcome.ls.output;  // listed, then the worst status
  EXPECT_EQ(outcome.extract.exit_code, 12) << outcome.extract.output;
  EXPECT_NE(outcome.extract.output.find("chunk 0"), std::string::npos) << outcome.extract.output;
}

TEST(CliExitCodes, TruncatedImage) {
  ScratchDir dir;
  std::string disk = synth_disk(dir / "t.img", 100);
  // Cut inside the first chunk of the only session.
  disk.resize((f::kFirstSessionLba + 1 + f::kStallTableSectors) * f::kSectorSize + 1000);
  write_file(dir / "t.img", disk);
  auto outcome = ls_and_extract(dir, dir / "t.img");
  EXPECT_EQ(outcome.ls.exit_code, 13) << outcome.ls.output;
  EXPECT_EQ(outcome.extract.exit_code, 13) << outcome.extract.output;
  EXPECT_NE(outcome.extract.output.find("truncated"), std::string::npos) << outcome.extract.output;
}

TEST(CliExitCodes, EmptyDiskListsNothingAndExtractsNothing) {
  ScratchDir dir;
  auto made = run_ett({"mkdisk", (dir / "t.img").string(), "--size", "1M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto outcome = ls_and_extract(dir, dir / "t.img");
  EXPECT_EQ(outcome.ls.exit_code, 0) << outcome.ls.output;
  EXPECT_EQ(outcome.extract.exit_code, 14) << outcome.extract.output;
}

TEST(CliExitCodes, NoSuchSession) {
  ScratchDir dir;
  synth_disk(dir / "t.img", 100);
  auto outcome = ls_and_extract(dir, dir / "t.img", {"--session", "9"});
  EXPECT_EQ(outcome.ls.exit_code, 0) << outcome.ls.output;
  EXPECT_EQ(outcome.extract.exit_code, 15) << outcome.extract.output;
}

// ls --json holds every session-header field under the database's column names, with the header's values.
TEST(CliLs, JsonHoldsTheSessionHeader) {
  ScratchDir dir;
  const std::string disk = synth_disk(dir / "t.img", 100);
  f::SessionHeader header;
  std::memcpy(&header, disk.data() + f::kFirstSessionLba * f::kSectorSize, sizeof header);
  auto ls = run_ett({"ls", (dir / "t.img").string(), "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  auto has = [&](const std::string& key, const std::string& value) {
    EXPECT_NE(ls.output.find("\"" + key + "\":" + value), std::string::npos) << key << " in " << ls.output;
  };
  has("event_count", "100");
  has("tsc_hz", std::to_string(header.tsc_hz));
  has("capture_start_tsc", std::to_string(header.capture_start_tsc));
  has("buffer_capacity", std::to_string(header.buffer_capacity));
  has("stop_reason", "\"" + std::string(f::stop_reason_name(header.stop_reason)) + "\"");
  has("status", "\"ok\"");
  has("layout", "\"2x4\"");
  for (const char* key :
       {"disk_uuid", "tsc_method", "initial_lines", "filter_mask", "cpu_brand", "cmdline", "loop_iterations",
        "smi_count", "stall_count", "longest_stall_ns", "longest_check_ns"})
    EXPECT_NE(ls.output.find(std::string("\"") + key + "\":"), std::string::npos) << key;
}

}  // namespace
}  // namespace ett::test
