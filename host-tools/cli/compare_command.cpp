// compare_command.cpp: `ett compare`: did the candidate captures' actions get slower than the baseline's?
// Text, JSON or Markdown (for a CI job summary); the exit status is the gate's decision.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "analysis/compare_report.h"
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

struct CompareCommandOptions : CompareRequest {
  std::string db = default_db_url();
  std::string format = "text";
  std::string output;
  bool force = false;
};

int run_compare(const CompareCommandOptions& o) {
  auto fail = [](const HostError& error) {
    report(error);
    return kExitError;
  };
  if (auto checked = check_compare_request(o); !checked) return fail(checked.error());
  if (o.format != "text" && o.format != "json" && o.format != "markdown")
    return fail({ErrorKind::Usage, "--format '" + o.format + "': expected text, json or markdown"});
  auto exists = require_database(o.db);
  if (!exists) return fail(exists.error());
  if (auto free = refuse_existing_output(o.output, o.force); !free) return fail(free.error());
  auto db = open_database(o.db);
  if (!db) return fail(db.error());
  // A large bootstrap takes seconds to minutes: a bar counts its resamples (each comparison's in turn).
  Progress bar("compare");
  bar.phase(fmt::format("bootstrap: {} resamples", o.resamples));
  auto out = run_compare_request(**db, o, [&bar, total = o.resamples](uint32_t done) {
    if (done % 64 == 0 || done == total) bar.count(done, total, "resamples");
  });
  if (!out) return fail(out.error());
  bar.erase();
  const std::string text =
      o.format == "json" ? compare_json(*out) : compare_text(*out, o.format == "markdown");
  auto written = write_output(o.output, text, o.force);
  if (!written) return fail(written.error());
  switch (out->overall.gate.decision) {
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
