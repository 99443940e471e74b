// survey_image.h: the survey boot tests' reader of a survey session, straight from a trace image through
// trace_format.h: the session header, the zero stall table and the SurveyBlock, each CRC checked.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "ett/crc32c.h"
#include "ett/trace_format.h"
#include "support/ett_command.h"

namespace ett::test {

struct Survey {
  format::DiskLabel label;
  format::SessionHeader header;
  format::SurveyBlock block;
};

// The first session of a fresh trace disk, which must be a complete survey session with valid CRCs.
inline Survey read_survey(const std::filesystem::path& image) {
  const std::string bytes = slurp(image.string());
  Survey s{};
  const uint64_t lba = format::kFirstSessionLba;
  const uint64_t block_lba = lba + format::sectors_before_chunks(format::kSessionFormatVersion);
  EXPECT_GE(bytes.size(), (block_lba + format::kSurveySectors) * format::kSectorSize);
  if (bytes.size() < (block_lba + format::kSurveySectors) * format::kSectorSize) return s;
  std::memcpy(&s.label, bytes.data(), sizeof(s.label));
  std::memcpy(&s.header, bytes.data() + lba * format::kSectorSize, sizeof(s.header));
  std::memcpy(&s.block, bytes.data() + block_lba * format::kSectorSize, sizeof(s.block));
  EXPECT_EQ(std::memcmp(s.header.magic, format::kSessionMagic, 8), 0);
  EXPECT_EQ(s.header.crc, crc32c(&s.header, offsetof(format::SessionHeader, crc)));
  EXPECT_EQ(s.header.status, static_cast<uint32_t>(format::SessionStatus::Complete));
  EXPECT_EQ(s.header.mode, static_cast<uint32_t>(format::CaptureMode::Survey));
  EXPECT_EQ(s.header.event_count, 0u);
  EXPECT_EQ(s.header.chunk_count, 0u);
  EXPECT_EQ(s.header.reserved_sectors, format::survey_session_sectors());
  EXPECT_EQ(s.header.start_lba, lba);
  EXPECT_EQ(std::memcmp(s.header.disk_uuid, s.label.disk_uuid, 16), 0);
  const std::string zero_table(format::kStallTableSectors * format::kSectorSize, '\0');
  EXPECT_EQ(bytes.compare((lba + 1) * format::kSectorSize, zero_table.size(), zero_table), 0)
      << "the stall table is not zero";
  EXPECT_EQ(s.header.stall_table_crc, crc32c(zero_table.data(), zero_table.size()));
  EXPECT_EQ(std::memcmp(s.block.magic, format::kSurveyMagic, 8), 0);
  EXPECT_EQ(s.block.version, format::kSurveyVersion);
  EXPECT_EQ(s.block.crc, crc32c(&s.block, offsetof(format::SurveyBlock, crc)));
  return s;
}

}  // namespace ett::test
