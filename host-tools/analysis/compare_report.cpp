// compare_report.cpp: `ett compare` as a whole (compare_report.h).
#include "analysis/compare_report.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/input.h"

namespace ett::host {

namespace {

Expected<CompareSideData> load_side(Database& db, const std::vector<int64_t>& traces, const Endpoint& from,
                                    const Endpoint& to, PairRule rule, const std::map<uint8_t, double>* sizes,
                                    double& pi_ns, const std::optional<double>& pi_override,
                                    bool keep_stalled) {
  CompareSideData side;
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

std::string compare_json_text(const CompareReport& r) {
  Json doc{{"baseline", Json{{"traces", r.baseline.traces},
                             {"actions", r.overall.baseline.actions},
                             {"stalled", r.overall.baseline.stalled}}},
           {"candidate", Json{{"traces", r.candidate.traces},
                              {"actions", r.overall.candidate.actions},
                              {"stalled", r.overall.candidate.stalled}}},
           {"from", r.request.from},
           {"to", r.request.to},
           {"pi_ns", r.pi_ns > 0 ? num(r.pi_ns) : Json(nullptr)},
           {"confidence", r.request.confidence},
           {"resamples", r.request.resamples},
           {"seed", r.request.seed},
           {"stalled_actions", r.request.stalled},
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

std::string compare_text_of(const CompareReport& r, bool markdown) {
  const CompareResult& o = r.overall;
  const char* heading = markdown ? "### " : "";
  std::string out = fmt::format("{}ett compare: actions {} -> {}\n\n", heading, r.request.from, r.request.to);
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
  if (r.request.stalled == "keep")
    out += fmt::format("{}actions a stall touched: kept (--stalled keep)\n", markdown ? "- " : "");
  out += fmt::format("{}bootstrap: {} resamples, seed {}; each bound holds with {:.3g} % confidence\n\n",
                     markdown ? "- " : "", r.request.resamples, r.request.seed, r.request.confidence * 100);
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
                     compare_stat_name(g.stat), r.request.max_regression, markdown ? "**" : "", decision,
                     markdown ? "**" : "", g.reason);
  return out;
}
}  // namespace

std::string compare_json(const CompareReport& report) {
  return compare_json_text(report);
}
std::string compare_text(const CompareReport& report, bool markdown) {
  return compare_text_of(report, markdown);
}

Status check_compare_request(const CompareRequest& o) {
  if (o.baseline.empty() || o.candidate.empty())
    return make_error(ErrorKind::Usage, "give --baseline TRACE[,TRACE...] and --candidate TRACE[,TRACE...]");
  // Each trace once in a list: a trace counted twice weighs its actions twice. (The same trace as baseline
  // and candidate is a fair check of the gate: nothing to report.)
  for (const auto& [option, ids] :
       {std::pair{"--baseline", &o.baseline}, std::pair{"--candidate", &o.candidate}}) {
    std::set<int64_t> seen;
    for (const int64_t id : *ids) {
      if (id <= 0)
        return make_error(ErrorKind::Usage,
                          fmt::format("{}: trace ids are numbers >= 1, not {}", option, id));
      if (!seen.insert(id).second)
        return make_error(ErrorKind::Usage, fmt::format("{}: trace {} is listed twice", option, id));
    }
  }
  if (o.resamples > kMaxCompareResamples)
    return make_error(
        ErrorKind::Usage,
        fmt::format("--resamples {}: at most {} (the bounds move by less than their own rounding "
                    "past a few thousand)",
                    o.resamples, kMaxCompareResamples));
  if (o.pi_ns && !(*o.pi_ns >= 0 && std::isfinite(*o.pi_ns)))
    return make_error(ErrorKind::Usage, "--pi-ns must be a finite time >= 0");
  ETT_TRY(parse_endpoint(o.from));
  ETT_TRY(parse_endpoint(o.to));
  ETT_TRY(parse_pair_rule(o.pair));
  ETT_TRY(parse_fit_method(o.fit));
  ETT_TRY(parse_compare_stat(o.stat));
  ETT_TRY(parse_regression_limit(o.max_regression));
  if (!o.size_of_code.empty()) ETT_TRY(parse_size_of_code(o.size_of_code));
  if (o.stalled != "drop" && o.stalled != "keep")
    return make_error(ErrorKind::Usage, "--stalled '" + o.stalled + "': expected drop or keep");
  return {};
}

Expected<CompareReport> run_compare_request(Database& db, const CompareRequest& o,
                                            const std::function<void(uint32_t done)>& on_resample) {
  ETT_TRY(check_compare_request(o));
  ETT_TRY_ASSIGN(const Endpoint from, parse_endpoint(o.from));
  ETT_TRY_ASSIGN(const Endpoint to, parse_endpoint(o.to));
  ETT_TRY_ASSIGN(const PairRule rule, parse_pair_rule(o.pair));
  ETT_TRY_ASSIGN(const FitMethod method, parse_fit_method(o.fit));
  CompareOptions options;
  ETT_TRY_ASSIGN(options.gate_stat, parse_compare_stat(o.stat));
  ETT_TRY_ASSIGN(options.limit, parse_regression_limit(o.max_regression));
  options.confidence = o.confidence;
  options.resamples = o.resamples;
  options.seed = o.seed;
  options.min_actions = o.min_actions;
  options.on_resample = on_resample;
  std::optional<std::map<uint8_t, double>> sizes;
  if (!o.size_of_code.empty()) {
    ETT_TRY_ASSIGN(auto parsed, parse_size_of_code(o.size_of_code));
    sizes = std::move(parsed);
  }
  CompareReport report;
  report.request = o;
  const std::map<uint8_t, double>* size_map = sizes ? &*sizes : nullptr;
  const bool keep = o.stalled == "keep";
  ETT_TRY_ASSIGN(report.baseline,
                 load_side(db, o.baseline, from, to, rule, size_map, report.pi_ns, o.pi_ns, keep));
  ETT_TRY_ASSIGN(report.candidate,
                 load_side(db, o.candidate, from, to, rule, size_map, report.pi_ns, o.pi_ns, keep));
  options.pi_ns = report.pi_ns;
  ETT_TRY_ASSIGN(report.overall, compare_durations(report.baseline.all, report.candidate.all, options));
  if (sizes) {
    CompareOptions per_size = options;
    per_size.min_actions = std::min<size_t>(options.min_actions, 3);
    for (const auto& [size, side] : report.baseline.by_size) {
      auto other = report.candidate.by_size.find(size);
      if (other == report.candidate.by_size.end()) continue;
      ETT_TRY_ASSIGN(CompareResult compared, compare_durations(side, other->second, per_size));
      report.sizes.emplace_back(size, std::move(compared));
    }
    ETT_TRY_ASSIGN(FitComparison fitted,
                   compare_fits(report.baseline.x, report.baseline.y, report.candidate.x, report.candidate.y,
                                method, options));
    report.fit = std::move(fitted);
  }
  return report;
}

}  // namespace ett::host
