// compare_report.h: `ett compare` as a whole: the actions of the baseline and candidate traces of a database
// paired and pooled per side, compared (compare.h) overall, per size and by their fitted lines, and the
// result as the command's JSON, text or Markdown. The command (cli/compare_command.cpp) and the Python
// package run it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare.h"
#include "db/database.h"

namespace ett::host {

// Bootstrap resamples, at most: each costs a pass over every action of both sides.
inline constexpr uint32_t kMaxCompareResamples = 100'000;

// What `ett compare` is asked, its options as given.
struct CompareRequest {
  std::vector<int64_t> baseline, candidate;
  std::string from, to, pair = "same-code";
  std::string size_of_code, fit = "linear";
  std::string stat = "median", max_regression = "5%";
  double confidence = 0.95;
  uint32_t resamples = 2000;
  uint64_t seed = 1;
  size_t min_actions = 20;
  std::optional<double> pi_ns;
  std::string stalled = "drop";  // drop | keep: the actions a stall touched
};

// The actions of one side: every trace paired on its own, durations pooled.
struct CompareSideData {
  std::vector<int64_t> traces;
  CompareSide all;
  std::map<double, CompareSide> by_size;
  std::vector<double> x, y;  // size and duration of each action with a size
};

struct CompareReport {
  CompareRequest request;
  CompareSideData baseline;
  CompareSideData candidate;
  double pi_ns = 0;
  CompareResult overall;
  std::vector<std::pair<double, CompareResult>> sizes;
  std::optional<FitComparison> fit;
};

// The request's own checks (trace lists, resamples, endpoints, rules, limits, sizes), before any database.
Status check_compare_request(const CompareRequest& request);
// Runs a checked request on `db`; `on_resample` (may be empty) is called as each comparison's bootstrap goes.
Expected<CompareReport> run_compare_request(Database& db, const CompareRequest& request,
                                            const std::function<void(uint32_t done)>& on_resample = {});

// `ett compare --format json`: one line.
std::string compare_json(const CompareReport& report);
// Text, or Markdown for a CI job summary.
std::string compare_text(const CompareReport& report, bool markdown);

}  // namespace ett::host
