// survey.cpp: the survey block's reader, its checks and the verdicts built from it.
#include "survey/survey.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "common/fast_crc32c.h"
#include "common/tsc_time.h"

namespace ett::host {

namespace f = ett::format;

namespace {

bool is_survey(const f::SessionHeader& header) {
  return header.mode == static_cast<uint32_t>(f::CaptureMode::Survey);
}

std::string bounded(const char* text, size_t size) {
  return std::string(text, strnlen(text, size));
}

const char* status_name(uint32_t status) {
  switch (static_cast<f::SurveyStatus>(status)) {
    case f::SurveyStatus::Absent:
      return "absent";
    case f::SurveyStatus::Usable:
      return "usable";
    case f::SurveyStatus::Failed:
      return "failed";
    case f::SurveyStatus::Refused:
      return "refused";
  }
  return "unknown";
}

const char* interface_name(uint32_t interface) {
  switch (static_cast<f::DiskInterface>(interface)) {
    case f::DiskInterface::Ide:
      return "ide";
    case f::DiskInterface::Ahci:
      return "ahci";
    case f::DiskInterface::Nvme:
      return "nvme";
  }
  return "unknown";
}

// As probe= takes it: a port by its address; a PCI card or the virtual probe by its source alone (the kernel
// takes the first one it finds, the one the survey measured).
std::string probe_name(const f::SurveyProbe& probe) {
  switch (static_cast<f::ProbeSource>(probe.source)) {
    case f::ProbeSource::PciLpt:
    case f::ProbeSource::PciUart:
    case f::ProbeSource::Ivshmem:
      return f::probe_source_name(probe.source);
    default:
      return fmt::format("{}:0x{:x}", f::probe_source_name(probe.source), probe.address);
  }
}

// "1.2 us", "850 ns", "3.40 ms": a duration for the text.
std::string time_text(double ns) {
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string seconds_text(uint32_t ms) {
  return fmt::format("{:g} s", ms / 1000.0);
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
}

bool smi_countable(const f::SessionHeader& header) {
  return (header.flags & f::kFlagSmiCount) != 0;
}

double ticks_ns(uint64_t ticks, uint64_t hz) {
  return hz ? ticks_to_ns(static_cast<double>(ticks), hz) : 0;
}

}  // namespace

Expected<Survey> read_survey(const TraceImage& image, std::optional<uint32_t> number) {
  const auto& sessions = image.sessions();
  const std::string& path = image.path();
  std::optional<size_t> index;
  if (number) {
    for (size_t i = 0; i < sessions.size(); ++i)
      if (sessions[i].session_number == *number) index = i;
    if (!index)
      return make_error(
          ErrorKind::NoSuchSession,
          fmt::format("{}: no session {} on this trace disk ({} sessions)", path, *number, sessions.size()));
    if (!is_survey(sessions[*index]))
      return make_error(ErrorKind::NoSuchSession,
                        fmt::format("{}: session {} is a {} session, not a survey (boot the kernel with "
                                    "mode=survey to make one)",
                                    path, *number, f::mode_name(sessions[*index].mode)));
  } else {
    for (size_t i = sessions.size(); i-- > 0;)
      if (is_survey(sessions[i])) {
        index = i;
        break;
      }
    if (!index) {
      if (!image.chain_problem().empty())
        return make_error(ErrorKind::BadCrc,
                          fmt::format("{}: no readable survey session: {}", path, image.chain_problem()));
      if (!image.cut_short().empty())
        return make_error(
            ErrorKind::Truncated,
            fmt::format("{}: no survey session, and the image was cut: {}", path, image.cut_short()));
      return make_error(ErrorKind::EmptyDisk,
                        fmt::format("{}: no survey session on this trace disk ({} other sessions; boot the "
                                    "kernel with mode=survey to make one)",
                                    path, sessions.size()));
    }
  }
  Survey survey;
  survey.header = sessions[*index];
  survey.session = survey.header.session_number;
  const auto& header = survey.header;
  const std::string where = fmt::format("{}: survey session {}", path, survey.session);
  const uint64_t before = f::sectors_before_chunks(header.format_version);
  if (header.event_count != 0 || header.chunk_count != 0 ||
      header.reserved_sectors < before + f::kSurveySectors)
    return make_error(
        ErrorKind::BadCrc,
        fmt::format("{}: damaged header: a survey holds no events and reserves {} sectors, but it "
                    "counts {} events and reserves {}",
                    where, before + f::kSurveySectors, header.event_count, header.reserved_sectors));
  const uint64_t lba = header.start_lba + before;
  if (auto read = image.read_at(&survey.block, sizeof(survey.block), lba * f::kSectorSize); !read) {
    if (read.error().kind != ErrorKind::Truncated) return read.failure();
    return make_error(ErrorKind::Truncated,
                      fmt::format("{}: survey block at LBA {} is cut off: the image ends at byte {}", where,
                                  lba, image.size_bytes()));
  }
  const f::SurveyBlock& block = survey.block;
  if (std::memcmp(block.magic, f::kSurveyMagic, sizeof(block.magic)) != 0)
    return make_error(ErrorKind::BadCrc,
                      fmt::format("{}: survey block at LBA {} is damaged (its magic is wrong)", where, lba));
  if (block.version != f::kSurveyVersion)
    return make_error(ErrorKind::UnknownVersion,
                      fmt::format("{}: unknown survey block version {} (this ett reads version {})", where,
                                  block.version, f::kSurveyVersion));
  const uint32_t computed = fast_crc32c(&block, offsetof(f::SurveyBlock, crc));
  if (computed != block.crc)
    return make_error(ErrorKind::BadCrc,
                      fmt::format("{}: survey block at LBA {}: bad CRC (stored 0x{:08x}, computed 0x{:08x})",
                                  where, lba, block.crc, computed));
  const auto check_count = [&](const char* what, uint32_t count, uint32_t size) -> Status {
    if (count <= size) return {};
    return make_error(ErrorKind::BadCrc, fmt::format("{}: survey block is damaged: {} {} is more than its "
                                                     "table holds ({})",
                                                     where, what, count, size));
  };
  ETT_TRY(check_count("timer_count", block.timer_count, f::kSurveyMaxTimers));
  ETT_TRY(check_count("probe_count", block.probe_count, f::kSurveyMaxProbes));
  ETT_TRY(check_count("disk_count", block.disk_count, f::kSurveyMaxDisks));
  return survey;
}

SurveyVerdict judge(const Survey& survey) {
  const auto& header = survey.header;
  const auto& block = survey.block;
  const uint64_t hz = header.tsc_hz;
  const double epsilon_ns = hz ? ns_per_tick(hz) : 0;
  const bool countable = smi_countable(header);
  const uint32_t smis = countable ? header.smi_count : 0;
  const double max_gap_ns = ticks_ns(block.hwlat_max_gap_ticks, hz);
  const bool invariant = (header.flags & f::kFlagInvariantTsc) != 0;

  SurveyVerdict verdict;
  const ProbeVerdict* best = nullptr;
  for (uint32_t i = 0; i < block.probe_count; ++i) {
    const f::SurveyProbe& probe = block.probes[i];
    ProbeVerdict one;
    one.name = probe_name(probe);
    const std::string detail = bounded(probe.detail, sizeof(probe.detail));
    const std::string why = detail.empty() ? "" : " (" + detail + ")";
    if (probe.status == static_cast<uint32_t>(f::SurveyStatus::Usable) && probe.step_ticks_max && hz)
      one.pi_ns = ticks_ns(probe.step_ticks_max, hz) + epsilon_ns;
    if (probe.status == static_cast<uint32_t>(f::SurveyStatus::Absent)) {
      one.text = fmt::format("not fit on {}: absent{}", one.name, why);
    } else if (probe.status == static_cast<uint32_t>(f::SurveyStatus::Failed)) {
      one.text = fmt::format("not fit on {}: input check failed{}", one.name, why);
    } else if (probe.status == static_cast<uint32_t>(f::SurveyStatus::Refused)) {
      one.text = fmt::format("not fit on {}: refused{}", one.name, why);
    } else if (probe.status != static_cast<uint32_t>(f::SurveyStatus::Usable)) {
      one.text = fmt::format("not fit on {}: unknown status {}", one.name, probe.status);
    } else if (!one.pi_ns) {
      one.text =
          fmt::format("not fit on {}: no loop-step run measured its step, so no pi is known", one.name);
    } else if (!invariant) {
      one.text = fmt::format(
          "not fit on {}: pi {}, but the TSC is not invariant (its rate follows the CPU's "
          "power states)",
          one.name, time_text(*one.pi_ns));
    } else if (smis > 0) {
      one.text = fmt::format("not fit on {}: pi {} does not hold: {} SMIs in {} stretch loop steps beyond it",
                             one.name, time_text(*one.pi_ns), smis, seconds_text(block.smi_window_ms));
    } else if (block.hwlat_gaps > 0 && block.hwlat_max_gap_ticks > probe.step_ticks_max) {
      // A loop step that a gap falls into lasts at least the gap: one longer than the longest measured step
      // makes a step longer than tau_max possible, and pi with it untrue.
      one.text = fmt::format(
          "not fit on {}: pi {} does not hold: {} hwlat gaps in {}, the longest {}, stretch "
          "loop steps beyond it",
          one.name, time_text(*one.pi_ns), block.hwlat_gaps, seconds_text(block.hwlat_window_ms),
          time_text(max_gap_ns));
    } else {
      one.fit = true;
      const std::string smi_text = countable ? fmt::format("0 SMIs in {}", seconds_text(block.smi_window_ms))
                                             : std::string("SMIs not countable on this CPU");
      one.text = fmt::format("fit to capture on {}: pi {}, {}, {} hwlat gaps over {} in {}", one.name,
                             time_text(*one.pi_ns), smi_text, block.hwlat_gaps,
                             time_text(block.hwlat_threshold_ns), seconds_text(block.hwlat_window_ms));
    }
    verdict.probes.push_back(one);
  }
  for (const ProbeVerdict& one : verdict.probes)
    if (one.fit && (!best || *one.pi_ns < *best->pi_ns)) best = &one;
  if (best) {
    verdict.fit = true;
    verdict.text = fmt::format("fit: capture on {} (pi {})", best->name, time_text(*best->pi_ns));
  } else if (block.probe_count == 0) {
    verdict.text = "not fit: no probe candidate was found (no parallel port, PCI card or UART)";
  } else if (!invariant) {
    verdict.text = "not fit: the TSC is not invariant";
  } else if (smis > 0) {
    verdict.text = fmt::format("not fit: {} SMIs in {} stretch loop steps beyond pi", smis,
                               seconds_text(block.smi_window_ms));
  } else if (block.hwlat_gaps > 0 && max_gap_ns > 0 &&
             std::any_of(verdict.probes.begin(), verdict.probes.end(),
                         [](auto& p) { return p.pi_ns.has_value(); })) {
    verdict.text =
        fmt::format("not fit: hwlat gaps up to {} stretch loop steps beyond pi", time_text(max_gap_ns));
  } else {
    verdict.text = "not fit: no probe candidate is usable";
  }
  return verdict;
}

namespace {

double timer_agreement_ppm(const f::SurveyBlock& block) {
  double worst = 0;
  for (uint32_t i = 0; i < block.timer_count; ++i)
    if (block.timers[i].status == static_cast<uint32_t>(f::SurveyStatus::Usable))
      worst = std::max(worst, std::abs(static_cast<double>(block.timers[i].ppm_vs_chosen)));
  return worst;
}

double minutes_at_1m(uint64_t events) {
  return static_cast<double>(events) / 1e6 / 60.0;
}

}  // namespace

std::string survey_text(const Survey& survey, const std::string& image_path) {
  const auto& h = survey.header;
  const auto& b = survey.block;
  const uint64_t hz = h.tsc_hz;
  const SurveyVerdict verdict = judge(survey);
  std::string out = fmt::format("survey: session {} of {}\n", survey.session, image_path);
  out += fmt::format("cpu:       {} {}\n", bounded(h.cpu_vendor, sizeof(h.cpu_vendor)),
                     bounded(h.cpu_brand, sizeof(h.cpu_brand)));
  out += fmt::format("tsc:       {} Hz ({}, +-{} ppm), {}, resolution {}\n", hz,
                     f::tsc_method_name(h.tsc_method), h.tsc_uncertainty_ppm,
                     (h.flags & f::kFlagInvariantTsc) ? "invariant" : "NOT invariant",
                     hz ? fmt::format("{:.3f} ns", ns_per_tick(hz)) : std::string("unknown"));
  out += "timers:   ";
  for (uint32_t i = 0; i < b.timer_count; ++i) {
    const f::SurveyTimer& t = b.timers[i];
    if (t.status == static_cast<uint32_t>(f::SurveyStatus::Usable))
      out += fmt::format(" {} {:+d} ppm;", f::tsc_method_name(t.method), t.ppm_vs_chosen);
    else
      out += fmt::format(" {} {};", f::tsc_method_name(t.method), status_name(t.status));
  }
  out += fmt::format(" agreement {:g} ppm\n", timer_agreement_ppm(b));
  if (h.flags & f::kFlagSmiCount)
    out += fmt::format("smis:      {} in {}\n", h.smi_count, seconds_text(b.smi_window_ms));
  else
    out += "smis:      not countable on this CPU\n";
  out += fmt::format("hwlat:     {} gaps over {} in {}, the longest {}\n", b.hwlat_gaps,
                     time_text(b.hwlat_threshold_ns), seconds_text(b.hwlat_window_ms),
                     time_text(ticks_ns(b.hwlat_max_gap_ticks, hz)));
  for (uint32_t k = 0; k < f::kSurveyGapBins; ++k)
    if (b.gap_histogram[k])
      out += fmt::format("           [{}, {}): {}\n", time_text(ticks_ns(1ull << k, hz)),
                         time_text(ticks_ns(2ull << k, hz)), b.gap_histogram[k]);
  out += fmt::format("memory:    {}: {} events, {:.1f} minutes at 1 M events/s\n",
                     bytes_text(b.usable_memory_bytes), b.buffer_capacity, minutes_at_1m(b.buffer_capacity));
  out += fmt::format("keyboard:  {}\n", status_name(b.keyboard));
  out += fmt::format("disks:     {}\n", b.disk_count);
  for (uint32_t i = 0; i < b.disk_count; ++i) {
    const f::SurveyDisk& d = b.disks[i];
    const char* labelled = d.status == static_cast<uint32_t>(f::SurveyStatus::Usable) ? "ETT trace disk"
                           : d.status == static_cast<uint32_t>(f::SurveyStatus::Refused)
                               ? "not labelled"
                               : status_name(d.status);
    out += fmt::format("  {} {}  {}  {}  {} B blocks  {}\n", interface_name(d.interface), d.port,
                       bounded(d.model, sizeof(d.model)), bytes_text(d.sectors * d.logical_block_size),
                       d.logical_block_size, labelled);
  }
  out += fmt::format("probes:    {}\n", b.probe_count);
  for (uint32_t i = 0; i < b.probe_count; ++i) {
    const f::SurveyProbe& p = b.probes[i];
    const std::string detail = bounded(p.detail, sizeof(p.detail));
    out +=
        fmt::format("  {}  {}  read {:.0f}/{:.0f}/{:.0f} ns (min/median/max of {})  step max {:.0f} ns{}\n",
                    probe_name(p), status_name(p.status), ticks_ns(p.read_ticks_min, hz),
                    ticks_ns(p.read_ticks_median, hz), ticks_ns(p.read_ticks_max, hz), p.reads,
                    ticks_ns(p.step_ticks_max, hz), detail.empty() ? "" : "  (" + detail + ")");
  }
  out += "verdicts:\n";
  for (const ProbeVerdict& one : verdict.probes) out += "  " + one.text + "\n";
  out += "overall:   " + verdict.text + "\n";
  return out;
}

nlohmann::ordered_json survey_json(const Survey& survey) {
  using json = nlohmann::ordered_json;
  const auto& h = survey.header;
  const auto& b = survey.block;
  const uint64_t hz = h.tsc_hz;
  const SurveyVerdict verdict = judge(survey);
  json out;
  out["session"] = survey.session;
  out["captured_at_unix"] = h.captured_at_unix;
  out["cpu"] = {{"vendor", bounded(h.cpu_vendor, sizeof(h.cpu_vendor))},
                {"brand", bounded(h.cpu_brand, sizeof(h.cpu_brand))}};
  out["tsc"] = {{"hz", hz},
                {"method", f::tsc_method_name(h.tsc_method)},
                {"uncertainty_ppm", h.tsc_uncertainty_ppm},
                {"invariant", (h.flags & f::kFlagInvariantTsc) != 0},
                {"epsilon_ns", hz ? json(ns_per_tick(hz)) : json(nullptr)}};
  json timers = json::array();
  for (uint32_t i = 0; i < b.timer_count; ++i) {
    const f::SurveyTimer& t = b.timers[i];
    timers.push_back({{"method", f::tsc_method_name(t.method)},
                      {"status", status_name(t.status)},
                      {"tsc_hz", t.tsc_hz},
                      {"ppm_vs_chosen", t.ppm_vs_chosen}});
  }
  out["timers"] = timers;
  out["timer_agreement_ppm"] = timer_agreement_ppm(b);
  const bool countable = (h.flags & f::kFlagSmiCount) != 0;
  out["smi"] = {{"countable", countable},
                {"count", countable ? json(h.smi_count) : json(nullptr)},
                {"window_ms", b.smi_window_ms}};
  json histogram = json::array();
  for (uint32_t k = 0; k < f::kSurveyGapBins; ++k)
    if (b.gap_histogram[k])
      histogram.push_back({{"lo_ticks", 1ull << k}, {"hi_ticks", 2ull << k}, {"count", b.gap_histogram[k]}});
  out["hwlat"] = {{"window_ms", b.hwlat_window_ms},
                  {"threshold_ns", b.hwlat_threshold_ns},
                  {"gaps", b.hwlat_gaps},
                  {"max_gap_ticks", b.hwlat_max_gap_ticks},
                  {"max_gap_us", ticks_ns(b.hwlat_max_gap_ticks, hz) / 1e3},
                  {"histogram", histogram}};
  out["memory"] = {{"usable_bytes", b.usable_memory_bytes},
                   {"gib", b.usable_memory_bytes / double(1ull << 30)},
                   {"events", b.buffer_capacity},
                   {"minutes_at_1m_events_per_s", minutes_at_1m(b.buffer_capacity)}};
  out["keyboard"] = status_name(b.keyboard);
  json disks = json::array();
  for (uint32_t i = 0; i < b.disk_count; ++i) {
    const f::SurveyDisk& d = b.disks[i];
    disks.push_back({{"interface", interface_name(d.interface)},
                     {"port", d.port},
                     {"model", bounded(d.model, sizeof(d.model))},
                     {"sectors", d.sectors},
                     {"logical_block_size", d.logical_block_size},
                     {"size_bytes", d.sectors * d.logical_block_size},
                     {"status", status_name(d.status)},
                     {"labelled", d.status == static_cast<uint32_t>(f::SurveyStatus::Usable)}});
  }
  out["disks"] = disks;
  json probes = json::array();
  for (uint32_t i = 0; i < b.probe_count; ++i) {
    const f::SurveyProbe& p = b.probes[i];
    const ProbeVerdict& one = verdict.probes[i];
    probes.push_back(
        {{"probe", one.name},
         {"source", f::probe_source_name(p.source)},
         {"address", p.address},
         {"status", status_name(p.status)},
         {"detail", bounded(p.detail, sizeof(p.detail))},
         {"reads", p.reads},
         {"read_ticks",
          {{"min", p.read_ticks_min}, {"median", p.read_ticks_median}, {"max", p.read_ticks_max}}},
         {"read_ns",
          {{"min", ticks_ns(p.read_ticks_min, hz)},
           {"median", ticks_ns(p.read_ticks_median, hz)},
           {"max", ticks_ns(p.read_ticks_max, hz)}}},
         {"step_ticks_max", p.step_ticks_max},
         {"step_ns_max", ticks_ns(p.step_ticks_max, hz)},
         {"pi_ns", one.pi_ns ? json(*one.pi_ns) : json(nullptr)},
         {"pci_vendor", p.pci_vendor},
         {"pci_device", p.pci_device},
         {"port_mode", p.port_mode == 0xFFFFFFFFu ? json(nullptr) : json(p.port_mode)},
         {"fit", one.fit},
         {"verdict", one.text}});
  }
  out["probes"] = probes;
  out["fit"] = verdict.fit;
  out["verdict"] = verdict.text;
  return out;
}

}  // namespace ett::host
