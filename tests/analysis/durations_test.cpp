// durations_test.cpp: action pairing (default rule, explicit codes, unmatched and out-of-order ends)
// and the least-squares latency fit on synthetic durations with known coefficients.
#include "analysis/durations.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "analysis/fit.h"
#include "analysis/output.h"

using namespace ett::host;

namespace {

AnalysisEvent ev(uint64_t seq, uint8_t probe, uint8_t code, double time_ns) {
  return {seq, probe, code, 0, seq * 100, time_ns};
}

// Two overlapping actions (codes 1 and 2) that end in the opposite order, an end with no start (code 3 on
// probe 2) and a start that never ends (code 3 on probe 1).
const std::vector<AnalysisEvent> kEvents = {
    ev(0, 1, 1, 0), ev(1, 1, 2, 100), ev(2, 2, 2, 250), ev(3, 2, 1, 400), ev(4, 2, 3, 500), ev(5, 1, 3, 600),
};

}  // namespace

TEST(AnalysisDurations, ParsesEndpoints) {
  auto a = parse_endpoint("1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->probe, 1);
  EXPECT_FALSE(a->code);
  auto b = parse_endpoint("2:15");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->probe, 2);
  EXPECT_EQ(*b->code, 15);
  EXPECT_EQ(endpoint_text(*b), "2:15");
  for (const char* bad : {"0", "9", "1:256", "a", "1:", ":1", "", "1:2:3", "-1"})
    EXPECT_FALSE(parse_endpoint(bad)) << bad;
}

// The CSV names what became of every start and end: each action in or out of order, then the unmatched ones.
TEST(AnalysisDurations, CsvListsEveryStartAndEnd) {
  auto result = pair_actions(kEvents, {1, {}}, {2, {}}, 50);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(format_durations(*result, nullptr, OutputFormat::Csv),
            "start_seq,end_seq,start_code,end_code,start_ns,end_ns,duration_ns,pairing,bound_ns,stall\n"
            "1,2,2,2,100.0,250.0,150.0,out-of-order,50.0,0\n"
            "0,3,1,1,0.0,400.0,400.0,in-order,50.0,0\n"
            "5,,,,,,,unmatched-start,,\n"
            ",4,,,,,,unmatched-end,,\n");
}

// --time utc: every format gains the actions' UTC times, from the labels it is given.
TEST(AnalysisDurations, UtcLabelsAddColumnsMembersAndATable) {
  auto result = pair_actions(kEvents, {1, {}}, {2, {}}, 50);
  ASSERT_TRUE(result) << result.error().message;
  const UtcLabels utc{"cmos", [](double ns) { return fmt::format("T{:.0f}Z", ns); }};
  EXPECT_EQ(
      format_durations(*result, nullptr, OutputFormat::Csv, &utc),
      "start_seq,end_seq,start_code,end_code,start_ns,end_ns,duration_ns,pairing,bound_ns,stall,start_utc,"
      "end_utc\n"
      "1,2,2,2,100.0,250.0,150.0,out-of-order,50.0,0,T100Z,T250Z\n"
      "0,3,1,1,0.0,400.0,400.0,in-order,50.0,0,T0Z,T400Z\n"
      "5,,,,,,,unmatched-start,,,,\n"
      ",4,,,,,,unmatched-end,,,,\n");
  const auto json =
      nlohmann::ordered_json::parse(format_durations(*result, nullptr, OutputFormat::Json, &utc));
  EXPECT_EQ(json["time"], "utc");
  EXPECT_EQ(json["actions"][1]["start_utc"], "T0Z");
  EXPECT_EQ(json["actions"][1]["end_utc"], "T400Z");
  const std::string text = format_durations(*result, nullptr, OutputFormat::Text, &utc);
  EXPECT_NE(text.find("UTC (PPS mapping, labelled from cmos):\n"), std::string::npos) << text;
  EXPECT_NE(text.find("         1           2  T100Z                           T250Z\n"), std::string::npos)
      << text;
  EXPECT_EQ(format_durations(*result, nullptr, OutputFormat::Text).find("UTC"), std::string::npos);
}

// The JSON is written by hand as it streams: it must be exactly what nlohmann-json dumps for the same
// document (numbers in its own form: 0.0, 1e+20, null for what is not finite), and the same whichever ranges
// of rows are formatted apart.
TEST(AnalysisDurations, StreamedJsonIsTheDocumentNlohmannWouldDump) {
  std::vector<AnalysisEvent> events;
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> gap(0, 5e6);
  double time = 0;
  for (uint64_t seq = 0; seq < 400; ++seq) {
    time += seq % 50 == 7 ? 1e19 : gap(random);  // a few times past 1e20: exponent form
    // One block of four in three holds two actions that end in the opposite order (start 10, start 11,
    // end 11, end 10); the others hold two in order.
    const bool crossed = seq / 4 % 3 == 0;
    const auto probe = static_cast<uint8_t>(crossed ? 1 + seq / 2 % 2 : 1 + seq % 2);
    const auto code = static_cast<uint8_t>(crossed ? (seq % 4 == 0 || seq % 4 == 3 ? 10 : 11) : seq / 2 % 5);
    events.push_back(ev(seq, probe, code, time));
  }
  auto result = pair_actions(events, {1, {}}, {2, {}}, 12.34567);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_GT(result->actions.size(), 100u);
  const std::vector<uint64_t> crossed_ends = out_of_order_ends(result->actions);
  ASSERT_EQ(crossed_ends.size(), 34u) << "one action of each crossed block";
  EXPECT_EQ(result->out_of_order, crossed_ends.size());
  EXPECT_EQ(crossed_ends[0], 2u);
  EXPECT_EQ(out_of_order_ends(result->actions, 3),
            std::vector<uint64_t>(crossed_ends.begin(), crossed_ends.begin() + 3));
  const std::string text = format_durations(*result, nullptr, OutputFormat::Text);
  EXPECT_NE(text.find("out of order: 34 (ends that closed a start while an older one was still open: "
                      "seq 2, 14, 26, 38, 50, 62, 74, 86, 98, 110, ... (24 more))\n"),
            std::string::npos)
      << text;
  result->actions[0].stall_ns = 1234.5;
  result->actions[1].duration_ns = std::numeric_limits<double>::infinity();
  result->actions[2].bound_ns = 0;
  result->actions[3].duration_ns = 0.00004;  // rounds to 0
  result->actions[4].duration_ns = -2.5;
  const UtcLabels gps{"gps", [](double ns) { return fmt::format("{:.3f}", ns); }};
  for (const UtcLabels* utc : {static_cast<const UtcLabels*>(nullptr), &gps}) {
    const std::string json = format_durations(*result, nullptr, OutputFormat::Json, utc);
    const auto parsed = nlohmann::ordered_json::parse(json);
    EXPECT_EQ(json, parsed.dump() + "\n");
    EXPECT_EQ(parsed["out_of_order"].get<std::vector<uint64_t>>(), crossed_ends);
    for (OutputFormat format : {OutputFormat::Json, OutputFormat::Csv, OutputFormat::Text}) {
      const Report report = durations_report(*result, nullptr, format, utc);
      std::string pieces;
      for (const ReportPart& part : report) {
        pieces += part.text;
        fmt::memory_buffer rows;
        for (size_t begin = 0; begin < part.rows; begin += 7)
          part.format_rows(begin, std::min(part.rows, begin + 7), rows);
        pieces += fmt::to_string(rows);
      }
      EXPECT_EQ(pieces, report_text(report));
    }
  }
}

TEST(AnalysisDurations, DefaultRulePairsTheSameCodeOnTheOtherProbe) {
  auto result = pair_actions(kEvents, {1, {}}, {2, {}}, 50);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->actions.size(), 2u);
  EXPECT_EQ(result->actions[0].start_seq, 1u);
  EXPECT_EQ(result->actions[0].end_seq, 2u);
  EXPECT_DOUBLE_EQ(result->actions[0].duration_ns, 150);
  EXPECT_EQ(result->actions[1].start_seq, 0u);
  EXPECT_EQ(result->actions[1].end_seq, 3u);
  EXPECT_DOUBLE_EQ(result->actions[1].duration_ns, 400);
  EXPECT_EQ(result->out_of_order, 1u);
  EXPECT_EQ(out_of_order_ends(result->actions), std::vector<uint64_t>{2})
      << "end 2 closed start 1 while start 0 was open";
  EXPECT_EQ(result->unmatched_ends, std::vector<uint64_t>{4});
  EXPECT_EQ(result->unmatched_starts, std::vector<uint64_t>{5});
  const Summary& s = result->summary;
  EXPECT_EQ(s.count, 2u);
  EXPECT_DOUBLE_EQ(s.mean, 275);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2 * 125.0 * 125.0));
  EXPECT_DOUBLE_EQ(s.min, 150);
  EXPECT_DOUBLE_EQ(s.p50, 150);
  EXPECT_DOUBLE_EQ(s.max, 400);
  EXPECT_DOUBLE_EQ(result->pi_ns, 50);
  // Without the summary (an export): the same actions and bounds, no summary.
  auto unsummarized = pair_actions(kEvents, {1, {}}, {2, {}}, 50, PairRule::SameCode, Summarize::No);
  ASSERT_TRUE(unsummarized);
  ASSERT_EQ(unsummarized->actions.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(unsummarized->actions[i].start_seq, result->actions[i].start_seq);
    EXPECT_EQ(unsummarized->actions[i].duration_ns, result->actions[i].duration_ns);
    EXPECT_EQ(unsummarized->actions[i].bound_ns, 50);
  }
  EXPECT_EQ(unsummarized->summary.count, 0u);
}

TEST(AnalysisDurations, ExplicitCodesCloseTheOldestOpenStart) {
  // Starts with code 1 only; any end with code 3 closes the oldest open start.
  auto result = pair_actions(kEvents, {1, 1}, {2, 3}, 0);
  ASSERT_TRUE(result);
  ASSERT_EQ(result->actions.size(), 1u);
  EXPECT_EQ(result->actions[0].start_seq, 0u);
  EXPECT_EQ(result->actions[0].end_seq, 4u);
  EXPECT_EQ(result->actions[0].end_code, 3);
  EXPECT_TRUE(result->unmatched_starts.empty());
  EXPECT_EQ(result->out_of_order, 0u);
}

TEST(AnalysisDurations, FifoRuleIgnoresCodes) {
  auto result = pair_actions(kEvents, {1, {}}, {2, {}}, 0, PairRule::Fifo);
  ASSERT_TRUE(result);
  ASSERT_EQ(result->actions.size(), 2u);  // 0 -> 2 and 1 -> 3; end 4 finds nothing open; start 5 stays open
  EXPECT_EQ(result->actions[0].start_seq, 0u);
  EXPECT_EQ(result->actions[0].end_seq, 2u);
  EXPECT_EQ(result->actions[1].start_seq, 1u);
  EXPECT_EQ(result->actions[1].end_seq, 3u);
  EXPECT_EQ(result->unmatched_ends, std::vector<uint64_t>{4});
  EXPECT_EQ(result->unmatched_starts, std::vector<uint64_t>{5});
  EXPECT_EQ(result->out_of_order, 0u);
  EXPECT_EQ(*parse_pair_rule("fifo"), PairRule::Fifo);
  EXPECT_FALSE(parse_pair_rule("nearest"));
}

// The rule of durations.h as the header states it, with a plain list of open starts searched from the oldest.
struct ReferencePairing {
  std::vector<std::pair<uint64_t, uint64_t>> actions;  // start seq, end seq, in end order
  std::vector<uint64_t> unmatched_starts, unmatched_ends, out_of_order;
};
ReferencePairing reference_pairing(const std::vector<AnalysisEvent>& events, const Endpoint& from,
                                   const Endpoint& to, PairRule rule) {
  auto selects = [](const Endpoint& endpoint, const AnalysisEvent& event) {
    return event.probe == endpoint.probe && (!endpoint.code || *endpoint.code == event.code);
  };
  ReferencePairing out;
  std::vector<const AnalysisEvent*> open;
  for (const AnalysisEvent& event : events) {
    if (selects(to, event)) {
      const bool any_code = to.code || rule == PairRule::Fifo;
      auto it = std::find_if(open.begin(), open.end(), [&](const AnalysisEvent* start) {
        return any_code || start->code == event.code;
      });
      if (it == open.end()) {
        out.unmatched_ends.push_back(event.seq);
        continue;
      }
      if (it != open.begin()) out.out_of_order.push_back(event.seq);
      out.actions.emplace_back((*it)->seq, event.seq);
      open.erase(it);
    } else if (selects(from, event)) {
      open.push_back(&event);
    }
  }
  for (const AnalysisEvent* start : open) out.unmatched_starts.push_back(start->seq);
  return out;
}

TEST(AnalysisDurations, PairingMatchesThePlainRuleOnRandomTraffic) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 60; ++round) {
    // Few codes and three probes: starts pile up, ends find none, other probes' events pass by.
    const int codes = 1 + round % 4;
    std::vector<AnalysisEvent> events;
    for (uint64_t seq = 0; seq < 400; ++seq)
      events.push_back(ev(seq, static_cast<uint8_t>(1 + random() % 3), static_cast<uint8_t>(random() % codes),
                          static_cast<double>(seq) * 10 + static_cast<double>(random() % 7)));
    const Endpoint from{1, round % 3 == 2 ? std::optional<uint8_t>(0) : std::nullopt};
    const Endpoint to{2, round % 3 == 1 ? std::optional<uint8_t>(1) : std::nullopt};
    for (PairRule rule : {PairRule::SameCode, PairRule::Fifo}) {
      SCOPED_TRACE(fmt::format("round {} rule {}", round, rule == PairRule::Fifo ? "fifo" : "same-code"));
      auto result = pair_actions(events, from, to, 0, rule);
      ASSERT_TRUE(result) << result.error().message;
      const ReferencePairing expected = reference_pairing(events, from, to, rule);
      ASSERT_EQ(result->actions.size(), expected.actions.size());
      for (size_t i = 0; i < expected.actions.size(); ++i) {
        const Action& action = result->actions[i];
        EXPECT_EQ(action.start_seq, expected.actions[i].first);
        EXPECT_EQ(action.end_seq, expected.actions[i].second);
        EXPECT_EQ(action.start_code, events[action.start_seq].code);
        EXPECT_EQ(action.end_code, events[action.end_seq].code);
        EXPECT_EQ(action.duration_ns, events[action.end_seq].time_ns - events[action.start_seq].time_ns);
      }
      EXPECT_EQ(result->unmatched_starts, expected.unmatched_starts);
      EXPECT_EQ(result->unmatched_ends, expected.unmatched_ends);
      EXPECT_EQ(out_of_order_ends(result->actions), expected.out_of_order);
      EXPECT_EQ(result->out_of_order, expected.out_of_order.size());
    }
  }
}

TEST(AnalysisDurations, PairingMatchesThePlainRuleOverALongCapture) {
  // Hundreds of thousands of starts, most closed soon, a few open for long: the pairing drops the closed
  // starts it holds many times over, and every index it keeps must still lead to the right start.
  std::mt19937_64 random(11);
  std::vector<AnalysisEvent> events;
  for (uint64_t seq = 0; seq < 300000; ++seq) {
    const uint64_t draw = random() % 100;
    const uint8_t probe = draw < 40 ? 1 : draw < 86 ? 2 : 3;
    events.push_back(ev(seq, probe, static_cast<uint8_t>(random() % 3), static_cast<double>(seq) * 10));
  }
  for (PairRule rule : {PairRule::SameCode, PairRule::Fifo}) {
    SCOPED_TRACE(rule == PairRule::Fifo ? "fifo" : "same-code");
    auto result = pair_actions(events, {1, {}}, {2, {}}, 0, rule);
    ASSERT_TRUE(result) << result.error().message;
    const ReferencePairing expected = reference_pairing(events, {1, {}}, {2, {}}, rule);
    ASSERT_EQ(result->actions.size(), expected.actions.size());
    for (size_t i = 0; i < expected.actions.size(); ++i) {
      ASSERT_EQ(result->actions[i].start_seq, expected.actions[i].first) << "action " << i;
      ASSERT_EQ(result->actions[i].end_seq, expected.actions[i].second) << "action " << i;
    }
    EXPECT_EQ(result->unmatched_starts, expected.unmatched_starts);
    EXPECT_EQ(result->unmatched_ends, expected.unmatched_ends);
    EXPECT_EQ(out_of_order_ends(result->actions), expected.out_of_order);
    EXPECT_EQ(result->out_of_order, expected.out_of_order.size());
  }
}

TEST(AnalysisDurations, PairingInBatchesGivesWhatPairingTheWholeCaptureGives) {
  // What a streamed read does: the events handed over in batches of any size (some empty), with room for
  // fewer actions than come or none reserved; the result must be the one of the whole capture at once.
  std::mt19937_64 random(13);
  std::vector<AnalysisEvent> events;
  double time = 0;
  for (uint64_t seq = 0; seq < 200000; ++seq) {
    const uint64_t draw = random() % 100;
    const uint8_t probe = draw < 42 ? 1 : draw < 88 ? 2 : 3;
    time += static_cast<double>(random() % 1000) / 8;
    events.push_back(ev(seq, probe, static_cast<uint8_t>(random() % 4), time));
  }
  const Endpoint from{1, {}};
  for (const Endpoint& to : {Endpoint{2, {}}, Endpoint{2, 1}}) {
    for (PairRule rule : {PairRule::SameCode, PairRule::Fifo}) {
      SCOPED_TRACE(
          fmt::format("--to {} rule {}", endpoint_text(to), rule == PairRule::Fifo ? "fifo" : "same"));
      auto whole = pair_actions(events, from, to, 25.0, rule);
      ASSERT_TRUE(whole) << whole.error().message;
      auto pairer = ActionPairer::make(from, to, rule);
      ASSERT_TRUE(pairer) << pairer.error().message;
      if (to.code) pairer->reserve(10, 1000);
      for (size_t at = 0; at < events.size();) {
        const size_t count = std::min<size_t>(random() % 3000, events.size() - at);
        pairer->add(std::span<const AnalysisEvent>(events).subspan(at, count));
        at += count;
      }
      auto streamed = std::move(*pairer).finish(25.0);
      ASSERT_TRUE(streamed) << streamed.error().message;
      ASSERT_GT(whole->actions.size(), 10000u);
      ASSERT_EQ(streamed->actions.size(), whole->actions.size());
      for (size_t i = 0; i < whole->actions.size(); ++i) {
        const Action& a = streamed->actions[i];
        const Action& b = whole->actions[i];
        ASSERT_TRUE(a.start_seq == b.start_seq && a.end_seq == b.end_seq && a.start_code == b.start_code &&
                    a.end_code == b.end_code && a.out_of_order == b.out_of_order &&
                    a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.duration_ns == b.duration_ns &&
                    a.bound_ns == b.bound_ns)
            << "action " << i;
      }
      EXPECT_EQ(streamed->unmatched_starts, whole->unmatched_starts);
      EXPECT_EQ(streamed->unmatched_ends, whole->unmatched_ends);
      EXPECT_EQ(streamed->out_of_order, whole->out_of_order);
      EXPECT_EQ(streamed->pi_ns, 25.0);
      const Summary& x = streamed->summary;
      const Summary& y = whole->summary;
      EXPECT_TRUE(x.count == y.count && x.mean == y.mean && x.stddev == y.stddev && x.min == y.min &&
                  x.p50 == y.p50 && x.p99 == y.p99 && x.max == y.max);
    }
  }
}

TEST(AnalysisDurations, RefusesEndpointsThatSelectTheSameEvents) {
  EXPECT_FALSE(pair_actions(kEvents, {1, {}}, {1, {}}, 0));
  EXPECT_FALSE(pair_actions(kEvents, {1, 2}, {1, 2}, 0));
  EXPECT_TRUE(pair_actions(kEvents, {1, 1}, {1, 2}, 0));
}

// The ends a streamed pairing keeps (ActionPairer::Keep::Ends) make the actions pair_actions gives, field for
// field, whichever rule pairs them (seqs with gaps, starting high; ends that cross).
TEST(AnalysisDurations, EndsMakeTheActionsOfPairActions) {
  std::mt19937_64 random(17);
  std::vector<AnalysisEvent> events;
  double time = -3000;
  for (uint64_t k = 0; k < 50000; ++k) {
    const uint64_t draw = random() % 100;
    const uint8_t probe = draw < 42 ? 1 : draw < 88 ? 2 : 3;
    time += static_cast<double>(random() % 1000) / 8;
    events.push_back(ev(1000 + 3 * k + random() % 3, probe, static_cast<uint8_t>(random() % 4), time));
  }
  for (const Endpoint& to : {Endpoint{2, {}}, Endpoint{2, 1}}) {
    for (PairRule rule : {PairRule::SameCode, PairRule::Fifo}) {
      SCOPED_TRACE(
          fmt::format("--to {} rule {}", endpoint_text(to), rule == PairRule::Fifo ? "fifo" : "same"));
      auto paired = pair_actions(events, {1, {}}, to, 0, rule, Summarize::No);
      ASSERT_TRUE(paired) << paired.error().message;
      if (rule == PairRule::SameCode && !to.code) {
        ASSERT_GT(paired->out_of_order, 100u);  // actions that cross
      }
      // The ends a pairer keeps for an export that streams, fed in batches of uneven sizes.
      auto pairer = ActionPairer::make({1, {}}, to, rule, ActionPairer::Keep::Ends);
      ASSERT_TRUE(pairer);
      for (size_t begin = 0, size = 1; begin < events.size(); begin += size, size = size * 3 + 1)
        pairer->add(std::span(events).subspan(begin, std::min(size, events.size() - begin)));
      auto ends = std::move(*pairer).finish_ends();
      ASSERT_TRUE(ends) << ends.error().message;
      const ActionList held(paired->actions), streamed(*ends);
      ASSERT_EQ(held.size(), paired->actions.size());
      ASSERT_EQ(streamed.size(), paired->actions.size());
      for (size_t i = 0; i < streamed.size(); ++i) {
        const Action& b = paired->actions[i];
        const Action a = streamed[i];
        ASSERT_TRUE(a.start_seq == b.start_seq && a.end_seq == b.end_seq && a.start_code == b.start_code &&
                    a.end_code == b.end_code && a.start_ns == b.start_ns && a.end_ns == b.end_ns &&
                    a.duration_ns == b.duration_ns)
            << "action " << i;
        EXPECT_EQ(held[i].end_seq, b.end_seq);
      }
    }
  }
}

TEST(AnalysisFit, ParsesSizeOfCode) {
  auto sizes = parse_size_of_code("1=16,2=500,7=0.5");
  ASSERT_TRUE(sizes) << sizes.error().message;
  EXPECT_EQ(sizes->size(), 3u);
  EXPECT_DOUBLE_EQ(sizes->at(1), 16);
  EXPECT_DOUBLE_EQ(sizes->at(2), 500);
  EXPECT_DOUBLE_EQ(sizes->at(7), 0.5);
  for (const char* bad : {"", "1=16,", "x=1", "1=-2", "1=2,1=3", "256=1", "1", "1=", "=3", "1=2x"})
    EXPECT_FALSE(parse_size_of_code(bad)) << bad;
}

TEST(AnalysisFit, ExactCoefficientsAndHandComputedStandardErrors) {
  // duration = 1500 + 2.5 * size, each size twice with residuals +10 and -10.
  const std::vector<double> x = {16, 16, 500, 500, 1000, 1000};
  std::vector<double> y;
  for (size_t i = 0; i < x.size(); ++i) y.push_back(1500 + 2.5 * x[i] + (i % 2 ? -10 : 10));
  auto fit = fit_linear(x, y);
  ASSERT_TRUE(fit) << fit.error().message;
  EXPECT_NEAR(fit->intercept_ns, 1500, 1e-9);
  EXPECT_NEAR(fit->slope_ns, 2.5, 1e-12);
  EXPECT_NEAR(fit->residual_sumsq, 600, 1e-6);
  // s^2 = 600 / (6 - 2) = 150; Sxx = sum (x - 505.33)^2 = 968341.33; se(b) = sqrt(s^2 / Sxx),
  // se(a) = sqrt(s^2 (1/n + mean^2 / Sxx)).
  const double sxx =
      2 * (std::pow(16 - 1516.0 / 3, 2) + std::pow(500 - 1516.0 / 3, 2) + std::pow(1000 - 1516.0 / 3, 2));
  EXPECT_NEAR(fit->slope_stderr_ns, std::sqrt(150 / sxx), 1e-12);
  EXPECT_NEAR(fit->slope_stderr_ns, 0.0124460458, 1e-9);
  EXPECT_NEAR(fit->intercept_stderr_ns, 8.0347106415, 1e-8);
  EXPECT_NEAR(fit->r2, 0.99990087123, 1e-10);
  EXPECT_EQ(fit->points, 6u);
}

TEST(AnalysisFit, RecoversKnownCoefficientsFromNoisyActions) {
  std::mt19937 rng(42);
  std::normal_distribution<double> noise(0, 40);
  const std::map<uint8_t, double> sizes = {{1, 16}, {2, 500}, {3, 1000}, {4, 4000}};
  std::vector<Action> actions;
  for (int i = 0; i < 2000; ++i) {
    const uint8_t code = static_cast<uint8_t>(1 + i % 5);  // code 5 has no size: left out
    const double size = code == 5 ? 0 : sizes.at(code);
    actions.push_back({0, 0, code, code, false, 0, 0, 12000 + 0.8 * size + noise(rng)});
  }
  auto result = fit_durations(actions, sizes);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->actions_without_size, 400u);
  EXPECT_EQ(result->fit.points, 1600u);
  EXPECT_NEAR(result->fit.intercept_ns, 12000, 4 * result->fit.intercept_stderr_ns);
  EXPECT_NEAR(result->fit.slope_ns, 0.8, 4 * result->fit.slope_stderr_ns);
  EXPECT_LT(result->fit.slope_stderr_ns, 0.002);
  EXPECT_GT(result->fit.r2, 0.99);
  ASSERT_EQ(result->sizes.size(), 4u);
  EXPECT_DOUBLE_EQ(result->sizes[0].size, 16);
  EXPECT_EQ(result->sizes[0].duration.count, 400u);
  EXPECT_NEAR(result->sizes[3].duration.mean, 12000 + 0.8 * 4000, 10);
  EXPECT_NEAR(result->sizes[3].duration.stddev, 40, 5);
}

TEST(AnalysisFit, RefusesTooFewPointsOrOneSize) {
  EXPECT_FALSE(fit_linear(std::vector<double>{1, 2}, std::vector<double>{1, 2}));
  EXPECT_FALSE(fit_linear(std::vector<double>{5, 5, 5}, std::vector<double>{1, 2, 3}));
}

// The fit started before a report (the rest on a second thread) is the fit: the same line, per-size table,
// points and robust check, and the same refusals, given at the start.
TEST(AnalysisFit, StartedFitIsTheFitAndRefusesAtOnce) {
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0, 40);
  std::vector<Action> actions;
  for (int i = 0; i < 3000; ++i) {
    const uint8_t code = static_cast<uint8_t>(1 + i % 4);
    // Every 7th a stall far off the line, so that the robust check has something to say.
    const double duration = i % 7 == 0 ? 5e6 + 1000 * i : 12000 + 0.8 * 100 * code + noise(rng);
    actions.push_back({0, 0, code, code, false, 0, 0, duration});
  }
  const std::map<uint8_t, double> sizes = {{1, 100}, {2, 200}, {3, 300}, {9, 900}};  // code 4 has none
  for (FitMethod method : {FitMethod::Linear, FitMethod::Robust}) {
    auto whole = fit_durations(actions, sizes, method);
    ASSERT_TRUE(whole) << whole.error().message;
    auto started = start_fit_durations(actions, sizes, method);
    ASSERT_TRUE(started) << started.error().message;
    const FitResult& later = started->get();
    EXPECT_EQ(later.fit.intercept_ns, whole->fit.intercept_ns);
    EXPECT_EQ(later.fit.slope_ns, whole->fit.slope_ns);
    EXPECT_EQ(later.fit.r2, whole->fit.r2);
    EXPECT_EQ(later.fit.method, method);
    EXPECT_EQ(later.x, whole->x);
    EXPECT_EQ(later.y, whole->y);
    EXPECT_EQ(later.actions_without_size, 750u);
    ASSERT_EQ(later.sizes.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(later.sizes[i].duration.mean, whole->sizes[i].duration.mean);
    EXPECT_EQ(later.robust_differs.has_value(), whole->robust_differs.has_value());
    EXPECT_EQ(later.robust_differs.has_value(), method == FitMethod::Linear);
    EXPECT_EQ(&started->get(), &later);  // waited for once
  }
  // Two points; three with one size (two codes of the same size); and no sized action at all.
  const std::vector<Action> two(actions.begin(), actions.begin() + 2);
  std::vector<Action> one_size;
  for (const Action& action : actions)
    if (action.start_code <= 2) one_size.push_back(action);
  const std::map<uint8_t, double> same = {{1, 64}, {2, 64}};
  for (const auto& [points, codes] : {std::pair{two, sizes}, {one_size, same}, {actions, {{7, 1.0}}}}) {
    auto whole = fit_durations(points, codes);
    auto started = start_fit_durations(points, codes);
    ASSERT_FALSE(whole);
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().message, whole.error().message);
  }
  EXPECT_EQ(start_fit_durations(two, sizes).error().message, "a linear fit needs at least 3 points, got 2");
  EXPECT_EQ(start_fit_durations(one_size, same).error().message,
            "a linear fit needs at least two different sizes");
}
