// fidelity.cpp: pairs captured events with the injector's writes through the guest/host TSC offset.
#include "fidelity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace ett::host {

namespace {

// How far the first pass looks ahead on a probe for a captured code: a stall merges at most the writes of a
// few milliseconds; beyond that the captured event is called unexpected rather than explaining it by a huge
// loss.
constexpr size_t kLookahead = size_t{1} << 16;

constexpr size_t kProbes = 9;  // probes are 1..8

// Indices into `sent`, per probe, in send order.
std::vector<std::vector<size_t>> by_probe(std::span<const SentEvent> sent) {
  std::vector<std::vector<size_t>> lists(kProbes);
  for (size_t i = 0; i < sent.size(); ++i)
    if (sent[i].probe < kProbes) lists[sent[i].probe].push_back(i);
  return lists;
}

// First pass, by codes alone: each captured event takes the next send on its probe with its code. It only
// has to get the fastest detection right, which it does whenever that event is not misattributed; a
// misattributed pair has an earlier send, so a larger latency, and does not move the maximum.
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
      const int64_t candidate = static_cast<int64_t>(send.host_tsc - event.tsc);
      offset = offset ? std::max(*offset, candidate) : candidate;
      next[event.probe] = k + 1;
      break;
    }
  }
  return offset;
}

double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

FidelityReport assess_fidelity(std::span<const SentEvent> sent, std::span<const Event> captured,
                               CaptureWindow window) {
  FidelityReport report;
  report.captured = captured.size();
  report.tsc_hz = window.tsc_hz;
  const auto lists = by_probe(sent);
  const int64_t offset = estimate_offset(sent, captured, lists).value_or(0);
  report.offset_ticks = offset;
  auto host_time = [offset](uint64_t guest_tsc) { return guest_tsc + static_cast<uint64_t>(offset); };

  std::vector<bool> counted(sent.size(), true);
  if (window.end_tsc != 0) {
    const uint64_t end = host_time(window.end_tsc);
    for (size_t i = 0; i < sent.size(); ++i)
      if (sent[i].host_tsc > end) {
        counted[i] = false;
        ++report.after_end;
      }
  }
  report.sent = sent.size() - report.after_end;

  // Second pass, by time: the send a poll saw is the latest one on that probe before the stamp. One step
  // further back covers a write that landed between the poll's load and its rdtsc.
  std::vector<bool> matched(sent.size(), false);
  const double ns_per_tick = window.tsc_hz ? 1e9 / static_cast<double>(window.tsc_hz) : 0;
  uint64_t latest_write = 0;
  bool any_match = false;
  std::optional<uint64_t> previous_stamp, previous_write;
  for (const Event& event : captured) {
    std::optional<size_t> pick;
    if (event.probe < kProbes) {
      const std::vector<size_t>& list = lists[event.probe];
      const uint64_t when = host_time(event.tsc);
      auto after = std::upper_bound(list.begin(), list.end(), when,
                                    [&](uint64_t t, size_t i) { return t < sent[i].host_tsc; });
      for (int back = 0; back < 2 && after != list.begin(); ++back) {
        --after;
        const size_t i = *after;
        if (counted[i] && !matched[i] && sent[i].code == event.code) {
          pick = i;
          break;
        }
      }
    }
    if (!pick) {
      ++report.unexpected;
      continue;
    }
    matched[*pick] = true;
    ++report.matched;
    const SentEvent& send = sent[*pick];
    if (any_match && send.host_tsc < latest_write) ++report.out_of_order;
    latest_write = any_match ? std::max(latest_write, send.host_tsc) : send.host_tsc;
    any_match = true;
    if (previous_stamp && *previous_stamp == event.tsc && *previous_write != send.host_tsc) ++report.merged;
    previous_stamp = event.tsc;
    previous_write = send.host_tsc;
    const int64_t ticks = static_cast<int64_t>(host_time(event.tsc) - send.host_tsc);
    report.latencies_ns.push_back(static_cast<double>(ticks) * ns_per_tick);
  }
  report.lost = report.sent - report.matched;

  std::vector<double> sorted = report.latencies_ns;
  std::sort(sorted.begin(), sorted.end());
  report.latency_p50_ns = percentile(sorted, 0.50);
  report.latency_p99_ns = percentile(sorted, 0.99);
  report.latency_max_ns = sorted.empty() ? 0 : sorted.back();
  return report;
}

std::string format_fidelity(const FidelityReport& r) {
  std::string text = fmt::format(
      "  fidelity:       sent {}, captured {}, lost {}, unexpected {}, out of order {}{}\n", r.sent, r.captured,
      r.lost, r.unexpected, r.out_of_order, r.clean() ? " (complete and in order)" : "");
  if (r.after_end > 0)
    text += fmt::format("                  {} more sent after the capture had ended (not counted)\n", r.after_end);
  if (r.merged > 0)
    text += fmt::format("                  {} event(s) of separate writes seen in one poll (same stamp)\n",
                        r.merged);
  if (r.matched > 0)
    text += fmt::format(
        "  latency:        stamp - send p50 {:.0f} ns, p99 {:.0f} ns, max {:.0f} ns (guest TSC + {} = host "
        "TSC; fastest detection = 0)\n",
        r.latency_p50_ns, r.latency_p99_ns, r.latency_max_ns, r.offset_ticks);
  return text;
}

std::string fidelity_json(const FidelityReport& r) {
  return fmt::format(
      "{{\"sent\":{},\"captured\":{},\"matched\":{},\"lost\":{},\"unexpected\":{},\"out_of_order\":{},"
      "\"merged\":{},\"after_end\":{},\"offset_ticks\":{},\"tsc_hz\":{},\"latency_p50_ns\":{:.1f},"
      "\"latency_p99_ns\":{:.1f},\"latency_max_ns\":{:.1f},\"clean\":{}}}",
      r.sent, r.captured, r.matched, r.lost, r.unexpected, r.out_of_order, r.merged, r.after_end,
      r.offset_ticks, r.tsc_hz, r.latency_p50_ns, r.latency_p99_ns, r.latency_max_ns,
      r.clean() ? "true" : "false");
}

}  // namespace ett::host
