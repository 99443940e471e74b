// align.cpp: clock offset and drift between captures from their shared sync edges, and the merge.
#include "analysis/align.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/fit.h"
#include "analysis/stall_marks.h"
#include "common/on_threads.h"

namespace ett::host {

namespace {

// A capture's sync edges: their times in order, and per edge whether one of the capture's stalls touches it.
struct SyncEdges {
  std::vector<double> times;
  std::vector<bool> stalled;
};

// Counted first: millions of times pushed into a growing vector were copied at every doubling, and the
// blocks under 8 MB were first touched in 4 KB pages.
SyncEdges sync_edges(const Capture& capture, uint8_t probe) {
  const size_t count = static_cast<size_t>(
      std::count_if(capture.events.begin(), capture.events.end(),
                    [probe](const AnalysisEvent& event) { return event.probe == probe; }));
  const StallMarks marks(capture.stalls, capture.events);
  SyncEdges edges;
  edges.times.reserve(count);
  edges.stalled.reserve(count);
  for (size_t i = 0; i < capture.events.size(); ++i)
    if (capture.events[i].probe == probe) {
      edges.times.push_back(capture.events[i].time_ns);
      edges.stalled.push_back(marks.stall_at(i) > 0);
    }
  return edges;
}

std::string capture_name(const Capture& capture, size_t index) {
  return capture.info.name.empty() ? fmt::format("capture {}", index + 1) : capture.info.name;
}

}  // namespace

Expected<MergedTimeline> MergedTimeline::make(std::span<const Capture> captures,
                                              std::span<const LinearClock> clocks) {
  // A stable sort of 10 million merged events took longer than the rest of align, and merging each capture
  // into the timeline so far needed a buffer of half of it.
  constexpr size_t kMaxIndex = UINT32_MAX;
  if (captures.size() > kMaxIndex || clocks.size() != captures.size())
    return make_error(ErrorKind::Usage, fmt::format("cannot merge {} captures", captures.size()));
  MergedTimeline timeline;
  for (size_t i = 0; i < captures.size(); ++i) {
    const size_t n = captures[i].events.size();
    if (n > kMaxIndex)
      return make_error(ErrorKind::Usage, fmt::format("{} has {} events: more than one merge can hold ({})",
                                                      capture_name(captures[i], i), n, kMaxIndex));
    timeline.m_sources.push_back({captures[i].events, clocks[i], {}});
    timeline.m_size += n;
  }
  // Each capture checked for reference-time order (sorted stably when it is not), on a thread of its own.
  for_each_on_threads(timeline.m_sources.size(), [&timeline](size_t i) {
    Source& source = timeline.m_sources[i];
    const size_t n = source.events.size();
    double previous = n > 0 ? source.time(0) : 0;
    for (size_t k = 1; k < n; ++k) {
      const double time = source.time(k);
      if (!(time < previous)) {
        previous = time;
        continue;
      }
      source.order.resize(n);
      for (size_t j = 0; j < n; ++j) source.order[j] = static_cast<uint32_t>(j);
      std::stable_sort(source.order.begin(), source.order.end(), [&source](uint32_t a, uint32_t b) {
        return source.clock.reference_ns(source.events[a].time_ns) <
               source.clock.reference_ns(source.events[b].time_ns);
      });
      return;
    }
  });
  const size_t sources = timeline.m_sources.size();
  timeline.m_marks.reserve((timeline.m_size / kStride + 1) * sources);
  if (sources == 2) {
    // Each mark found on its own by a binary search (the merge path): the first `at` events of the merge
    // are the first i of capture 0 and the first at - i of capture 1, for the largest i whose event i - 1
    // comes no later than event at - i of capture 1 (capture 0 first on a tie); that holds for every i up to
    // it and for none after.
    const Source& first = timeline.m_sources[0];
    const Source& second = timeline.m_sources[1];
    const size_t n0 = first.events.size(), n1 = second.events.size();
    for (size_t at = 0; at < timeline.m_size; at += kStride) {
      size_t low = at > n1 ? at - n1 : 0, high = std::min(at, n0);  // i is in [low, high]
      while (low < high) {
        const size_t i = high - (high - low) / 2;  // in (low, high]
        if (at - i >= n1 || first.time(i - 1) <= second.time(at - i))
          low = i;
        else
          high = i - 1;
      }
      timeline.m_marks.push_back(low);
      timeline.m_marks.push_back(at - low);
    }
    return timeline;
  }
  // Any other count: one merge of all of it, keeping where each capture stood every kStride events.
  std::vector<size_t> next(sources, 0);
  for (size_t at = 0; at < timeline.m_size; ++at) {
    if (at % kStride == 0) timeline.m_marks.insert(timeline.m_marks.end(), next.begin(), next.end());
    ++next[timeline.pick(next)];
  }
  return timeline;
}

std::vector<MergedRef> MergedTimeline::refs() const {
  std::vector<MergedRef> all;
  all.reserve(m_size);
  walk(0, m_size, [&all](const MergedRef& ref) { all.push_back(ref); });
  return all;
}

Expected<AlignResult> align_captures(std::span<const Capture> captures, uint8_t sync_probe,
                                     bool keep_timeline) {
  if (captures.size() < 2) return make_error(ErrorKind::Usage, "alignment needs at least two captures");
  std::vector<SyncEdges> edges(captures.size());
  for_each_on_threads(captures.size(), [&](size_t i) { edges[i] = sync_edges(captures[i], sync_probe); });
  std::vector<double>& reference = edges[0].times;
  if (reference.size() < 3)
    return make_error(ErrorKind::Usage,
                      fmt::format("{} has {} sync edges on probe {}; at least 3 are needed",
                                  capture_name(captures[0], 0), reference.size(), sync_probe));
  AlignResult result;
  result.sync_probe = sync_probe;
  for (size_t i = 0; i < captures.size(); ++i) {
    ClockFit fit;
    fit.capture = i;
    fit.edges = reference.size();
    if (i > 0) {
      std::vector<double>& own = edges[i].times;
      if (own.size() != reference.size())
        return make_error(
            ErrorKind::Usage,
            fmt::format("{} has {} sync edges on probe {} but the reference {} has {}: the edges are "
                        "paired in order, so every capture must see the same edges",
                        capture_name(captures[i], i), own.size(), sync_probe, capture_name(captures[0], 0),
                        reference.size()));
      auto line = fit_linear(own, reference);
      if (!line) return line.failure();
      fit.offset_ns = line->intercept_ns;
      fit.slope = line->slope_ns;
      fit.offset_stderr_ns = line->intercept_stderr_ns;
      fit.slope_stderr = line->slope_stderr_ns;
      // The residuals take the place of the capture's sync times (at 2.5 M edges each array is 20 MB of
      // memory touched for the first time).
      double squares = 0;
      for (size_t k = 0; k < own.size(); ++k) {
        const double residual = reference[k] - (fit.offset_ns + fit.slope * own[k]);
        own[k] = residual;
        squares += residual * residual;
        fit.max_abs_residual_ns = std::max(fit.max_abs_residual_ns, std::fabs(residual));
      }
      fit.rms_residual_ns = std::sqrt(squares / static_cast<double>(own.size()));
      fit.residuals_ns = std::move(own);
    }
    fit.drift_ppm = (fit.slope - 1.0) * 1e6;
    // A sync edge is stalled when a stall of this capture or of the reference touches it (the reference's
    // own flags are taken below, once every fit has used them).
    if (i > 0) {
      fit.edge_stalled = std::move(edges[i].stalled);
      for (size_t k = 0; k < fit.edges; ++k)
        if (edges[0].stalled[k]) fit.edge_stalled[k] = true;
    }
    result.fits.push_back(std::move(fit));
  }
  // The reference's residuals (all 0) in the place of its sync times, and its stall flags.
  std::fill(reference.begin(), reference.end(), 0.0);
  result.fits[0].residuals_ns = std::move(reference);
  result.fits[0].edge_stalled = std::move(edges[0].stalled);
  for (ClockFit& fit : result.fits)
    fit.stalled_edges =
        static_cast<size_t>(std::count(fit.edge_stalled.begin(), fit.edge_stalled.end(), true));
  for (const Capture& capture : captures) result.merged_events += capture.events.size();
  if (keep_timeline) {
    std::vector<LinearClock> clocks;
    for (size_t i = 0; i < captures.size(); ++i) clocks.push_back(result.clock(i));
    ETT_TRY_ASSIGN(result.timeline, MergedTimeline::make(captures, clocks));
  }
  return result;
}

}  // namespace ett::host
