// compare_command.cpp: `ett compare`: did the candidate captures' actions get slower than the baseline's?
// Text, JSON or Markdown (for a CI job summary); the exit status is the gate's decision.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "analysis/compare.h"
#include "analysis/input.h"
#include "commands.h"
#include "common/exit_codes.h"
#include "export/output_file.h"
#include "progress.h"

namespace ett::cli {

namespace {

using namespace ett::host;

// Exit statuses (docs/guide/regression-gate.md): scripts and CI jobs branch on them.
constexpr int kExitPass = kExitOk;
constexpr int kExitRegression = kExitUsage;
constexpr int kExitUndecided = kExitGateUndecided;
constexpr int kExitError = kExitCompareError;
// Bootstrap resamples, at most: each costs a pass over every action of both sides.
constexpr uint32_t kMaxResamples = 100'000;

struct CompareCommandOptions {
  std::string db = default_db_url();
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
  std::string format = "text";
  std::string output;
  bool force = false;
};

// The actions of one side: every trace paired on its own, durations pooled.
struct SideData {
  std::vector<int64_t> traces;
  std::vector<Action> actions;
  CompareSide all;
  std::map<double, CompareSide> by_size;
  std::vector<double> x, y;  // size and duration of each action with a size
};

Expected<SideData> load_side(Database& db, const std::vector<int64_t>& traces, const Endpoint& from,
                             const Endpoint& to, PairRule rule, const std::map<uint8_t, double>* sizes,
                             double& pi_ns, const std::optional<double>& pi_override, bool keep_stalled) {
  SideData side;
  side.traces = traces;
  for (int64_t id : traces) {
    ETT_TRY_ASSIGN(DurationsResult paired, stored_actions(db, id, from, to, rule, pi_override));
    pi_ns = std::max(pi_ns, paired.pi_ns);
    for (const Action& action : paired.actions) {
      auto size = sizes ? sizes->find(action.start_code) : std::map<uint8_t, double>::const_iterator{};
      const bool sized = sizes && size != sizes->end();
      // An action a stall touched may be late by up to the stall: left out, and counted.
      if (action.stall_ns > 0 && !keep_stalled) {
        ++side.all.stalled;
        if (sized) ++side.by_size[size->second].stalled;
        continue;
      }
      side.all.durations_ns.push_back(action.duration_ns);
      if (!sized) continue;
      side.by_size[size->second].durations_ns.push_back(action.duration_ns);
      side.x.push_back(size->second);
      side.y.push_back(action.duration_ns);
    }
    side.actions.insert(side.actions.end(), paired.actions.begin(), paired.actions.end());
  }
  return side;
}

std::string trace_list(const std::vector<int64_t>& traces) {
  std::string out;
  for (size_t i = 0; i < traces.size(); ++i) out += fmt::format("{}{}", i ? "," : "", traces[i]);
  return out;
}

using Json = nlohmann::ordered_json;

// One decimal, as the text shows; null when not finite.
Json num(double value) {
  return std::isfinite(value) ? Json(std::round(value * 10) / 10) : Json(nullptr);
}

// Six significant digits (a slope in ns per byte keeps its digits).
Json sig(double value) {
  return std::isfinite(value) ? Json(std::strtod(fmt::format("{:.6g}", value).c_str(), nullptr))
                              : Json(nullptr);
}

struct Report {
  const CompareCommandOptions& o;
  const SideData& baseline;
  const SideData& candidate;
  double pi_ns;
  const CompareResult& overall;
  std::vector<std::pair<double, CompareResult>> sizes;
  std::optional<FitComparison> fit;
};

Json stats_json(const CompareResult& r) {
  Json stats = Json::array();
  for (const StatComparison& s : r.stats)
    stats.push_back(Json{{"stat", compare_stat_name(s.stat)},
                         {"baseline_ns", num(s.baseline_ns)},
                         {"candidate_ns", num(s.candidate_ns)},
                         {"difference_ns", num(s.difference_ns)},
                         {"lower_ns", num(s.lower_ns)},
                         {"upper_ns", num(s.upper_ns)},
                         {"verdict", verdict_name(s.verdict)}});
  return stats;
}

Json gate_json(const GateResult& g) {
  const bool decided = g.decision != GateDecision::Undecided;
  return Json{{"decision", gate_decision_name(g.decision)},
              {"stat", compare_stat_name(g.stat)},
              {"limit_ns", decided ? num(g.limit_ns) : Json(nullptr)},
              {"lower_ns", decided ? num(g.lower_ns) : Json(nullptr)},
              {"reason", g.reason}};
}

std::string format_json(const Report& r) {
  Json doc{{"baseline", Json{{"traces", r.baseline.traces},
                             {"actions", r.overall.baseline.actions},
                             {"stalled", r.overall.baseline.stalled}}},
           {"candidate", Json{{"traces", r.candidate.traces},
                              {"actions", r.overall.candidate.actions},
                              {"stalled", r.overall.candidate.stalled}}},
           {"from", r.o.from},
           {"to", r.o.to},
           {"pi_ns", r.pi_ns > 0 ? num(r.pi_ns) : Json(nullptr)},
           {"confidence", r.o.confidence},
           {"resamples", r.o.resamples},
           {"seed", r.o.seed},
           {"stalled_actions", r.o.stalled},
           {"stats", stats_json(r.overall)},
           {"gate", gate_json(r.overall.gate)}};
  if (!r.sizes.empty()) {
    Json sizes = Json::array();
    for (const auto& [size, result] : r.sizes)
      sizes.push_back(Json{{"size", size},
                           {"baseline_actions", result.baseline.actions},
                           {"candidate_actions", result.candidate.actions},
                           {"stats", stats_json(result)}});
    doc["sizes"] = std::move(sizes);
  }
  if (r.fit) {
    Json parameters = Json::array();
    for (const ParameterComparison& p : r.fit->parameters)
      parameters.push_back(Json{{"name", p.name},
                                {"baseline", sig(p.baseline)},
                                {"candidate", sig(p.candidate)},
                                {"difference", sig(p.difference)},
                                {"lower", sig(p.lower)},
                                {"upper", sig(p.upper)}});
    doc["fit"] = Json{{"method", fit_method_name(r.fit->method)},
                      {"parameters", std::move(parameters)},
                      {"baseline_downweighted", r.fit->baseline.downweighted},
                      {"candidate_downweighted", r.fit->candidate.downweighted}};
  }
  return doc.dump() + "\n";
}

// The statistics as a table: text columns, or Markdown rows.
std::string stats_table(const CompareResult& r, bool markdown) {
  std::string out;
  if (markdown)
    out +=
        "| statistic | baseline | candidate | difference | bounds | verdict |\n| --- | ---: | ---: | ---: | "
        "---: | --- |\n";
  else
    out += fmt::format("{:<10} {:>16} {:>16} {:>16}  {:<30} {}\n", "statistic", "baseline", "candidate",
                       "difference", "bounds of the difference", "verdict");
  for (const StatComparison& s : r.stats) {
    const std::string bounds = fmt::format("[{:.1f}, {:.1f}] ns", s.lower_ns, s.upper_ns);
    if (markdown)
      out += fmt::format("| {} | {:.1f} ns | {:.1f} ns | {:+.1f} ns | {} | {} |\n", compare_stat_name(s.stat),
                         s.baseline_ns, s.candidate_ns, s.difference_ns, bounds, verdict_name(s.verdict));
    else
      out += fmt::format("{:<10} {:>13.1f} ns {:>13.1f} ns {:>+13.1f} ns  {:<30} {}\n",
                         compare_stat_name(s.stat), s.baseline_ns, s.candidate_ns, s.difference_ns, bounds,
                         verdict_name(s.verdict));
  }
  return out;
}

std::string format_text(const Report& r, bool markdown) {
  const CompareResult& o = r.overall;
  const char* heading = markdown ? "### " : "";
  std::string out = fmt::format("{}ett compare: actions {} -> {}\n\n", heading, r.o.from, r.o.to);
  out += fmt::format(
      "{}baseline: trace{} {}, {} actions{}\n", markdown ? "- " : "", r.baseline.traces.size() > 1 ? "s" : "",
      trace_list(r.baseline.traces), o.baseline.actions,
      o.baseline.stalled ? fmt::format(" ({} touching a stall left out)", o.baseline.stalled) : "");
  out += fmt::format(
      "{}candidate: trace{} {}, {} actions{}\n", markdown ? "- " : "",
      r.candidate.traces.size() > 1 ? "s" : "", trace_list(r.candidate.traces), o.candidate.actions,
      o.candidate.stalled ? fmt::format(" ({} touching a stall left out)", o.candidate.stalled) : "");
  out += fmt::format("{}precision bound pi: {}\n", markdown ? "- " : "",
                     r.pi_ns > 0 ? fmt::format("{:.1f} ns (differences within ±pi are no change)", r.pi_ns)
                                 : "unknown (no mode=calibrate capture of this machine, no --pi-ns)");
  if (r.o.stalled == "keep")
    out += fmt::format("{}actions a stall touched: kept (--stalled keep)\n", markdown ? "- " : "");
  out += fmt::format("{}bootstrap: {} resamples, seed {}; each bound holds with {:.3g} % confidence\n\n",
                     markdown ? "- " : "", r.o.resamples, r.o.seed, r.o.confidence * 100);
  if (!o.stats.empty()) out += stats_table(o, markdown);
  for (const auto& [size, result] : r.sizes) {
    out += fmt::format("\n{}size {} ({} baseline, {} candidate actions)\n", markdown ? "#### " : "", size,
                       result.baseline.actions, result.candidate.actions);
    out += result.stats.empty() ? "  " + result.gate.reason + "\n" : stats_table(result, markdown);
  }
  if (r.fit) {
    out += fmt::format("\n{}{} fit duration = a + b x size\n", markdown ? "#### " : "",
                       r.fit->method == FitMethod::Robust ? "robust" : "least-squares");
    for (const ParameterComparison& p : r.fit->parameters)
      out += fmt::format(
          "{}{}: baseline {:.6g}, candidate {:.6g}, difference {:+.6g} ns{}, bounds [{:.6g}, {:.6g}]\n",
          markdown ? "- " : "  ", p.name[0] == 'i' ? "a (intercept)" : "b (slope)", p.baseline, p.candidate,
          p.difference, p.name[0] == 's' ? "/size unit" : "", p.lower, p.upper);
  }
  const GateResult& g = o.gate;
  std::string decision = gate_decision_name(g.decision);
  for (char& c : decision) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out += fmt::format("\n{}gate ({}, --max-regression {}): {}{}{}: {}\n", markdown ? "" : "",
                     compare_stat_name(g.stat), r.o.max_regression, markdown ? "**" : "", decision,
                     markdown ? "**" : "", g.reason);
  return out;
}

int run_compare(const CompareCommandOptions& o) {
  auto fail = [](const HostError& error) {
    report(error);
    return kExitError;
  };
  if (o.baseline.empty() || o.candidate.empty())
    return fail({ErrorKind::Usage, "give --baseline TRACE[,TRACE...] and --candidate TRACE[,TRACE...]"});
  // Each trace once in a list: a trace counted twice weighs its actions twice. (The same trace as baseline
  // and candidate is a fair check of the gate: nothing to report.)
  for (const auto& [option, ids] :
       {std::pair{"--baseline", &o.baseline}, std::pair{"--candidate", &o.candidate}}) {
    std::set<int64_t> seen;
    for (const int64_t id : *ids) {
      if (id <= 0)
        return fail({ErrorKind::Usage, fmt::format("{}: trace ids are numbers >= 1, not {}", option, id)});
      if (!seen.insert(id).second)
        return fail({ErrorKind::Usage, fmt::format("{}: trace {} is listed twice", option, id)});
    }
  }
  if (o.resamples > kMaxResamples)
    return fail({ErrorKind::Usage,
                 fmt::format("--resamples {}: at most {} (the bounds move by less than their own rounding "
                             "past a few thousand)",
                             o.resamples, kMaxResamples)});
  if (o.format != "text" && o.format != "json" && o.format != "markdown")
    return fail({ErrorKind::Usage, "--format '" + o.format + "': expected text, json or markdown"});
  if (o.pi_ns && !(*o.pi_ns >= 0 && std::isfinite(*o.pi_ns)))
    return fail({ErrorKind::Usage, "--pi-ns must be a finite time >= 0"});
  auto from = parse_endpoint(o.from);
  if (!from) return fail(from.error());
  auto to = parse_endpoint(o.to);
  if (!to) return fail(to.error());
  auto rule = parse_pair_rule(o.pair);
  if (!rule) return fail(rule.error());
  auto method = parse_fit_method(o.fit);
  if (!method) return fail(method.error());
  CompareOptions options;
  auto stat = parse_compare_stat(o.stat);
  if (!stat) return fail(stat.error());
  options.gate_stat = *stat;
  auto limit = parse_regression_limit(o.max_regression);
  if (!limit) return fail(limit.error());
  options.limit = *limit;
  options.confidence = o.confidence;
  options.resamples = o.resamples;
  options.seed = o.seed;
  options.min_actions = o.min_actions;
  std::optional<std::map<uint8_t, double>> sizes;
  if (!o.size_of_code.empty()) {
    auto parsed = parse_size_of_code(o.size_of_code);
    if (!parsed) return fail(parsed.error());
    sizes = *parsed;
  }
  auto exists = require_database(o.db);
  if (!exists) return fail(exists.error());
  if (auto free = refuse_existing_output(o.output, o.force); !free) return fail(free.error());
  auto db = open_database(o.db);
  if (!db) return fail(db.error());
  double pi_ns = 0;
  const std::map<uint8_t, double>* size_map = sizes ? &*sizes : nullptr;
  if (o.stalled != "drop" && o.stalled != "keep")
    return fail({ErrorKind::Usage, "--stalled '" + o.stalled + "': expected drop or keep"});
  const bool keep = o.stalled == "keep";
  auto baseline = load_side(**db, o.baseline, *from, *to, *rule, size_map, pi_ns, o.pi_ns, keep);
  if (!baseline) return fail(baseline.error());
  auto candidate = load_side(**db, o.candidate, *from, *to, *rule, size_map, pi_ns, o.pi_ns, keep);
  if (!candidate) return fail(candidate.error());
  options.pi_ns = pi_ns;

  // A large bootstrap takes seconds to minutes: a bar counts its resamples (each comparison's in turn).
  Progress bar("compare");
  bar.phase(fmt::format("bootstrap: {} resamples", o.resamples));
  options.on_resample = [&bar, total = o.resamples](uint32_t done) {
    if (done % 64 == 0 || done == total) bar.count(done, total, "resamples");
  };
  auto overall = compare_durations(baseline->all, candidate->all, options);
  if (!overall) return fail(overall.error());
  Report out{o, *baseline, *candidate, pi_ns, *overall, {}, std::nullopt};
  if (sizes) {
    CompareOptions per_size = options;
    per_size.min_actions = std::min<size_t>(options.min_actions, 3);
    for (const auto& [size, side] : baseline->by_size) {
      auto other = candidate->by_size.find(size);
      if (other == candidate->by_size.end()) continue;
      auto compared = compare_durations(side, other->second, per_size);
      if (!compared) return fail(compared.error());
      out.sizes.emplace_back(size, *compared);
    }
    auto fitted = compare_fits(baseline->x, baseline->y, candidate->x, candidate->y, *method, options);
    if (!fitted) return fail(fitted.error());
    out.fit = std::move(*fitted);
  }
  bar.erase();
  const std::string text = o.format == "json" ? format_json(out) : format_text(out, o.format == "markdown");
  auto written = write_output(o.output, text, o.force);
  if (!written) return fail(written.error());
  switch (overall->gate.decision) {
    case GateDecision::Pass:
      return kExitPass;
    case GateDecision::Regression:
      return kExitRegression;
    case GateDecision::Undecided:
      return kExitUndecided;
  }
  return kExitError;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compare the durations of the same actions in baseline and candidate captures (bootstrap bounds per "
      "statistic) and gate on a regression: exit 0 not slower, 1 slower, 7 cannot decide, 8 error");
  sub->add_option("--baseline", o->baseline, "Baseline trace ids (repeated trials): T1,T2,...")
      ->type_name("ID")
      ->delimiter(',')
      ->required();
  sub->add_option("--candidate", o->candidate, "Candidate trace ids: T1,T2,...")
      ->type_name("ID")
      ->delimiter(',')
      ->required();
  sub->add_option("--from", o->from, "Start events: PROBE or PROBE:CODE")->type_name("P[:C]")->required();
  sub->add_option("--to", o->to,
                  "End events: PROBE or PROBE:CODE (without a code: the same code as the start)")
      ->type_name("P[:C]")
      ->required();
  add_pair_option(sub, o->pair);
  sub->add_option(
         "--size-of-code", o->size_of_code,
         "The size each start code stands for (\"1=16,2=500\"): compare per size and the fitted line")
      ->type_name("C=S,...");
  sub->add_option("--fit", o->fit, "linear or robust: how each side's line is fitted (with --size-of-code)")
      ->type_name("linear|robust")
      ->capture_default_str();
  sub->add_option("--stat", o->stat, "The statistic the gate judges: median, p90, p99 or mean")
      ->type_name("median|p90|p99|mean")
      ->capture_default_str();
  sub->add_option(
         "--max-regression", o->max_regression,
         "The slowdown allowed: a percentage of the baseline's statistic (5%) or a time (250ns, 3us); "
         "never below pi")
      ->type_name("LIMIT")
      ->capture_default_str();
  sub->add_option("--confidence", o->confidence, "Confidence of each bound (0.5-1)")
      ->type_name("LEVEL")
      ->capture_default_str()
      ->check(positive_number());
  sub->add_option("--resamples", o->resamples, "Bootstrap resamples (100 to 100000)")
      ->type_name("N")
      ->capture_default_str()
      ->check(non_negative_number());
  sub->add_option("--seed", o->seed, "Seed of the bootstrap's random numbers (same seed, same result)")
      ->type_name("N")
      ->capture_default_str();
  sub->add_option("--min-actions", o->min_actions,
                  "Fewer usable actions on a side than this: the gate cannot decide (exit 7)")
      ->type_name("N")
      ->capture_default_str()
      ->check(non_negative_number());
  sub->add_option("--pi-ns", o->pi_ns,
                  "Precision bound (default: the largest stored one of the traces' machines)")
      ->type_name("NS");
  sub->add_option(
         "--stalled", o->stalled,
         "drop: leave out (and count) the actions a stall of the capture touched; keep: compare them too "
         "(a statistic like the median stays robust to a few)")
      ->type_name("drop|keep")
      ->capture_default_str();
  sub->add_option("--format", o->format, "text, json or markdown (a CI job summary)")
      ->type_name("text|json|markdown")
      ->capture_default_str();
  sub->add_option("-o,--output", o->output, "Output file (default: standard output)")->type_name("FILE");
  sub->add_flag("--force", o->force, "Overwrite an existing output file");
  add_db_option(sub, o->db);
  return {sub, [o] { return run_compare(*o); }};
}

}  // namespace ett::cli
