// trace_format_doc.cpp: docs/reference/trace-format.md, from the one on-disk format header the kernel and the
// host tools include (kernel/include/ett/trace_format.h). Offsets, sizes and constant values come from the
// compiler (the tables below); names, types, order and meanings from the header's text, which is read and
// checked against those tables, so that a field added to the header without a row here fails the generator.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "ett/trace_format.h"
#include "reference.h"

namespace ett::reference {

namespace {

namespace f = ett::format;

constexpr const char* kThisFile = "host-tools/reference/trace_format_doc.cpp";

struct FieldLayout {
  const char* name;
  size_t offset;
  size_t size;
};

#define ETT_FIELD(S, field)                            \
  FieldLayout {                                        \
#field, offsetof(f::S, field), sizeof(f::S::field) \
  }

constexpr FieldLayout kDiskLabelFields[] = {
    ETT_FIELD(DiskLabel, magic),         ETT_FIELD(DiskLabel, format_version),
    ETT_FIELD(DiskLabel, sector_size),   ETT_FIELD(DiskLabel, disk_uuid),
    ETT_FIELD(DiskLabel, total_sectors), ETT_FIELD(DiskLabel, first_session_lba),
    ETT_FIELD(DiskLabel, created_unix),  ETT_FIELD(DiskLabel, name),
    ETT_FIELD(DiskLabel, reserved),      ETT_FIELD(DiskLabel, crc),
};
constexpr FieldLayout kSessionHeaderFields[] = {
    ETT_FIELD(SessionHeader, magic),
    ETT_FIELD(SessionHeader, format_version),
    ETT_FIELD(SessionHeader, status),
    ETT_FIELD(SessionHeader, session_number),
    ETT_FIELD(SessionHeader, record_size),
    ETT_FIELD(SessionHeader, chunk_sectors),
    ETT_FIELD(SessionHeader, flags),
    ETT_FIELD(SessionHeader, start_lba),
    ETT_FIELD(SessionHeader, reserved_sectors),
    ETT_FIELD(SessionHeader, event_count),
    ETT_FIELD(SessionHeader, chunk_count),
    ETT_FIELD(SessionHeader, tsc_hz),
    ETT_FIELD(SessionHeader, tsc_method),
    ETT_FIELD(SessionHeader, tsc_uncertainty_ppm),
    ETT_FIELD(SessionHeader, capture_start_tsc),
    ETT_FIELD(SessionHeader, capture_end_tsc),
    ETT_FIELD(SessionHeader, buffer_capacity),
    ETT_FIELD(SessionHeader, captured_at_unix),
    ETT_FIELD(SessionHeader, stop_reason),
    ETT_FIELD(SessionHeader, probe_source),
    ETT_FIELD(SessionHeader, layout),
    ETT_FIELD(SessionHeader, mode),
    ETT_FIELD(SessionHeader, probe_address),
    ETT_FIELD(SessionHeader, initial_lines),
    ETT_FIELD(SessionHeader, final_lines),
    ETT_FIELD(SessionHeader, trigger_mask),
    ETT_FIELD(SessionHeader, trigger_match),
    ETT_FIELD(SessionHeader, filter_mask),
    ETT_FIELD(SessionHeader, stop_probe),
    ETT_FIELD(SessionHeader, stop_code),
    ETT_FIELD(SessionHeader, reserved0),
    ETT_FIELD(SessionHeader, limit_ms),
    ETT_FIELD(SessionHeader, pretrigger),
    ETT_FIELD(SessionHeader, hwlat_threshold_ns),
    ETT_FIELD(SessionHeader, disk_uuid),
    ETT_FIELD(SessionHeader, cpu_vendor),
    ETT_FIELD(SessionHeader, cpu_brand),
    ETT_FIELD(SessionHeader, cmdline),
    ETT_FIELD(SessionHeader, armed_tsc),
    ETT_FIELD(SessionHeader, pretrigger_events),
    ETT_FIELD(SessionHeader, loop_iterations),
    ETT_FIELD(SessionHeader, floor_milliticks),
    ETT_FIELD(SessionHeader, smi_count),
    ETT_FIELD(SessionHeader, tsc_hz_pit),
    ETT_FIELD(SessionHeader, stall_count),
    ETT_FIELD(SessionHeader, stall_records),
    ETT_FIELD(SessionHeader, longest_check_ticks),
    ETT_FIELD(SessionHeader, typical_check_ticks),
    ETT_FIELD(SessionHeader, stall_threshold_ticks),
    ETT_FIELD(SessionHeader, longest_stall_ticks),
    ETT_FIELD(SessionHeader, stall_table_crc),
    ETT_FIELD(SessionHeader, crc),
};
constexpr FieldLayout kStallRecordFields[] = {
    ETT_FIELD(StallRecord, start_tsc),
    ETT_FIELD(StallRecord, length_ticks),
};
constexpr FieldLayout kEventRecordFields[] = {
    ETT_FIELD(EventRecord, tsc),   ETT_FIELD(EventRecord, probe), ETT_FIELD(EventRecord, code),
    ETT_FIELD(EventRecord, lines), ETT_FIELD(EventRecord, flags), ETT_FIELD(EventRecord, aux),
};
constexpr FieldLayout kChunkHeaderFields[] = {
    ETT_FIELD(ChunkHeader, magic),        ETT_FIELD(ChunkHeader, session_number),
    ETT_FIELD(ChunkHeader, chunk_index),  ETT_FIELD(ChunkHeader, first_seq),
    ETT_FIELD(ChunkHeader, record_count), ETT_FIELD(ChunkHeader, crc),
};

constexpr FieldLayout kSurveyTimerFields[] = {
    ETT_FIELD(SurveyTimer, method),        ETT_FIELD(SurveyTimer, status),   ETT_FIELD(SurveyTimer, tsc_hz),
    ETT_FIELD(SurveyTimer, ppm_vs_chosen), ETT_FIELD(SurveyTimer, reserved),
};
constexpr FieldLayout kSurveyProbeFields[] = {
    ETT_FIELD(SurveyProbe, source),
    ETT_FIELD(SurveyProbe, address),
    ETT_FIELD(SurveyProbe, status),
    ETT_FIELD(SurveyProbe, read_ticks_min),
    ETT_FIELD(SurveyProbe, read_ticks_median),
    ETT_FIELD(SurveyProbe, read_ticks_max),
    ETT_FIELD(SurveyProbe, step_ticks_max),
    ETT_FIELD(SurveyProbe, reads),
    ETT_FIELD(SurveyProbe, pci_vendor),
    ETT_FIELD(SurveyProbe, pci_device),
    ETT_FIELD(SurveyProbe, port_mode),
    ETT_FIELD(SurveyProbe, detail),
};
constexpr FieldLayout kSurveyDiskFields[] = {
    ETT_FIELD(SurveyDisk, interface),          ETT_FIELD(SurveyDisk, status), ETT_FIELD(SurveyDisk, sectors),
    ETT_FIELD(SurveyDisk, logical_block_size), ETT_FIELD(SurveyDisk, port),   ETT_FIELD(SurveyDisk, model),
    ETT_FIELD(SurveyDisk, disk_uuid),
};
constexpr FieldLayout kSurveyBlockFields[] = {
    ETT_FIELD(SurveyBlock, magic),
    ETT_FIELD(SurveyBlock, version),
    ETT_FIELD(SurveyBlock, timer_count),
    ETT_FIELD(SurveyBlock, probe_count),
    ETT_FIELD(SurveyBlock, disk_count),
    ETT_FIELD(SurveyBlock, usable_memory_bytes),
    ETT_FIELD(SurveyBlock, buffer_capacity),
    ETT_FIELD(SurveyBlock, keyboard),
    ETT_FIELD(SurveyBlock, smi_window_ms),
    ETT_FIELD(SurveyBlock, hwlat_window_ms),
    ETT_FIELD(SurveyBlock, hwlat_threshold_ns),
    ETT_FIELD(SurveyBlock, hwlat_gaps),
    ETT_FIELD(SurveyBlock, hwlat_max_gap_ticks),
    ETT_FIELD(SurveyBlock, gap_histogram),
    ETT_FIELD(SurveyBlock, timers),
    ETT_FIELD(SurveyBlock, probes),
    ETT_FIELD(SurveyBlock, disks),
    ETT_FIELD(SurveyBlock, reserved),
    ETT_FIELD(SurveyBlock, crc),
};

#undef ETT_FIELD

struct StructLayout {
  const char* name;
  size_t size;
  std::span<const FieldLayout> fields;
};

constexpr StructLayout kStructs[] = {
    {"DiskLabel", sizeof(f::DiskLabel), kDiskLabelFields},
    {"SessionHeader", sizeof(f::SessionHeader), kSessionHeaderFields},
    {"StallRecord", sizeof(f::StallRecord), kStallRecordFields},
    {"EventRecord", sizeof(f::EventRecord), kEventRecordFields},
    {"ChunkHeader", sizeof(f::ChunkHeader), kChunkHeaderFields},
    {"SurveyTimer", sizeof(f::SurveyTimer), kSurveyTimerFields},
    {"SurveyProbe", sizeof(f::SurveyProbe), kSurveyProbeFields},
    {"SurveyDisk", sizeof(f::SurveyDisk), kSurveyDiskFields},
    {"SurveyBlock", sizeof(f::SurveyBlock), kSurveyBlockFields},
};

std::string magic(const char* bytes, size_t size) {
  return std::string(bytes, size);
}

struct ConstantValue {
  const char* name;
  std::string value;
};

std::vector<ConstantValue> constant_values() {
  return {
      {"kSectorSize", std::to_string(f::kSectorSize)},
      {"kFormatVersion", std::to_string(f::kFormatVersion)},
      {"kSessionFormatVersion", std::to_string(f::kSessionFormatVersion)},
      {"kStallTableSectors", std::to_string(f::kStallTableSectors)},
      {"kFirstSessionLba", std::to_string(f::kFirstSessionLba)},
      {"kChunkSectors", std::to_string(f::kChunkSectors)},
      {"kChunkBytes", std::to_string(f::kChunkBytes)},
      {"kDiskMagic", "\"" + magic(f::kDiskMagic, sizeof(f::kDiskMagic)) + "\""},
      {"kSessionMagic", "\"" + magic(f::kSessionMagic, sizeof(f::kSessionMagic)) + "\""},
      {"kChunkMagic", "\"" + magic(f::kChunkMagic, sizeof(f::kChunkMagic)) + "\""},
      {"kMaxStallRecords", std::to_string(f::kMaxStallRecords)},
      {"kRecordsPerChunk", std::to_string(f::kRecordsPerChunk)},
      {"kSurveySectors", std::to_string(f::kSurveySectors)},
      {"kSurveyMagic", "\"" + magic(f::kSurveyMagic, sizeof(f::kSurveyMagic)) + "\""},
      {"kSurveyVersion", std::to_string(f::kSurveyVersion)},
      {"kSurveyMaxTimers", std::to_string(f::kSurveyMaxTimers)},
      {"kSurveyMaxProbes", std::to_string(f::kSurveyMaxProbes)},
      {"kSurveyMaxDisks", std::to_string(f::kSurveyMaxDisks)},
      {"kSurveyGapBins", std::to_string(f::kSurveyGapBins)},
      {"kSurveyReservedBytes", std::to_string(f::kSurveyReservedBytes)},
  };
}

// The enums whose values have names in the header (the names the kernel's screen and the host print).
struct EnumNames {
  const char* name;
  const char* (*value_name)(uint32_t);
};

constexpr EnumNames kEnumNames[] = {
    {"ProbeSource", f::probe_source_name}, {"Layout", f::layout_name},        {"CaptureMode", f::mode_name},
    {"StopReason", f::stop_reason_name},   {"TscMethod", f::tsc_method_name},
};

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// "uint32_t crc;  // CRC32C of ..." -> code "uint32_t crc;", comment "CRC32C of ...".
void split_comment(const std::string& line, std::string& code, std::string& comment) {
  const size_t at = line.find("//");
  code = trim(line.substr(0, at));
  comment = at == std::string::npos ? "" : trim(line.substr(at + 2));
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

struct Row {  // a field, or (name empty) a note between fields
  std::string type, name, meaning;
};

// The header's lines; `at` walks them.
class Header {
 public:
  explicit Header(std::vector<std::string> lines) : m_lines(std::move(lines)) {}

  // The comment lines right above line `index`, joined.
  std::string comment_above(size_t index) const {
    std::vector<std::string> lines;
    for (size_t i = index; i > 0 && starts_with(trim(m_lines[i - 1]), "//"); --i)
      lines.insert(lines.begin(), trim(trim(m_lines[i - 1]).substr(2)));
    return join(lines, " ");
  }

  // The file's opening comment, as written.
  std::string overview() const {
    std::string out;
    for (const std::string& line : m_lines) {
      if (!starts_with(line, "//")) break;
      out += (line.size() > 3 ? line.substr(3) : "") + "\n";
    }
    return out;
  }

  size_t find(const std::string& prefix) const {
    for (size_t i = 0; i < m_lines.size(); ++i)
      if (starts_with(m_lines[i], prefix)) return i;
    return m_lines.size();
  }

  // The rows of `struct NAME {`: fields with their trailing comments, standalone comments as notes.
  host::Expected<std::vector<Row>> struct_rows(const std::string& name) const {
    size_t i = find("struct " + name + " {");
    if (i == m_lines.size()) return host::make_error(host::ErrorKind::Usage, "no struct " + name);
    std::vector<Row> rows;
    std::string statement, meaning;
    std::vector<std::string> note;
    for (++i; i < m_lines.size() && !starts_with(m_lines[i], "};"); ++i) {
      std::string code, comment;
      split_comment(m_lines[i], code, comment);
      if (code.empty() && statement.empty()) {
        note.push_back(comment);
        continue;
      }
      if (!note.empty()) rows.push_back({"", "", join(note, " ")});
      note.clear();
      statement += (statement.empty() ? "" : " ") + code;
      if (!comment.empty()) meaning += (meaning.empty() ? "" : " ") + comment;
      if (statement.back() != ';') continue;
      statement.pop_back();
      // "uint8_t disk_uuid[16]" -> type "uint8_t[16]", name "disk_uuid".
      const size_t space = statement.rfind(' ');
      std::string type = trim(statement.substr(0, space)), field = statement.substr(space + 1);
      const size_t bracket = field.find('[');
      if (bracket != std::string::npos) {
        type += field.substr(bracket);
        field = field.substr(0, bracket);
      }
      rows.push_back({type, field, meaning});
      statement.clear();
      meaning.clear();
    }
    if (!note.empty()) rows.push_back({"", "", join(note, " ")});
    return rows;
  }

  const std::vector<std::string>& lines() const { return m_lines; }

 private:
  std::vector<std::string> m_lines;
};

host::Expected<std::string> structs_doc(const Header& header) {
  std::string out;
  for (const StructLayout& layout : kStructs) {
    ETT_TRY_ASSIGN(std::vector<Row> rows, header.struct_rows(layout.name));
    const size_t line = header.find(std::string("struct ") + layout.name + " {");
    out += fmt::format("\n## {} ({} bytes)\n\n", layout.name, layout.size);
    if (const std::string note = header.comment_above(line); !note.empty()) out += note + "\n\n";
    out += "| offset | size | type | field | meaning |\n| --- | --- | --- | --- | --- |\n";
    size_t next = 0;
    for (const Row& row : rows) {
      if (row.name.empty()) {
        out += fmt::format("| | | | | {} |\n", cell(row.meaning));
        continue;
      }
      if (next >= layout.fields.size() || row.name != layout.fields[next].name)
        return host::make_error(host::ErrorKind::Usage,
                                fmt::format("{}::{} is not the next field of the table in {} (add it there)",
                                            layout.name, row.name, kThisFile));
      const FieldLayout& field = layout.fields[next++];
      out += fmt::format("| {} | {} | `{}` | `{}` | {} |\n", field.offset, field.size, row.type, row.name,
                         cell(row.meaning));
    }
    if (next != layout.fields.size())
      return host::make_error(host::ErrorKind::Usage,
                              fmt::format("{}::{} is in the table of {} but not in the header", layout.name,
                                          layout.fields[next].name, kThisFile));
  }
  return out;
}

host::Expected<std::string> constants_doc(const Header& header) {
  const std::vector<ConstantValue> values = constant_values();
  std::string out = "\n## Constants\n\n| constant | value | meaning |\n| --- | --- | --- |\n";
  size_t found = 0;
  const std::vector<std::string>& lines = header.lines();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!starts_with(lines[i], "inline constexpr ")) continue;
    std::string code, comment;
    split_comment(lines[i], code, comment);
    const std::string declared = trim(code.substr(0, code.find('=')));
    std::string name = declared.substr(declared.rfind(' ') + 1);
    name = name.substr(0, name.find('['));
    const auto value =
        std::find_if(values.begin(), values.end(), [&](const ConstantValue& v) { return name == v.name; });
    if (value == values.end())
      return host::make_error(
          host::ErrorKind::Usage,
          fmt::format("constant {} has no value in the table of {} (add it there)", name, kThisFile));
    ++found;
    std::string meaning = header.comment_above(i);
    if (!comment.empty()) meaning += (meaning.empty() ? "" : " ") + comment;
    out += fmt::format("| `{}` | `{}` | {} |\n", name, value->value, cell(meaning));
  }
  if (found != values.size())
    return host::make_error(
        host::ErrorKind::Usage,
        fmt::format("the table of {} names a constant the header does not have", kThisFile));
  return out;
}

std::string enums_doc(const Header& header) {
  std::string out;
  const std::vector<std::string>& lines = header.lines();
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool scoped = starts_with(lines[i], "enum class ");
    if (!scoped && !starts_with(lines[i], "enum ")) continue;
    const size_t name_at = scoped ? 11 : 5;
    const std::string name = lines[i].substr(name_at, lines[i].find(' ', name_at) - name_at);
    const auto names = std::find_if(std::begin(kEnumNames), std::end(kEnumNames),
                                    [&](const EnumNames& e) { return name == e.name; });
    const bool named = names != std::end(kEnumNames);
    out += fmt::format("\n### {}\n\n", name);
    if (const std::string note = header.comment_above(i); !note.empty()) out += note + "\n\n";
    out += named ? "| enumerator | value | name | meaning |\n| --- | --- | --- | --- |\n"
                 : "| enumerator | value | meaning |\n| --- | --- | --- |\n";
    for (++i; i < lines.size() && !starts_with(lines[i], "};"); ++i) {
      std::string code, comment;
      split_comment(lines[i], code, comment);
      if (code.empty()) continue;
      const std::string enumerator = trim(code.substr(0, code.find('=')));
      std::string value = trim(code.substr(code.find('=') + 1));
      if (!value.empty() && value.back() == ',') value.pop_back();
      if (named)
        out += fmt::format("| `{}` | `{}` | `{}` | {} |\n", enumerator, value,
                           names->value_name(static_cast<uint32_t>(std::stoul(value))), cell(comment));
      else
        out += fmt::format("| `{}` | `{}` | {} |\n", enumerator, value, cell(comment));
    }
  }
  return out;
}

}  // namespace

host::Expected<std::string> trace_format_doc(const std::string& source_dir) {
  const std::string path = source_dir + "/kernel/include/ett/trace_format.h";
  std::ifstream in(path);
  if (!in) return host::make_error(host::ErrorKind::Io, host::errno_message(path, errno));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const Header header(std::move(lines));
  std::string out =
      "# Trace format\n\n"
      "The on-disk format of a trace disk, defined once in `kernel/include/ett/trace_format.h`, which the "
      "kernel "
      "and the host tools both include. Little-endian; offsets and sizes in bytes.\n\n```text\n" +
      header.overview() + "```\n";
  ETT_TRY_ASSIGN(std::string constants, constants_doc(header));
  out += constants;
  out += "\n## Enumerations\n" + enums_doc(header);
  ETT_TRY_ASSIGN(std::string structs, structs_doc(header));
  return out + structs;
}

}  // namespace ett::reference
