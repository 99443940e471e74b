// survey_test.cpp: survey sessions written by the survey writer, read back by `ett survey` (the library and
// the real binary): the verdicts of a fit PC, one with SMIs, one without a probe, and every damaged block
// refused with its exit status.
#include "survey/survey.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/fast_crc32c.h"
#include "image/survey_writer.h"
#include "image/trace_image.h"
#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett {
namespace {

namespace f = ett::format;

struct SurveyDisk {
  test::TempDir dir;
  std::string path = dir.file("survey.img");
  uint64_t block_lba = 0;

  explicit SurveyDisk(const host::SurveySpec& spec) {
    auto written = host::write_survey_session(path, spec);
    if (!written) throw std::runtime_error(written.error().message);
    block_lba = written->block_lba;
  }
  f::SurveyBlock block() const {
    f::SurveyBlock b{};
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(block_lba * f::kSectorSize));
    in.read(reinterpret_cast<char*>(&b), sizeof(b));
    return b;
  }
  // Writes `b` back over the block, its CRC made again unless `keep_crc`.
  void put(f::SurveyBlock b, bool keep_crc = false) {
    if (!keep_crc) b.crc = host::fast_crc32c(&b, offsetof(f::SurveyBlock, crc));
    std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(static_cast<std::streamoff>(block_lba * f::kSectorSize));
    out.write(reinterpret_cast<const char*>(&b), sizeof(b));
  }
  test::EttRun ett(const std::vector<std::string>& args) const {
    return test::run_ett_in(dir.file(""), args);
  }
};

host::Expected<host::Survey> read(const std::string& path, std::optional<uint32_t> session = std::nullopt) {
  auto image = host::TraceImage::open(path);
  if (!image) return image.failure();
  return host::read_survey(*image, session);
}

TEST(SurveyTest, FitMachineGetsAFitVerdictWithPiFromTheLongestStep) {
  const SurveyDisk disk(host::survey_example(host::SurveyExample::Fit));
  auto survey = read(disk.path);
  ASSERT_TRUE(survey) << survey.error().message;
  const host::SurveyVerdict verdict = host::judge(*survey);
  ASSERT_EQ(verdict.probes.size(), 2u);
  // lpt: step_ticks_max 3600 at 3 GHz = 1200 ns, plus one tick (0.333 ns).
  EXPECT_TRUE(verdict.probes[0].fit) << verdict.probes[0].text;
  ASSERT_TRUE(verdict.probes[0].pi_ns);
  EXPECT_NEAR(*verdict.probes[0].pi_ns, 1200.0 + 1.0 / 3.0, 1e-6);
  EXPECT_EQ(verdict.probes[0].text.rfind("fit to capture on lpt:0x378: pi 1.2 us, 0 SMIs in 10 s", 0), 0u)
      << verdict.probes[0].text;
  EXPECT_FALSE(verdict.probes[1].fit);
  EXPECT_EQ(verdict.probes[1].text, "not fit on uart:0x2f8: input check failed (loopback read back 0x0)");
  EXPECT_TRUE(verdict.fit);
  EXPECT_EQ(verdict.text, "fit: capture on lpt:0x378 (pi 1.2 us)");
}

TEST(SurveyTest, SmisMakeTheBoundNotHold) {
  const SurveyDisk disk(host::survey_example(host::SurveyExample::Smis));
  auto survey = read(disk.path);
  ASSERT_TRUE(survey) << survey.error().message;
  const host::SurveyVerdict verdict = host::judge(*survey);
  EXPECT_FALSE(verdict.fit);
  EXPECT_FALSE(verdict.probes[0].fit);
  EXPECT_NE(verdict.probes[0].text.find("3 SMIs in 10 s"), std::string::npos) << verdict.probes[0].text;
  EXPECT_EQ(verdict.text.rfind("not fit: 3 SMIs", 0), 0u) << verdict.text;
}

TEST(SurveyTest, HwlatGapLongerThanPiMakesTheBoundNotHoldWithoutSmiCounter) {
  host::SurveySpec spec = host::survey_example(host::SurveyExample::Fit);
  spec.flags = f::kFlagInvariantTsc;  // SMIs not countable: only the hwlat run can see them
  spec.block.hwlat_gaps = 1;
  spec.block.hwlat_max_gap_ticks = 3601;  // one tick over the longest step: longer than pi, barely
  const SurveyDisk disk(spec);
  auto survey = read(disk.path);
  ASSERT_TRUE(survey) << survey.error().message;
  host::SurveyVerdict verdict = host::judge(*survey);
  EXPECT_FALSE(verdict.probes[0].fit) << verdict.probes[0].text;
  // A gap no longer than pi leaves the bound standing.
  survey->block.hwlat_max_gap_ticks = 3600;
  verdict = host::judge(*survey);
  EXPECT_TRUE(verdict.probes[0].fit) << verdict.probes[0].text;
  EXPECT_NE(verdict.probes[0].text.find("SMIs not countable on this CPU"), std::string::npos);
}

TEST(SurveyTest, NonInvariantTscIsNotFit) {
  host::SurveySpec spec = host::survey_example(host::SurveyExample::Fit);
  spec.flags = f::kFlagSmiCount;
  const SurveyDisk disk(spec);
  auto survey = read(disk.path);
  ASSERT_TRUE(survey);
  EXPECT_FALSE(host::judge(*survey).fit);
  EXPECT_EQ(host::judge(*survey).text, "not fit: the TSC is not invariant");
}

TEST(SurveyTest, MachineWithoutAProbeIsNotFit) {
  const SurveyDisk disk(host::survey_example(host::SurveyExample::NoProbe));
  auto survey = read(disk.path);
  ASSERT_TRUE(survey);
  const host::SurveyVerdict verdict = host::judge(*survey);
  EXPECT_TRUE(verdict.probes.empty());
  EXPECT_FALSE(verdict.fit);
  EXPECT_EQ(verdict.text.rfind("not fit: no probe candidate", 0), 0u) << verdict.text;
  const auto run = disk.ett({"survey", "survey.img"});
  EXPECT_EQ(run.status, host::kExitOk) << run.err;
  EXPECT_NE(run.out.find("smis:      not countable on this CPU"), std::string::npos) << run.out;
}

TEST(SurveyTest, JsonCarriesTheSameVerdictsAndFigures) {
  const SurveyDisk disk(host::survey_example(host::SurveyExample::Fit));
  const auto run = disk.ett({"survey", "survey.img", "--format", "json"});
  ASSERT_EQ(run.status, host::kExitOk) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["fit"], true);
  EXPECT_EQ(json["verdict"], "fit: capture on lpt:0x378 (pi 1.2 us)");
  EXPECT_EQ(json["tsc"]["invariant"], true);
  EXPECT_EQ(json["smi"]["count"], 0);
  EXPECT_EQ(json["timer_agreement_ppm"], 3.0);
  ASSERT_EQ(json["probes"].size(), 2u);
  EXPECT_NEAR(json["probes"][0]["pi_ns"].get<double>(), 1200.0 + 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(json["probes"][0]["read_ns"]["median"].get<double>(), 1000.0, 1e-6);
  EXPECT_TRUE(json["probes"][1]["pi_ns"].is_null());
  ASSERT_EQ(json["disks"].size(), 2u);
  EXPECT_EQ(json["disks"][0]["labelled"], true);
  EXPECT_EQ(json["disks"][1]["labelled"], false);
  EXPECT_EQ(json["disks"][1]["model"], "Samsung SSD 970 EVO 1TB");
  EXPECT_EQ(json["memory"]["events"], (2ull << 30) / 16);
  // The text says the same.
  const auto text = disk.ett({"survey", "survey.img"});
  ASSERT_EQ(text.status, host::kExitOk) << text.err;
  EXPECT_NE(text.out.find("overall:   fit: capture on lpt:0x378 (pi 1.2 us)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not fit on uart:0x2f8: input check failed"), std::string::npos);
}

TEST(SurveyTest, NewestSurveyIsTakenAndLsListsItAsSurvey) {
  const SurveyDisk disk(host::survey_example(host::SurveyExample::Smis));
  ASSERT_TRUE(host::write_survey_session(disk.path, host::survey_example(host::SurveyExample::Fit)));
  auto newest = read(disk.path);
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->session, 2u);
  EXPECT_TRUE(host::judge(*newest).fit);
  auto older = read(disk.path, 1);
  ASSERT_TRUE(older);
  EXPECT_FALSE(host::judge(*older).fit);
  const auto ls = disk.ett({"ls", "survey.img"});
  EXPECT_EQ(ls.status, host::kExitOk) << ls.err;
  EXPECT_NE(ls.out.find("    survey  "), std::string::npos) << ls.out;
}

TEST(SurveyTest, DiskWithoutSurveyAndCaptureSessionAreRefused) {
  test::TempDir dir;
  test::make_blank_disk(dir.file("capture.img"), 1 << 20);
  test::TestDiskWriter writer(dir.file("capture.img"));
  test::SessionSpec spec;
  spec.records = test::make_records(10);
  writer.append(spec);
  auto none = test::run_ett_in(dir.file(""), {"survey", "capture.img"});
  EXPECT_EQ(none.status, host::kExitEmptyDisk);
  EXPECT_NE(none.err.find("no survey session on this trace disk"), std::string::npos) << none.err;
  EXPECT_EQ(none.err_lines(), 1);
  auto capture = test::run_ett_in(dir.file(""), {"survey", "capture.img", "--session", "1"});
  EXPECT_EQ(capture.status, host::kExitNoSuchSession);
  EXPECT_NE(capture.err.find("session 1 is a capture session, not a survey"), std::string::npos)
      << capture.err;
  auto missing = test::run_ett_in(dir.file(""), {"survey", "capture.img", "--session", "7"});
  EXPECT_EQ(missing.status, host::kExitNoSuchSession) << missing.err;
}

TEST(SurveyTest, DamagedBlockIsRefusedByNameAndLsMarksItCorrupt) {
  SurveyDisk disk(host::survey_example(host::SurveyExample::Fit));
  f::SurveyBlock b = disk.block();
  b.probes[0].step_ticks_max = 1;  // a changed figure, the CRC left as it was
  disk.put(b, /*keep_crc=*/true);
  auto run = disk.ett({"survey", "survey.img"});
  EXPECT_EQ(run.status, host::kExitBadCrc);
  EXPECT_NE(run.err.find("survey block at LBA 17: bad CRC"), std::string::npos) << run.err;
  EXPECT_EQ(run.err_lines(), 1);
  auto ls = disk.ett({"ls", "survey.img"});
  EXPECT_EQ(ls.status, host::kExitBadCrc);
  EXPECT_NE(ls.out.find("corrupt: survey block at LBA 17: bad CRC"), std::string::npos) << ls.out;
}

TEST(SurveyTest, UnknownVersionAndOversizedCountsAndCutBlockAreRefused) {
  SurveyDisk disk(host::survey_example(host::SurveyExample::Fit));
  const f::SurveyBlock good = disk.block();
  f::SurveyBlock b = good;
  b.version = 2;
  disk.put(b);
  auto version = disk.ett({"survey", "survey.img"});
  EXPECT_EQ(version.status, host::kExitUnknownVersion);
  EXPECT_NE(version.err.find("unknown survey block version 2"), std::string::npos) << version.err;
  for (uint32_t f::SurveyBlock::*count :
       {&f::SurveyBlock::timer_count, &f::SurveyBlock::probe_count, &f::SurveyBlock::disk_count}) {
    b = good;
    b.*count = 1000;  // the kernel's CRC is right, the count is not: no read past the tables
    disk.put(b);
    auto counts = disk.ett({"survey", "survey.img"});
    EXPECT_EQ(counts.status, host::kExitBadCrc);
    EXPECT_NE(counts.err.find("is more than its table holds"), std::string::npos) << counts.err;
  }
  std::memcpy(b.magic, "ETTSURVX", 8);
  disk.put(b);
  auto magic = disk.ett({"survey", "survey.img"});
  EXPECT_EQ(magic.status, host::kExitBadCrc);
  EXPECT_NE(magic.err.find("its magic is wrong"), std::string::npos) << magic.err;
  disk.put(good, /*keep_crc=*/true);
  ASSERT_EQ(disk.ett({"survey", "survey.img"}).status, host::kExitOk);
  ASSERT_EQ(::truncate(disk.path.c_str(), static_cast<off_t>(disk.block_lba * f::kSectorSize + 1000)), 0);
  auto cut = disk.ett({"survey", "survey.img"});
  EXPECT_EQ(cut.status, host::kExitTruncated);
  EXPECT_NE(cut.err.find("is cut off"), std::string::npos) << cut.err;
}

}  // namespace
}  // namespace ett
