// fidelity.cpp: pairs captured events with the injector's writes through the guest/host TSC offset.
#include "harness/fidelity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "common/tsc_time.h"

namespace ett::host {

namespace {

// How many sends on a probe the pairing passes over for one captured code (ahead in the first pass, back from
// the stamp in the pairing by time): a stall merges at most the writes of a few milliseconds; beyond that the
// captured event is called unexpected rather than explained by a huge loss.
constexpr size_t kLookahead = size_t{1} << 16;

constexpr size_t kProbes = 9;         // probes are 1..8
constexpr size_t kSample = 4096;      // events in the first, wide consensus sweep
constexpr int64_t kBandTicks = 4096;  // the second sweep's margin around the first one's region

// Indices into `sent`, per probe, in send order.
std::vector<std::vector<size_t>> by_probe(std::span<const SentEvent> sent) {
  std::vector<std::vector<size_t>> lists(kProbes);
  for (size_t i = 0; i < sent.size(); ++i)
    if (sent[i].probe < kProbes) lists[sent[i].probe].push_back(i);
  return lists;
}

// Without an upper bound on the offset: a first pass by codes alone, each captured event taking the next send
// on its probe with its code. Right for runs without losses; after merged writes its pairs are too early
// (the first of several sends with that code instead of the one the poll saw), so the offset comes out too
// small and the time pairing below calls those events unexpected. The runner always gives the bound.
std::optional<int64_t> estimate_offset(std::span<const SentEvent> sent, std::span<const Event> captured,
                                       const std::vector<std::vector<size_t>>& lists) {
  std::vector<size_t> next(kProbes, 0);
  std::optional<int64_t> offset;
  for (const Event& event : captured) {
    if (event.probe >= kProbes) continue;
    const std::vector<size_t>& list = lists[event.probe];
    const size_t end = std::min(list.size(), next[event.probe] + kLookahead);
    for (size_t k = next[event.probe]; k < end; ++k) {
      const SentEvent& send = sent[list[k]];
      if (send.code != event.code) continue;
      const int64_t candidate = static_cast<int64_t>(send.host_tsc_before - event.tsc);
      offset = offset ? std::max(*offset, candidate) : candidate;
      next[event.probe] = k + 1;
      break;
    }
  }
  return offset;
}

// With bounds on the offset: the offsets that the most captured events agree with. For one event, the offsets
// under which it pairs are the intervals [h_k - g, h_next - g) of the sends k on its probe with its code (k
// is then the latest send before the stamp); a sweep over the intervals of every `stride`-th event finds the
// region [from, to) covered most often. The true offset lies in every event's intervals.
std::optional<std::pair<int64_t, int64_t>> offset_by_consensus(std::span<const SentEvent> sent,
                                                               std::span<const Event> captured,
                                                               const std::vector<std::vector<size_t>>& lists,
                                                               int64_t low, int64_t high, size_t stride) {
  constexpr size_t kSendsPerEvent = 16384;  // sends scanned per event inside the bounds
  struct Edge {
    int64_t at;
    int delta;
  };
  std::vector<Edge> edges;
  for (size_t e = 0; e < captured.size(); e += stride) {
    const Event& event = captured[e];
    if (event.probe >= kProbes) continue;
    const std::vector<size_t>& list = lists[event.probe];
    const int64_t g = static_cast<int64_t>(event.tsc);
    auto h = [&](size_t k) { return static_cast<int64_t>(sent[list[k]].host_tsc_before); };
    // The first send whose interval reaches past `low`: the one before the first send after g + low.
    size_t k =
        static_cast<size_t>(std::upper_bound(list.begin(), list.end(), g + low,
                                             [&](int64_t t, size_t i) {
                                               return t < static_cast<int64_t>(sent[i].host_tsc_before);
                                             }) -
                            list.begin());
    if (k > 0) --k;
    for (size_t scanned = 0; k < list.size() && h(k) - g <= high && scanned < kSendsPerEvent;
         ++k, ++scanned) {
      if (sent[list[k]].code != event.code) continue;
      const int64_t from = std::max(h(k) - g, low);
      const int64_t to = k + 1 < list.size() ? std::min(h(k + 1) - g, high + 1) : high + 1;
      if (from < to) {
        edges.push_back({from, +1});
        edges.push_back({to, -1});
      }
    }
  }
  if (edges.empty()) return std::nullopt;
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.at < b.at || (a.at == b.at && a.delta < b.delta); });
  int count = 0, best = 0;
  std::pair<int64_t, int64_t> region;
  for (size_t i = 0; i < edges.size(); ++i) {
    count += edges[i].delta;
    // On a tie the later region wins: a capture that saw a burst's last write also fits every earlier send
    // of that burst with the same code, and those aliases all lie to the left.
    if (count > 0 && count >= best && i + 1 < edges.size() && edges[i + 1].at > edges[i].at) {
      best = count;
      region = {edges[i].at, edges[i + 1].at};  // until the next interval ends or starts
    }
  }
  if (best == 0) return std::nullopt;
  return region;
}

double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

namespace {

struct Pairing {
  std::vector<std::optional<size_t>> send_of;  // per captured event: its index into `sent`, if any
  std::vector<bool> counted;                   // per send: sent before the capture ended
  std::optional<int64_t> fastest;              // max over pairs of host_tsc - stamp: the offset they imply
};

// The send a poll saw is the latest one on that probe before the stamp (in host time, stamp + offset) with
// the captured code, after the send paired with the probe's previous capture (a probe's captures are a
// subsequence of its sends). Usually that is the latest send itself; an earlier one when writes landed
// between the poll's load and its rdtsc (a few in a burst, many when the vCPU thread was descheduled
// right there: the event was seen, its stamp is late).
Pairing pair_by_time(std::span<const SentEvent> sent, std::span<const Event> captured,
                     const std::vector<std::vector<size_t>>& lists, int64_t offset, uint64_t end_tsc) {
  Pairing pairing;
  pairing.send_of.resize(captured.size());
  pairing.counted.assign(sent.size(), true);
  auto host_time = [offset](uint64_t guest_tsc) { return guest_tsc + static_cast<uint64_t>(offset); };
  if (end_tsc != 0)
    for (size_t i = 0; i < sent.size(); ++i)
      pairing.counted[i] = sent[i].host_tsc_before <= host_time(end_tsc);
  std::vector<size_t> floor(kProbes, 0);  // per probe: list positions below this are paired or passed
  for (size_t e = 0; e < captured.size(); ++e) {
    const Event& event = captured[e];
    if (event.probe >= kProbes) continue;
    const std::vector<size_t>& list = lists[event.probe];
    const size_t after = static_cast<size_t>(
        std::upper_bound(list.begin(), list.end(), host_time(event.tsc),
                         [&](uint64_t t, size_t i) { return t < sent[i].host_tsc_before; }) -
        list.begin());
    const size_t lowest = std::max(floor[event.probe], after > kLookahead ? after - kLookahead : 0);
    for (size_t position = after; position > lowest; --position) {
      const size_t i = list[position - 1];
      if (pairing.counted[i] && sent[i].code == event.code) {
        floor[event.probe] = position;
        pairing.send_of[e] = i;
        const int64_t implied = static_cast<int64_t>(sent[i].host_tsc_before - event.tsc);
        pairing.fastest = pairing.fastest ? std::max(*pairing.fastest, implied) : implied;
        break;
      }
    }
  }
  return pairing;
}

}  // namespace

FidelityReport assess_fidelity(std::span<const SentEvent> sent_in, std::span<const Event> captured,
                               CaptureWindow window) {
  FidelityReport report;
  report.captured = captured.size();
  report.tsc_hz = window.tsc_hz;
  report.guest_clock = window.guest_clock;
  // Guest clock: the pairing below works on host_tsc_before; give it the guest's lower bound instead.
  std::vector<SentEvent> on_guest_clock;
  if (window.guest_clock) {
    on_guest_clock.assign(sent_in.begin(), sent_in.end());
    for (SentEvent& send : on_guest_clock) send.host_tsc_before = send.guest_tsc_before;
  }
  const std::span<const SentEvent> sent =
      window.guest_clock ? std::span<const SentEvent>(on_guest_clock) : sent_in;
  for (const SentEvent& send : sent)
    if (send.held_back) {
      ++report.held_back;
      report.held_back_max_ns = std::max(report.held_back_max_ns, static_cast<double>(send.held_ns));
    }
  const auto lists = by_probe(sent);
  // Start from the offset most events agree with (or, without bounds, the first pass's), pair, and lower it
  // to the fastest detection of those pairs until it settles: each step keeps every pair (their sends stay
  // before their stamps, the next sends stay after), so it converges in a few steps.
  std::optional<int64_t> start;
  if (window.guest_clock) {
    start = 0;
  } else if (window.offset_bounds) {
    // A sample across the bounds (milliseconds wide), then every event in a narrow band around its region;
    // the left end of the final region is the run's fastest detection.
    auto region =
        offset_by_consensus(sent, captured, lists, window.offset_bounds->first, window.offset_bounds->second,
                            std::max<size_t>(1, captured.size() / kSample));
    if (region)
      region = offset_by_consensus(sent, captured, lists, region->first - kBandTicks,
                                   region->second + kBandTicks, 1);
    if (region) start = region->first;
  }
  if (!start) start = estimate_offset(sent, captured, lists);
  int64_t offset = start.value_or(0);
  Pairing pairing = pair_by_time(sent, captured, lists, offset, window.end_tsc);
  for (int step = 0; !window.guest_clock && step < 8 && pairing.fastest && *pairing.fastest != offset;
       ++step) {
    offset = *pairing.fastest;
    pairing = pair_by_time(sent, captured, lists, offset, window.end_tsc);
  }
  report.offset_ticks = offset;
  report.after_end = static_cast<size_t>(std::count(pairing.counted.begin(), pairing.counted.end(), false));
  report.sent = sent.size() - report.after_end;

  const double tick_ns = ns_per_tick(window.tsc_hz);
  std::optional<uint64_t> latest_write, previous_stamp, previous_write;
  for (size_t e = 0; e < captured.size(); ++e) {
    if (!pairing.send_of[e]) {
      ++report.unexpected;
      continue;
    }
    ++report.matched;
    const Event& event = captured[e];
    const SentEvent& send = sent[*pairing.send_of[e]];
    if (latest_write && send.host_tsc_before < *latest_write) ++report.out_of_order;
    latest_write = latest_write ? std::max(*latest_write, send.host_tsc_before) : send.host_tsc_before;
    if (previous_stamp && *previous_stamp == event.tsc && *previous_write != send.host_tsc_before)
      ++report.merged;
    previous_stamp = event.tsc;
    previous_write = send.host_tsc_before;
    const int64_t ticks =
        static_cast<int64_t>(event.tsc + static_cast<uint64_t>(offset) - send.host_tsc_before);
    report.latencies_ns.push_back(static_cast<double>(ticks) * tick_ns);
  }
  report.lost = report.sent - report.matched;

  // The timeline against the scenario's.
  std::vector<double> interval_errors, schedule_offsets;
  std::optional<size_t> previous;
  for (size_t e = 0; e < captured.size(); ++e) {
    if (!pairing.send_of[e]) continue;
    const SentEvent& send = sent[*pairing.send_of[e]];
    schedule_offsets.push_back(static_cast<double>(captured[e].tsc) * tick_ns -
                               static_cast<double>(send.scheduled_ns));
    if (previous) {
      const SentEvent& before = sent[*pairing.send_of[*previous]];
      const double captured_ns = static_cast<double>(captured[e].tsc - captured[*previous].tsc) * tick_ns;
      const double scheduled_ns =
          static_cast<double>(send.scheduled_ns) - static_cast<double>(before.scheduled_ns);
      interval_errors.push_back(std::abs(captured_ns - scheduled_ns));
    }
    previous = e;
  }
  std::sort(interval_errors.begin(), interval_errors.end());
  report.interval_p50_ns = percentile(interval_errors, 0.50);
  report.interval_p95_ns = percentile(interval_errors, 0.95);
  report.interval_max_ns = interval_errors.empty() ? 0 : interval_errors.back();
  if (!schedule_offsets.empty()) {
    std::vector<double> sorted_offsets = schedule_offsets;
    std::sort(sorted_offsets.begin(), sorted_offsets.end());
    const double median = percentile(sorted_offsets, 0.50);
    for (double& offset_ns : schedule_offsets) offset_ns = std::abs(offset_ns - median);
    std::sort(schedule_offsets.begin(), schedule_offsets.end());
    report.schedule_p50_ns = percentile(schedule_offsets, 0.50);
    report.schedule_p95_ns = percentile(schedule_offsets, 0.95);
    report.schedule_max_ns = schedule_offsets.back();
  }

  std::vector<double> sorted = report.latencies_ns;
  std::sort(sorted.begin(), sorted.end());
  report.latency_p50_ns = percentile(sorted, 0.50);
  report.latency_p99_ns = percentile(sorted, 0.99);
  report.latency_max_ns = sorted.empty() ? 0 : sorted.back();
  return report;
}

std::string format_fidelity(const FidelityReport& r) {
  std::string text = fmt::format(
      "  fidelity:       sent {}, captured {}, lost {}, unexpected {}, out of order {}{}\n", r.sent,
      r.captured, r.lost, r.unexpected, r.out_of_order, r.clean() ? " (complete and in order)" : "");
  if (r.after_end > 0)
    text += fmt::format("                  {} more sent after the capture had ended (not counted)\n",
                        r.after_end);
  if (r.merged > 0)
    text += fmt::format("                  {} event(s) of separate writes seen in one poll (same stamp)\n",
                        r.merged);
  if (r.held_back > 0 && std::isnan(r.held_back_max_ns))  // a sent log from before its held_ns column
    text += fmt::format(
        "                  {} event(s) held back by pacing until the kernel had polled (for how long: not "
        "logged)\n",
        r.held_back);
  else if (r.held_back > 0)
    text += fmt::format(
        "                  {} event(s) held back by pacing until the kernel had polled, by up to {:.1f} us\n",
        r.held_back, r.held_back_max_ns / 1e3);
  if (r.matched > 0 && r.guest_clock)
    text += fmt::format(
        "  latency:        stamp - send p50 {:.0f} ns, p99 {:.0f} ns, max {:.0f} ns (guest clock: from the "
        "clock the kernel had published before the write)\n",
        r.latency_p50_ns, r.latency_p99_ns, r.latency_max_ns);
  else if (r.matched > 0)
    text += fmt::format(
        "  latency:        stamp - send p50 {:.0f} ns, p99 {:.0f} ns, max {:.0f} ns (guest TSC + {} = host "
        "TSC; fastest detection = 0)\n",
        r.latency_p50_ns, r.latency_p99_ns, r.latency_max_ns, r.offset_ticks);
  if (r.matched > 1)
    text += fmt::format(
        "  timing:         interval error p50 {:.1f} us, p95 {:.1f} us, max {:.1f} us; schedule error p50 "
        "{:.1f} us, p95 {:.1f} us, max {:.1f} us\n",
        r.interval_p50_ns / 1e3, r.interval_p95_ns / 1e3, r.interval_max_ns / 1e3, r.schedule_p50_ns / 1e3,
        r.schedule_p95_ns / 1e3, r.schedule_max_ns / 1e3);
  return text;
}

nlohmann::ordered_json fidelity_document(const FidelityReport& r) {
  using Json = nlohmann::ordered_json;
  // One decimal, as the text says; null where nothing was measured (no latency without a matched event, no
  // interval without two).
  auto ns = [](bool known, double value) {
    return known && std::isfinite(value) ? Json(std::round(value * 10) / 10) : Json(nullptr);
  };
  const bool latency = r.matched > 0, intervals = r.matched > 1;
  return Json{{"sent", r.sent},
              {"captured", r.captured},
              {"matched", r.matched},
              {"lost", r.lost},
              {"unexpected", r.unexpected},
              {"out_of_order", r.out_of_order},
              {"merged", r.merged},
              {"after_end", r.after_end},
              {"offset_ticks", r.offset_ticks},
              {"tsc_hz", r.tsc_hz ? Json(r.tsc_hz) : Json(nullptr)},
              {"latency_p50_ns", ns(latency, r.latency_p50_ns)},
              {"latency_p99_ns", ns(latency, r.latency_p99_ns)},
              {"latency_max_ns", ns(latency, r.latency_max_ns)},
              {"clean", r.clean()},
              {"guest_clock", r.guest_clock},
              {"interval_error_p50_ns", ns(intervals, r.interval_p50_ns)},
              {"interval_error_p95_ns", ns(intervals, r.interval_p95_ns)},
              {"interval_error_max_ns", ns(intervals, r.interval_max_ns)},
              {"schedule_error_p50_ns", ns(intervals, r.schedule_p50_ns)},
              {"schedule_error_p95_ns", ns(intervals, r.schedule_p95_ns)},
              {"schedule_error_max_ns", ns(intervals, r.schedule_max_ns)},
              {"held_back", r.held_back},
              {"held_back_max_ns", ns(true, r.held_back_max_ns)}};
}

std::string fidelity_json(const FidelityReport& r) {
  return fidelity_document(r).dump();
}

AlignmentTruth alignment_truth(const CaptureClock& reference, const CaptureClock& machine, bool guest_clock) {
  const double hz1 = static_cast<double>(reference.tsc_hz), hz = static_cast<double>(machine.tsc_hz);
  if (guest_clock) {
    // Scenario time s is due at origin_k + s * hz_k on machine k: t_k = (origin_k - start_k) / hz_k + s.
    auto lead_ns = [](uint64_t origin, uint64_t start, double rate) {
      return static_cast<double>(static_cast<int64_t>(origin - start)) * 1e9 / rate;
    };
    return {lead_ns(reference.origin_tsc, reference.capture_start_tsc, hz1) -
                lead_ns(machine.origin_tsc, machine.capture_start_tsc, hz),
            0};
  }
  // host TSC = guest TSC + C_k on every machine: t_1 = (t_k * hz_k + start_k + C_k - start_1 - C_1) / hz_1.
  const double ticks =
      static_cast<double>(machine.offset_ticks - reference.offset_ticks) +
      static_cast<double>(static_cast<int64_t>(machine.capture_start_tsc - reference.capture_start_tsc));
  return {ticks * 1e9 / hz1, (hz / hz1 - 1) * 1e6};
}

std::string format_machines(const std::vector<MachineFidelity>& machines) {
  std::string text;
  for (size_t k = 0; k < machines.size(); ++k) {
    const MachineFidelity& machine = machines[k];
    if (machines.size() > 1)
      text += fmt::format("  machine {}:      {} events sent, session {} on {}, {} events\n", k + 1,
                          machine.events_sent, machine.session, machine.disk, machine.kernel_events);
    if (!machine.report) continue;
    text += format_fidelity(*machine.report);
    if (machine.truth)
      text += fmt::format(
          "  align truth:    t_1 = t_{} {:+.1f} ns, drift {:.3f} ppm (what `ett analyze align` should fit)\n",
          k + 1, machine.truth->offset_ns, machine.truth->drift_ppm);
  }
  return text;
}

nlohmann::ordered_json machines_document(const std::vector<MachineFidelity>& machines) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const MachineFidelity& machine : machines) {
    if (!machine.report) continue;
    nlohmann::ordered_json object = fidelity_document(*machine.report);
    if (machine.truth) {
      object["truth_offset_ns"] = std::round(machine.truth->offset_ns * 10) / 10;
      object["truth_drift_ppm"] = std::round(machine.truth->drift_ppm * 1e6) / 1e6;
    }
    array.push_back(std::move(object));
  }
  return array;
}

}  // namespace ett::host
