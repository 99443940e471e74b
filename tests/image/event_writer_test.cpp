// event_writer_test.cpp: exact CSV, JSONL, JSON and text output, time_ns rounding and the --cpu-hz override.
#include "image/event_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace ett::host {
namespace {

// What write_events writes for the events of `feed`.
std::string render_feed(const EventFeed& feed, EventFormat format, EventTiming timing,
                        bool with_flags = false) {
  std::FILE* file = std::tmpfile();
  EXPECT_NE(file, nullptr);
  auto wrote = write_events(feed, format, timing, file, "tmp", {}, with_flags);
  EXPECT_TRUE(wrote.ok()) << (wrote.ok() ? "" : wrote.error().message);
  std::string text(static_cast<size_t>(std::ftell(file)), '\0');
  std::rewind(file);
  EXPECT_EQ(std::fread(text.data(), 1, text.size(), file), text.size());
  std::fclose(file);
  return text;
}

std::string render(const std::vector<Event>& events, EventFormat format, EventTiming timing,
                   bool with_flags = false) {
  return render_feed(EventSpan(events).feed(0, events.size()), format, timing, with_flags);
}

const std::vector<Event> kEvents = {
    {0, 1000, 1, 3, 0x03, 0, 0},
    {1, 1001, 2, 15, 0xF3, 0, 0},
    {2, 1002, 1, 0, 0xF0, 0, 0},
    {5, 4000, 2, 1, 0x10, 0, 0},
};

TEST(EventWriter, CsvExact) {
  // 3 Hz: 1 tick = 333333333.33 ns -> 333333333; 2 ticks = 666666666.67 -> 666666667.
  EXPECT_EQ(render(kEvents, EventFormat::Csv, {1000, 3}),
            "seq,probe,code,tsc,time_ns\n"
            "0,1,3,1000,0\n"
            "1,2,15,1001,333333333\n"
            "2,1,0,1002,666666667\n"
            "5,2,1,4000,1000000000000\n");
}

// A serial port's session: both edges of a pulse shorter than the poll step say so, the others say nothing.
TEST(EventWriter, SerialSessionsShowTheShortPulseFlag) {
  const std::vector<Event> pulse = {{0, 1000, 1, 1, 0x01, 0, 0},
                                    {1, 1004, 1, 3, 0x03, format::kEventShortPulse, 0},
                                    {2, 1004, 1, 1, 0x01, format::kEventShortPulse, 0}};
  EXPECT_EQ(render(pulse, EventFormat::Csv, {1000, 1'000'000'000}, true),
            "seq,probe,code,tsc,time_ns,flags\n"
            "0,1,1,1000,0,\n"
            "1,1,3,1004,4,short-pulse\n"
            "2,1,1,1004,4,short-pulse\n");
  EXPECT_EQ(render({pulse[1]}, EventFormat::Jsonl, {1000, 1'000'000'000}, true),
            "{\"seq\":1,\"probe\":1,\"code\":3,\"tsc\":1004,\"time_ns\":4,\"lines\":3,\"flags\":\"short-"
            "pulse\"}\n");
  const nlohmann::json json =
      nlohmann::json::parse(render(pulse, EventFormat::Json, {1000, 1'000'000'000}, true));
  EXPECT_EQ(json[0]["flags"], "");
  EXPECT_EQ(json[2]["flags"], "short-pulse");
  const std::string text = render(pulse, EventFormat::Text, {1000, 1'000'000'000}, true);
  EXPECT_NE(text.find("lines  flags\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    1  -\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    3  short-pulse\n"), std::string::npos) << text;
  // Other sources keep the columns they always had.
  EXPECT_EQ(render(pulse, EventFormat::Csv, {1000, 1'000'000'000}).find("flags"), std::string::npos);
}

TEST(EventWriter, JsonlExact) {
  EXPECT_EQ(render({kEvents[0], kEvents[1]}, EventFormat::Jsonl, {1000, 2'000'000'000}),
            "{\"seq\":0,\"probe\":1,\"code\":3,\"tsc\":1000,\"time_ns\":0,\"lines\":3}\n"
            "{\"seq\":1,\"probe\":2,\"code\":15,\"tsc\":1001,\"time_ns\":1,\"lines\":243}\n");
}

TEST(EventWriter, CpuHzOverrideChangesOnlyTimes) {
  const std::vector<Event> events = {{0, 3'000'000'000 + 1500, 1, 1, 1, 0, 0}};
  EXPECT_EQ(render(events, EventFormat::Csv, {1500, 3'000'000'000}),
            "seq,probe,code,tsc,time_ns\n0,1,1,3000001500,1000000000\n");
  EXPECT_EQ(render(events, EventFormat::Csv, {1500, 2'400'000'000}),
            "seq,probe,code,tsc,time_ns\n0,1,1,3000001500,1250000000\n");
}

TEST(EventWriter, Rounding) {
  EXPECT_EQ(tsc_to_ns(1, {0, 2'000'000'000}), 1);       // 0.5 ns rounds up
  EXPECT_EQ(tsc_to_ns(1, {0, 2'000'000'001}), 0);       // just under 0.5 ns
  EXPECT_EQ(tsc_to_ns(7, {0, 3'000'000'000}), 2);       // 2.33 ns
  EXPECT_EQ(tsc_to_ns(8, {0, 3'000'000'000}), 3);       // 2.67 ns
  EXPECT_EQ(tsc_to_ns(100, {101, 2'000'000'000}), -1);  // before time 0: -0.5 rounds away from zero
  // Large values stay exact: 2^60 ticks at 1 GHz.
  EXPECT_EQ(tsc_to_ns((1ull << 60) + 5, {5, 1'000'000'000}), int64_t{1} << 60);
}

TEST(EventWriter, EmptyAndZeroHz) {
  EXPECT_EQ(render({}, EventFormat::Csv, {0, 1}), "seq,probe,code,tsc,time_ns\n");
  EXPECT_EQ(render({}, EventFormat::Jsonl, {0, 1}), "");
  std::FILE* file = std::tmpfile();
  auto wrote = write_events(kEvents, EventFormat::Csv, {0, 0}, file, "tmp");
  std::fclose(file);
  ASSERT_FALSE(wrote.ok());
  EXPECT_NE(wrote.error().message.find("--cpu-hz"), std::string::npos);
}

TEST(EventWriter, FormatNames) {
  EXPECT_EQ(event_format_from_name("csv"), EventFormat::Csv);
  EXPECT_EQ(event_format_from_name("jsonl"), EventFormat::Jsonl);
  EXPECT_EQ(event_format_from_name("json"), EventFormat::Json);
  EXPECT_EQ(event_format_from_name("text"), EventFormat::Text);
  EXPECT_FALSE(event_format_from_name("xml"));
}

// The JSON array is hand-written (millions of events): it must parse, and hold what JSON Lines holds.
TEST(EventWriter, JsonArrayParsesAndMatchesJsonLines) {
  const auto array = nlohmann::json::parse(render(kEvents, EventFormat::Json, {1000, 3}));
  ASSERT_EQ(array.size(), kEvents.size());
  std::istringstream lines(render(kEvents, EventFormat::Jsonl, {1000, 3}));
  std::string line;
  for (size_t i = 0; std::getline(lines, line); ++i) EXPECT_EQ(nlohmann::json::parse(line), array.at(i));
  EXPECT_EQ(array.at(3).at("time_ns"), 1000000000000);
  EXPECT_EQ(nlohmann::json::parse(render({}, EventFormat::Json, {0, 1})), nlohmann::json::array());
}

TEST(EventWriter, TextIsAlignedColumns) {
  EXPECT_EQ(render({kEvents[1]}, EventFormat::Text, {1000, 3}),
            "       seq  probe  code                   tsc           time_ns  lines\n"
            "         1      2    15                  1001         333333333    243\n");
}

// A progress callback that says stop ends the writing with an Interrupted error.
TEST(EventWriter, ProgressCanStopTheWriting) {
  std::vector<Event> events(200'000, kEvents[0]);
  std::vector<uint64_t> seen;
  std::FILE* file = std::tmpfile();
  auto wrote = write_events(events, EventFormat::Csv, {0, 1}, file, "tmp", [&](uint64_t done) {
    seen.push_back(done);
    return seen.size() < 2;
  });
  std::fclose(file);
  ASSERT_FALSE(wrote);
  EXPECT_EQ(wrote.error().kind, ErrorKind::Interrupted);
  EXPECT_EQ(seen, (std::vector<uint64_t>{65536, 131072}));
}

// Events fed in blocks of any size write what one block of all of them writes, in every format (the JSON
// array's commas across the blocks' seams too); an error from the feed ends the writing with it.
TEST(EventWriter, FedBlocksWriteWhatOneBlockWrites) {
  std::vector<Event> events(70'000);
  for (size_t i = 0; i < events.size(); ++i)
    events[i] = Event{i,
                      1000 + 7 * i,
                      static_cast<uint8_t>(1 + i % 3),
                      static_cast<uint8_t>(i % 16),
                      static_cast<uint8_t>(i * 13),
                      0,
                      0};
  const std::vector<size_t> sizes = {1, 2, 5, 65'536, 1};  // the rest after these
  auto blocks = [&]() {
    auto at = std::make_shared<size_t>(0);
    auto next = std::make_shared<size_t>(0);
    return EventFeed([&events, &sizes, at, next]() -> Expected<std::span<const Event>> {
      const size_t size = *next < sizes.size() ? sizes[(*next)++] : events.size() - *at;
      const std::span<const Event> block =
          std::span(events).subspan(*at, std::min(size, events.size() - *at));
      *at += block.size();
      return block;
    });
  };
  auto one_block = [&]() {
    auto done = std::make_shared<bool>(false);
    return EventFeed([&events, done]() -> Expected<std::span<const Event>> {
      if (*done) return std::span<const Event>();
      *done = true;
      return std::span<const Event>(events);
    });
  };
  const EventTiming timing{1000, 3'000'000'000};
  for (EventFormat format : {EventFormat::Csv, EventFormat::Jsonl, EventFormat::Json, EventFormat::Text}) {
    const std::string whole = render_feed(one_block(), format, timing);
    EXPECT_TRUE(render_feed(blocks(), format, timing) == whole) << static_cast<int>(format);
    if (format == EventFormat::Json) {
      EXPECT_EQ(nlohmann::json::parse(whole).size(), events.size());
    }
  }

  auto calls = std::make_shared<int>(0);
  const EventFeed failing = [&events, calls]() -> Expected<std::span<const Event>> {
    if (++*calls > 1) return make_error(ErrorKind::Io, "disk.img: session 1 changed while it was read");
    return std::span<const Event>(events).first(10);
  };
  std::FILE* file = std::tmpfile();
  auto wrote = write_events(failing, EventFormat::Csv, {0, 1}, file, "tmp");
  std::fclose(file);
  ASSERT_FALSE(wrote);
  EXPECT_EQ(wrote.error().message, "disk.img: session 1 changed while it was read");
}

}  // namespace
}  // namespace ett::host
