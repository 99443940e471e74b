// stalls_test.cpp: which events a capture's stalls touch, and what the analyses do with it: durations flag
// their actions and quote pi + the stall, intervals and align count their items, precision estimates tau from
// the check intervals of an ordinary capture.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "analysis/align.h"
#include "analysis/durations.h"
#include "analysis/intervals.h"
#include "analysis/output.h"
#include "analysis/precision.h"
#include "analysis/stall_marks.h"

using namespace ett::host;

namespace {

AnalysisEvent ev(uint64_t seq, uint8_t probe, uint8_t code, double time_ns) {
  return {seq, probe, code, 0, seq * 100, time_ns};
}

// Actions (code k on probe 1, then code k on probe 2) every 1000 ns, 300 ns long.
std::vector<AnalysisEvent> actions(int count) {
  std::vector<AnalysisEvent> events;
  for (int k = 0; k < count; ++k) {
    events.push_back(ev(2 * k, 1, static_cast<uint8_t>(k % 15 + 1), 1000.0 * k));
    events.push_back(ev(2 * k + 1, 2, static_cast<uint8_t>(k % 15 + 1), 1000.0 * k + 300));
  }
  return events;
}

}  // namespace

TEST(AnalysisStalls, AnEventInsideAStallOrTheFirstAfterItIsTouched) {
  const auto events = actions(5);  // times 0, 300, 1000, 1300, 2000, 2300, 3000, 3300, 4000, 4300
  // A stall from 1100 to 1250 (no event inside: the first after it, 1300, is touched) and one from 2900 to
  // 3400 (3000 and 3300 inside, 4000 the first after).
  const std::vector<StallSpan> stalls = {{1100, 150}, {2900, 500}};
  const StallMarks marks(stalls, events);
  std::vector<uint64_t> touched;
  for (const AnalysisEvent& e : events)
    if (marks.touched(e.seq)) touched.push_back(e.seq);
  EXPECT_EQ(touched, (std::vector<uint64_t>{3, 6, 7, 8}));
  EXPECT_EQ(marks.stall_ns(3), 150);
  EXPECT_EQ(marks.stall_ns(8), 500);
  EXPECT_EQ(marks.stall_ns(0), 0);
  EXPECT_EQ(marks.stall_ns(99), 0);  // no such event
  EXPECT_EQ(marks.touched_events(), 4u);
  EXPECT_EQ(marks.stall_at(6), 500);
}

TEST(AnalysisStalls, AnEventTwoStallsTouchCarriesTheLongerAndAnEmptyStallTouchesNothing) {
  const auto events = actions(5);
  // 3300 lies in both windows (the later, shorter stall listed first); the empty stall at 1300 marks nothing.
  const std::vector<StallSpan> stalls = {{3200, 200}, {2900, 500}, {1300, 0}};
  const StallMarks marks(stalls, events);
  EXPECT_EQ(marks.stall_ns(6), 500);
  EXPECT_EQ(marks.stall_ns(7), 500);
  EXPECT_EQ(marks.stall_ns(8), 500);
  EXPECT_EQ(marks.stall_ns(3), 0);
  EXPECT_EQ(marks.touched_events(), 3u);
  EXPECT_EQ(marks.stall_at(7), 500);
  EXPECT_EQ(marks.stall_at(9), 0);
}

TEST(AnalysisStalls, MarksMatchThePlainRuleOnRandomStalls) {
  // The rule as the header states it, stall by stall over the whole capture: from the first event at or
  // after the stall's start, every event up to and including the first one after its window's end.
  std::mt19937_64 random(5);
  for (int round = 0; round < 40; ++round) {
    std::vector<AnalysisEvent> events;
    double time = 0;
    for (uint64_t seq = 0; seq < 300; ++seq) {
      time += static_cast<double>(random() % 4) * 10;  // ties too
      events.push_back(ev(seq * 3 + 1, 1, 1, time));
    }
    std::vector<StallSpan> stalls;
    for (int i = 0; i < 1 + round % 6; ++i)  // unsorted, overlapping, empty, before and after the events
      stalls.push_back({static_cast<double>(random() % 5000) - 500,
                        random() % 5 == 0 ? 0.0 : static_cast<double>(random() % 400)});
    std::map<uint64_t, double> expected;
    for (const StallSpan& stall : stalls) {
      if (!(stall.length_ns > 0)) continue;
      for (const AnalysisEvent& event : events) {
        if (event.time_ns < stall.start_ns) continue;
        expected[event.seq] = std::max(expected[event.seq], stall.length_ns);
        if (event.time_ns > stall.start_ns + stall.length_ns) break;
      }
    }
    const StallMarks marks(stalls, events);
    StallMarks::Builder builder(stalls);
    for (const AnalysisEvent& event : events) builder.add(event);
    const StallMarks built = std::move(builder).finish();
    SCOPED_TRACE(fmt::format("round {}", round));
    EXPECT_EQ(marks.touched_events(), expected.size());
    EXPECT_EQ(built.touched_events(), expected.size());
    for (size_t i = 0; i < events.size(); ++i) {
      const uint64_t seq = events[i].seq;
      const double want = expected.count(seq) ? expected[seq] : 0;
      ASSERT_EQ(marks.stall_ns(seq), want) << "seq " << seq;
      ASSERT_EQ(marks.stall_at(i), want) << "index " << i;
      ASSERT_EQ(built.stall_ns(seq), want) << "seq " << seq;
      ASSERT_EQ(marks.stall_ns(seq + 1), 0) << "not an event";
    }
  }
}

TEST(AnalysisStalls, DurationsFlagExactlyTheActionsAStallTouchesAndQuotePiPlusTheStall) {
  const auto events = actions(5);
  const std::vector<StallSpan> stalls = {{1100, 150}, {2900, 500}};
  auto result = pair_actions(events, {1, {}}, {2, {}}, 20.0);
  ASSERT_TRUE(result);
  mark_stalls(*result, StallMarks(stalls, events), 7);
  ASSERT_EQ(result->actions.size(), 5u);
  std::vector<bool> flagged;
  for (const Action& a : result->actions) flagged.push_back(a.stall_ns > 0);
  EXPECT_EQ(flagged, (std::vector<bool>{false, true, false, true, true}));
  EXPECT_EQ(result->actions[0].bound_ns, 20);
  EXPECT_EQ(result->actions[1].bound_ns, 170);
  EXPECT_EQ(result->actions[3].bound_ns, 520);
  EXPECT_EQ(result->stalled, 3u);
  EXPECT_EQ(result->stall_count, 7u);

  const auto json = nlohmann::json::parse(format_durations(*result, nullptr, OutputFormat::Json));
  EXPECT_EQ(json.at("stalls"), 7);
  EXPECT_EQ(json.at("stalled_actions"), 3);
  EXPECT_EQ(json.at("bound_holds"), 2);
  EXPECT_EQ(json.at("actions").at(0),
            nlohmann::json::parse(R"({"start_seq":0,"end_seq":1,"start_code":1,"end_code":1,"duration_ns":300,
                                      "bound_ns":20,"stall":false,"stall_ns":0})"));
  EXPECT_EQ(json.at("actions").at(1).at("bound_ns"), 170);
  EXPECT_EQ(json.at("actions").at(1).at("stall"), true);
  const std::string text = format_durations(*result, nullptr, OutputFormat::Text);
  EXPECT_NE(
      text.find("the ±20.0 ns bound (pi) holds for 2 of 5 actions; 3 touch one of the capture's 7 stalls"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("ns ± 20.0"), std::string::npos) << "no statistic may carry ±pi: " << text;
  EXPECT_NE(text.find("STALL 150.0 ns"), std::string::npos) << text;
  const std::string csv = format_durations(*result, nullptr, OutputFormat::Csv);
  EXPECT_NE(csv.find(",pairing,bound_ns,stall\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("2,3,2,2,1000.0,1300.0,300.0,in-order,170.0,1\n"), std::string::npos) << csv;

  // Without a stall the bound holds for all, and the statistics carry it again.
  auto clean = pair_actions(events, {1, {}}, {2, {}}, 20.0);
  mark_stalls(*clean, StallMarks({}, events), 0);
  EXPECT_EQ(clean->stalled, 0u);
  const std::string clean_text = format_durations(*clean, nullptr, OutputFormat::Text);
  EXPECT_NE(clean_text.find("the bound holds for 5 of 5 actions"), std::string::npos) << clean_text;
  EXPECT_NE(clean_text.find("ns ± 20.0"), std::string::npos) << clean_text;
}

TEST(AnalysisStalls, IntervalsCountTheIntervalsAStallTouches) {
  const auto events = actions(5);
  const std::vector<StallSpan> stalls = {{2900, 500}};  // touches seq 6, 7 (inside) and 8 (first after)
  const IntervalsResult result = analyze_intervals(events, 800, stalls, 1);
  ASSERT_EQ(result.probes.size(), 2u);
  // Probe 1: 0,1000,2000,3000,4000 -> intervals 2000-3000 and 3000-4000 touched. Probe 2: 300..4300 -> only
  // 2300-3300 and 3300-4300 (3300 touched).
  EXPECT_EQ(result.probes[0].stalled, 2u);
  EXPECT_EQ(result.probes[1].stalled, 2u);
  const std::string text = format_intervals(result, OutputFormat::Text);
  EXPECT_NE(
      text.find("the loop-step bound (pi) holds for 4 of 8 intervals; 4 touch one of the capture's 1 stalls"),
      std::string::npos)
      << text;
}

TEST(AnalysisStalls, AlignFlagsTheSyncEdgesAStallOfEitherCaptureTouches) {
  Capture reference, other;
  for (int k = 0; k < 6; ++k) {
    reference.events.push_back(ev(k, 1, static_cast<uint8_t>(k % 2), 1000.0 * k));
    other.events.push_back(ev(k, 1, static_cast<uint8_t>(k % 2), 1000.0 * k + 50));
  }
  reference.stalls = {{1500, 100}};  // edge 2 (2000) is the first event after it
  other.stalls = {{4040, 100}};      // edge 4 (4050) is inside it, edge 5 (5050) the first after it
  const std::vector<Capture> captures = {reference, other};
  auto result = align_captures(captures, 1);
  ASSERT_TRUE(result);
  ASSERT_EQ(result->fits.size(), 2u);
  EXPECT_EQ(result->fits[0].stalled_edges, 1u);
  EXPECT_EQ(result->fits[1].edge_stalled, (std::vector<bool>{false, false, true, false, true, true}));
  EXPECT_EQ(result->fits[1].stalled_edges, 3u);
  const std::vector<int64_t> ids{1, 2};
  const std::string text = format_align(*result, captures, ids, OutputFormat::Text);
  EXPECT_NE(text.find("the loop-step bound (pi) holds for 3 of 6 paired sync edges"), std::string::npos)
      << text;
}

// align's JSON is written in parts (each fit's residuals and the timeline by hand): the text is what nlohmann
// dumps for the document it parses into, with the stalled edges and the residuals of the fits.
TEST(AnalysisStalls, AlignJsonIsTheDocumentNlohmannWouldWrite) {
  Capture reference, other;
  for (int k = 0; k < 6; ++k) {
    reference.events.push_back(ev(k, 1, static_cast<uint8_t>(k % 2), 1000.0 * k));
    other.events.push_back(ev(k, 1, static_cast<uint8_t>(k % 2), 1000.0 * k + 50 + 0.123457 * (k * k % 7)));
    other.events.push_back(ev(100 + k, 2, 3, 1000.0 * k + 333.33333));
  }
  reference.stalls = {{1500, 100}};
  other.stalls = {{4040, 100}};
  const std::vector<Capture> captures = {reference, other};
  auto result = align_captures(captures, 1);
  ASSERT_TRUE(result);
  const std::vector<int64_t> ids{1, 2};
  const std::string text = format_align(*result, captures, ids, OutputFormat::Json);
  const auto doc = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(doc.dump() + "\n", text);
  ASSERT_EQ(doc.at("fits").size(), 2u);
  const auto& fit = doc.at("fits")[1];
  std::vector<size_t> stalled;
  for (size_t k = 0; k < result->fits[1].edge_stalled.size(); ++k)
    if (result->fits[1].edge_stalled[k]) stalled.push_back(k);
  EXPECT_EQ(stalled, (std::vector<size_t>{2, 4}));  // edge 5 is no longer the first event after the stall
  EXPECT_EQ(fit.at("stalled_edge_indexes").get<std::vector<size_t>>(), stalled);
  ASSERT_EQ(fit.at("residuals_ns").size(), result->fits[1].residuals_ns.size());
  for (size_t k = 0; k < result->fits[1].residuals_ns.size(); ++k)
    EXPECT_NEAR(fit.at("residuals_ns")[k].get<double>(), result->fits[1].residuals_ns[k], 5e-5) << k;
  EXPECT_GT(result->fits[1].max_abs_residual_ns, 0.05);  // residuals that are not all 0.0
  EXPECT_EQ(doc.at("merged_events"), 18);
  EXPECT_EQ(doc.at("timeline").size(), 18u);
}

// A capture-time tau from the check intervals: the longest interval less 1023 typical polls.
TEST(AnalysisStalls, PrecisionOfAnOrdinaryCaptureComesFromItsCheckIntervals) {
  Capture capture;
  capture.info.name = "trace 4";
  capture.info.mode = "capture";
  capture.info.tsc_hz = 1'000'000'000;
  capture.info.loop_iterations = 1'000'000;
  capture.info.typical_check_ns = 10240;  // 10 ns per poll
  capture.info.longest_check_ns = 50000;
  capture.info.stall_threshold_ns = 40960;
  capture.info.stall_count = 1;
  auto result = analyze_precision(capture);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->source, PrecisionSource::CheckIntervals);
  ASSERT_EQ(result->levels.size(), 1u);
  EXPECT_DOUBLE_EQ(result->levels[0].tau_ns, 50000 - 10230);
  EXPECT_DOUBLE_EQ(result->levels[0].pi_ns, 50000 - 10230 + 1);
  EXPECT_DOUBLE_EQ(result->tau_outside_stalls_ns, 40960 - 10230);
  const auto json = nlohmann::json::parse(format_precision(*result, OutputFormat::Json));
  EXPECT_EQ(json.at("source"), "check-intervals");
  EXPECT_EQ(json.at("stalls"), 1);
  EXPECT_NE(format_precision(*result, OutputFormat::Text).find("source: the check intervals of this capture"),
            std::string::npos);

  // A capture without check intervals (an old session) is refused with the reason.
  capture.info.typical_check_ns = 0;
  auto refused = analyze_precision(capture);
  ASSERT_FALSE(refused);
  EXPECT_NE(
      refused.error().message.find("trace 4 was captured with mode=capture and recorded no check intervals"),
      std::string::npos)
      << refused.error().message;
}
