// analyses.cpp: what `ett analyze precision|durations|intervals|histogram|pps|align` computes for a stored
// trace, through the same library calls and the same JSON writer (analysis/output.cpp), so that the Python
// package's results are the document `ett analyze ... --format json` prints (ett/__init__.py parses it).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "analysis/compare_report.h"
#include "analysis/input.h"
#include "analysis/output.h"
#include "analysis/pps_align.h"
#include "common/exit_codes.h"
#include "python_ett.h"

namespace ett::python {

namespace {

using namespace ett::host;

// The library's work runs without the GIL: another Python thread goes on meanwhile.
template <typename F>
auto unlocked(F&& work) {
  py::gil_scoped_release released;
  return work();
}

std::string precision_json(StoredTrace& trace, int bins, bool store) {
  PrecisionOptions options;
  options.bins = bins;
  const PrecisionResult result =
      take(unlocked([&] { return stored_precision(trace.db(), trace.capture(), options); }));
  if (store && result.source == PrecisionSource::Calibrate)
    check(store_precision(trace.db(), trace.capture().info.trace_id, result));
  return format_precision(result, OutputFormat::Json);
}

std::string durations_json(StoredTrace& trace, const std::string& from_text, const std::string& to_text,
                           const std::string& pair, std::optional<double> pi_ns,
                           const std::string& size_of_code, const std::string& fit) {
  const Endpoint from = take(parse_endpoint(from_text));
  const Endpoint to = take(parse_endpoint(to_text));
  const PairRule rule = take(parse_pair_rule(pair));
  std::optional<std::map<uint8_t, double>> sizes;
  FitMethod method = FitMethod::Linear;
  if (!fit.empty()) {
    method = take(parse_fit_method(fit));
    if (size_of_code.empty())
      throw Failure(HostError{ErrorKind::Usage, "--fit " + fit + " needs --size-of-code CODE=SIZE,..."});
  }
  if (!size_of_code.empty()) sizes = take(parse_size_of_code(size_of_code));
  if (pi_ns && !(*pi_ns >= 0)) throw Failure(HostError{ErrorKind::Usage, "pi_ns: not a non-negative number"});
  const CaptureInfo& info = trace.capture().info;
  const DurationsResult result =
      take(unlocked([&] { return trace_actions(trace.db(), info, from, to, rule, pi_ns); }));
  std::optional<PendingFit> pending;
  if (sizes) pending.emplace(take(start_fit_durations(result.actions, *sizes, method)));
  return unlocked(
      [&] { return format_durations(result, pending ? &*pending : nullptr, OutputFormat::Json); });
}

std::string intervals_json(StoredTrace& trace, std::optional<double> tau_ns) {
  const Capture& capture = trace.capture();
  check(require_events(trace.db(), capture.info));
  double tau = 0;
  int64_t tau_trace = 0;
  if (tau_ns) {
    if (!(*tau_ns >= 0)) throw Failure(HostError{ErrorKind::Usage, "tau_ns: not a non-negative number"});
    tau = *tau_ns;
  } else if (const auto stored = take(find_precision(trace.db(), capture.info.trace_id)); stored) {
    tau = stored->tau_ns;
    tau_trace = stored->trace_id;
  }
  IntervalsResult result = take(unlocked([&] { return stored_intervals(trace.db(), capture, tau); }));
  result.tau_trace_id = tau_trace;
  return format_intervals(result, OutputFormat::Json);
}

std::string histogram_json(StoredTrace& trace, const std::string& by, const std::string& match,
                           uint64_t max_buckets) {
  const HistogramSpec spec = take(parse_histogram_by(by));
  std::optional<TritPattern> filter;
  if (!match.empty()) filter = take(parse_trits(match));
  const CaptureInfo& info = trace.capture().info;
  if (spec.key == HistogramKey::Time) {
    // Buckets from the first event to the last, empty ones included: refused past the cap before any is
    // counted (a narrow bucket on a long capture would be hundreds of millions of rows).
    const auto span = take(first_and_last_event_ns(trace.db(), info));
    if (!span) check(no_events(info));
    const double buckets =
        std::floor(span->last_ns / spec.bucket_ns) - std::floor(span->first_ns / spec.bucket_ns) + 1;
    if (buckets > static_cast<double>(max_buckets))
      throw Failure(
          HostError{ErrorKind::Usage,
                    fmt::format("by={} makes {:.0f} buckets from the first event to the last, more than "
                                "max_buckets={}",
                                by, buckets, max_buckets)});
  }
  const HistogramResult result =
      take(unlocked([&] { return stored_histogram(trace.db(), info, spec, filter); }));
  return format_histogram(result, OutputFormat::Json);
}

std::string pps_json(StoredTrace& trace, const std::string& line, bool falling,
                     const std::string& utc_at_edge, bool store) {
  PpsOptions options;
  options.line = take(pps_line(trace.capture().info, line));
  options.rising = !falling;
  if (!utc_at_edge.empty()) options.utc_at_pulse = take(parse_utc_at_edge(utc_at_edge));
  const int64_t id = trace.capture().info.trace_id;
  Capture capture = take(unlocked([&] { return load_capture(trace.db(), id); }));
  if (capture.events.empty()) check(no_events(capture.info));
  options.captured_at_unix = capture.info.captured_at_unix;
  const PpsResult result = take(analyze_pps(capture, options));
  if (store) check(store_pps(trace.db(), id, result));
  return format_pps(result, OutputFormat::Json);
}

// `ett analyze align`: by a shared sync line (sync = P), or through each trace's stored PPS mapping (sync =
// 0, pps).
std::string align_json(const std::string& url, const std::vector<int64_t>& traces, int sync, bool pps) {
  if (traces.size() < 2)
    throw Failure(
        HostError{ErrorKind::Usage,
                  "align needs two or more traces: --traces REF,T2,... (the first is the reference)"});
  if (pps && sync != 0) throw Failure(HostError{ErrorKind::Usage, "align: give --sync P or --pps, not both"});
  if (!pps && sync == 0)
    throw Failure(HostError{ErrorKind::Usage,
                            "align needs --sync P (a shared sync line) or --pps (stored UTC mappings)"});
  const auto db = take(open_database(url));
  std::vector<Capture> captures;
  std::vector<PpsResult> mappings;
  for (int64_t id : traces) {
    take(resolve_trace(*db, id));
    Capture capture = take(unlocked([&] { return load_capture(*db, id); }));
    if (pps) {
      std::optional<PpsResult> mapping = take(find_pps(*db, id));
      if (!mapping)
        throw Failure(HostError{
            ErrorKind::Usage, fmt::format("{} has no UTC mapping: run `ett analyze pps --trace {}` first (it "
                                          "needs a PPS line in the capture)",
                                          capture.info.name, id)});
      mappings.push_back(std::move(*mapping));
    } else {
      if (capture.events.empty())
        throw Failure(HostError{ErrorKind::Usage, capture.info.name + " has no events: nothing to align"});
      check(check_endpoint(capture.info, {static_cast<uint8_t>(sync), {}}, "--sync"));
    }
    captures.push_back(std::move(capture));
  }
  if (pps) {
    const PpsAlignResult result = take(align_by_pps(captures, mappings));
    return format_pps_align(result, captures, mappings, traces, OutputFormat::Json);
  }
  const AlignResult result =
      take(unlocked([&] { return align_captures(captures, static_cast<uint8_t>(sync), true); }));
  return unlocked([&] { return format_align(result, captures, traces, OutputFormat::Json); });
}

// `ett compare`: its errors, all of them, end with its own exit status (8), as the command's do.
std::string compare_json_of(const std::string& url, const CompareRequest& request) {
  auto fail = [](const HostError& error) { return Failure(kExitCompareError, error.message); };
  if (auto checked = check_compare_request(request); !checked) throw fail(checked.error());
  auto db = open_database(url);
  if (!db) throw fail(db.error());
  auto report = unlocked([&] { return run_compare_request(**db, request); });
  if (!report) throw fail(report.error());
  return compare_json(*report);
}

}  // namespace

void bind_analyses(py::module_& m) {
  m.def("precision_json", &precision_json, py::arg("trace"), py::arg("bins") = 40, py::arg("store") = true);
  m.def("durations_json", &durations_json, py::arg("trace"), py::arg("from_"), py::arg("to"),
        py::arg("pair") = "same-code", py::arg("pi_ns") = py::none(), py::arg("size_of_code") = "",
        py::arg("fit") = "");
  m.def("intervals_json", &intervals_json, py::arg("trace"), py::arg("tau_ns") = py::none());
  m.def("histogram_json", &histogram_json, py::arg("trace"), py::arg("by") = "code", py::arg("match") = "",
        py::arg("max_buckets") = 100'000);
  m.def("pps_json", &pps_json, py::arg("trace"), py::arg("line") = "D7", py::arg("falling") = false,
        py::arg("utc_at_edge") = "", py::arg("store") = true);
  m.def(
      "compare_json",
      [](const std::string& url, std::vector<int64_t> baseline, std::vector<int64_t> candidate,
         const std::string& from, const std::string& to, const std::string& pair,
         const std::string& size_of_code, const std::string& fit, const std::string& stat,
         const std::string& max_regression, double confidence, uint32_t resamples, uint64_t seed,
         size_t min_actions, std::optional<double> pi_ns, const std::string& stalled) {
        CompareRequest request;
        request.baseline = std::move(baseline);
        request.candidate = std::move(candidate);
        request.from = from;
        request.to = to;
        request.pair = pair;
        request.size_of_code = size_of_code;
        request.fit = fit;
        request.stat = stat;
        request.max_regression = max_regression;
        request.confidence = confidence;
        request.resamples = resamples;
        request.seed = seed;
        request.min_actions = min_actions;
        request.pi_ns = pi_ns;
        request.stalled = stalled;
        return compare_json_of(url, request);
      },
      py::arg("url"), py::arg("baseline"), py::arg("candidate"), py::arg("from_"), py::arg("to"),
      py::arg("pair"), py::arg("size_of_code"), py::arg("fit"), py::arg("stat"), py::arg("max_regression"),
      py::arg("confidence"), py::arg("resamples"), py::arg("seed"), py::arg("min_actions"), py::arg("pi_ns"),
      py::arg("stalled"));
  m.def("align_json", &align_json, py::arg("url"), py::arg("traces"), py::arg("sync") = 0,
        py::arg("pps") = false);
}

}  // namespace ett::python
