// cmdline.cpp: parses the kernel command line word by word into a Config; the first error wins.
#include "config/cmdline.h"

#include <stddef.h>

#include "capture/trit_pattern.h"
#include "config/cmdline_options.h"
#include "lib/format.h"
#include "lib/text.h"

namespace ett::config {

namespace {

// A slice of the command line; never NUL-terminated on its own.
struct Word {
  const char* text;
  uint32_t length;

  bool is(const char* literal) const {
    uint32_t i = 0;
    for (; i < length; ++i)
      if (literal[i] != text[i]) return false;
    return literal[i] == '\0';
  }
  bool starts_with(const char* prefix) const {
    for (uint32_t i = 0; prefix[i] != '\0'; ++i)
      if (i >= length || prefix[i] != text[i]) return false;
    return true;
  }
  bool all_digits() const {
    for (uint32_t i = 0; i < length; ++i)
      if (text[i] < '0' || text[i] > '9') return false;
    return length > 0;
  }
  Word drop(uint32_t count) const { return {text + count, length - count}; }
  int printable_length() const { return static_cast<int>(length); }
};

using ParseResult = Result<void, CmdlineError>;

[[gnu::format(printf, 1, 2)]] Failure<CmdlineError> error(const char* format, ...) {
  CmdlineError e;
  va_list args;
  va_start(args, format);
  lib::vformat(e.message, sizeof(e.message), format, args);
  va_end(args);
  return Failure<CmdlineError>{e};
}

const char* skip_spaces(const char* p) {
  while (lib::is_space(*p)) ++p;
  return p;
}

const char* skip_word(const char* p) {
  while (*p != '\0' && !lib::is_space(*p)) ++p;
  return p;
}

bool parse_unsigned(Word digits, uint32_t base, uint32_t max, uint32_t& out) {
  if (digits.length == 0) return false;
  uint64_t value = 0;
  for (uint32_t i = 0; i < digits.length; ++i) {
    const char c = digits.text[i];
    uint32_t digit;
    if (c >= '0' && c <= '9')
      digit = static_cast<uint32_t>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      digit = static_cast<uint32_t>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F')
      digit = static_cast<uint32_t>(c - 'A' + 10);
    else
      return false;
    value = value * base + digit;
    if (value > max) return false;
  }
  out = static_cast<uint32_t>(value);
  return true;
}

// A value of an option with a fixed set of values.
template <typename T>
struct Choice {
  const char* name;
  T value;
};

template <typename T, size_t N>
bool choose(Word word, const Choice<T> (&choices)[N], T& out) {
  for (const Choice<T>& choice : choices) {
    if (word.is(choice.name)) {
      out = choice.value;
      return true;
    }
  }
  return false;
}

// The names are the ones trace_format.h gives the host tools (layout_name, mode_name, ...).
constexpr Choice<format::ProbeSource> kProbes[] = {
    {"ivshmem", format::ProbeSource::Ivshmem}, {"lpt", format::ProbeSource::Lpt},
    {"pci-lpt", format::ProbeSource::PciLpt},  {"lpt-loopback", format::ProbeSource::LptLoopback},
    {"uart", format::ProbeSource::Uart},       {"uart-loopback", format::ProbeSource::UartLoopback},
    {"pci-uart", format::ProbeSource::PciUart}};
// The sources that take :BASE (an I/O port base).
struct BasedProbe {
  const char* prefix;
  format::ProbeSource source;
};
constexpr BasedProbe kBasedProbes[] = {{"lpt:", format::ProbeSource::Lpt},
                                       {"uart:", format::ProbeSource::Uart},
                                       {"uart-loopback:", format::ProbeSource::UartLoopback}};
constexpr Choice<format::Layout> kLayouts[] = {{"2x4", format::Layout::Double2x4},
                                               {"8x1", format::Layout::Single8x1},
                                               {"4x2", format::Layout::Quad4x2},
                                               {"1x8", format::Layout::Byte1x8}};
constexpr Choice<ExitAction> kExits[] = {{"qemu", ExitAction::Qemu}, {"halt", ExitAction::Halt}};
constexpr Choice<DumpTarget> kDumps[] = {
    {"ata", DumpTarget::Ata}, {"serial", DumpTarget::Serial}, {"none", DumpTarget::None}};
constexpr Choice<UsbAction> kUsbs[] = {
    {"auto", UsbAction::Auto}, {"take", UsbAction::Take}, {"keep", UsbAction::Keep}};
constexpr Choice<bool> kAutos[] = {{"0", false}, {"1", true}};
constexpr Choice<format::CaptureMode> kModes[] = {{"capture", format::CaptureMode::Capture},
                                                  {"calibrate", format::CaptureMode::Calibrate},
                                                  {"hwlat", format::CaptureMode::HwLat},
                                                  {"survey", format::CaptureMode::Survey}};

// probe=pci-uart:BUS:DEV.FN, in hex as lspci prints it.
ParseResult parse_pci_uart(Word value, Config& config) {
  const Word address = value.drop(sizeof("pci-uart:") - 1);
  uint32_t bus = 0, slot = 0, function = 0;
  const bool shaped = address.length >= 6 && address.text[address.length - 5] == ':' &&
                      address.text[address.length - 2] == '.';
  if (!shaped || !parse_unsigned(Word{address.text, address.length - 5}, 16, 0xFF, bus) ||
      !parse_unsigned(Word{address.text + address.length - 4, 2}, 16, 0x1F, slot) ||
      !parse_unsigned(Word{address.text + address.length - 1, 1}, 16, 7, function))
    return error("probe: '%.*s' is not a PCI address (e.g. pci-uart:01:00.0, as lspci prints it)",
                 value.printable_length(), value.text);
  config.probe = format::ProbeSource::PciUart;
  config.probe_pci_given = true;
  config.probe_pci_bus = static_cast<uint8_t>(bus);
  config.probe_pci_slot = static_cast<uint8_t>(slot);
  config.probe_pci_function = static_cast<uint8_t>(function);
  return {};
}

// probe=lpt:BASE, uart:BASE, uart-loopback:BASE; BASE in decimal or 0x-hex.
ParseResult parse_probe(Word value, Config& config) {
  if (choose(value, kProbes, config.probe)) return {};
  if (value.starts_with("pci-uart:")) return parse_pci_uart(value, config);
  for (const BasedProbe& based : kBasedProbes) {
    if (!value.starts_with(based.prefix)) continue;
    size_t length = 0;
    while (based.prefix[length] != '\0') ++length;
    const Word base = value.drop(length);
    const bool hex = base.starts_with("0x") || base.starts_with("0X");
    uint32_t port = 0;
    if (!parse_unsigned(hex ? base.drop(2) : base, hex ? 16 : 10, 0xFFFF, port) || port == 0)
      return error("probe: '%.*s' is not an I/O port base (e.g. lpt:0x378, uart:0x2f8)",
                   value.printable_length(), value.text);
    config.probe = based.source;
    config.probe_io_base = static_cast<uint16_t>(port);
    return {};
  }
  return error(
      "probe: unknown source '%.*s' (expected ivshmem, lpt, lpt:BASE, pci-lpt, lpt-loopback, uart, "
      "uart:BASE, "
      "uart-loopback or pci-uart[:BUS:DEV.FN])",
      value.printable_length(), value.text);
}

ParseResult parse_layout(Word value, Config& config) {
  if (choose(value, kLayouts, config.layout)) return {};
  return error("layout: unknown layout '%.*s' (expected 2x4, 8x1, 4x2 or 1x8)", value.printable_length(),
               value.text);
}

// SECONDS: digits, optionally '.' and 1 to 3 more digits; stored as milliseconds, must be > 0.
ParseResult parse_limit(Word value, Config& config) {
  constexpr uint32_t kMaxSeconds = 0xFFFFFFFFu / 1000;
  uint32_t dot = 0;
  while (dot < value.length && value.text[dot] != '.') ++dot;
  const bool has_dot = dot < value.length;
  const Word whole{value.text, dot};
  const Word fraction = has_dot ? value.drop(dot + 1) : Word{value.text + value.length, 0};
  if (!whole.all_digits() || (has_dot && !fraction.all_digits()))
    return error("limit: '%.*s' is not a number of seconds", value.printable_length(), value.text);
  if (fraction.length > 3)
    return error("limit: '%.*s' has more than 3 decimals (milliseconds)", value.printable_length(),
                 value.text);
  uint32_t seconds = 0;
  uint32_t milliseconds = 0;
  if (!parse_unsigned(whole, 10, kMaxSeconds, seconds) ||
      (has_dot && !parse_unsigned(fraction, 10, 999, milliseconds)))
    return error("limit: '%.*s' is too long (at most %u seconds)", value.printable_length(), value.text,
                 kMaxSeconds);
  for (uint32_t i = fraction.length; i < 3; ++i) milliseconds *= 10;
  const uint64_t total_ms = uint64_t{seconds} * 1000 + milliseconds;
  if (total_ms > 0xFFFFFFFFu)
    return error("limit: '%.*s' is too long (at most %u seconds)", value.printable_length(), value.text,
                 kMaxSeconds);
  config.limit_ms = static_cast<uint32_t>(total_ms);
  if (config.limit_ms == 0)
    return error("limit: '%.*s' must be more than 0 seconds", value.printable_length(), value.text);
  return {};
}

ParseResult parse_exit(Word value, Config& config) {
  if (choose(value, kExits, config.exit)) return {};
  return error("exit: unknown action '%.*s' (expected qemu or halt)", value.printable_length(), value.text);
}

ParseResult parse_dump(Word value, Config& config) {
  if (choose(value, kDumps, config.dump)) return {};
  return error("dump: unknown target '%.*s' (expected ata, serial or none)", value.printable_length(),
               value.text);
}

ParseResult parse_auto(Word value, Config& config) {
  if (choose(value, kAutos, config.auto_start)) return {};
  return error("auto: '%.*s' must be 0 or 1", value.printable_length(), value.text);
}

ParseResult parse_mode(Word value, Config& config) {
  if (choose(value, kModes, config.mode)) return {};
  return error("mode: unknown mode '%.*s' (expected capture, calibrate, hwlat or survey)",
               value.printable_length(), value.text);
}

// trigger=/filter=: eight trits, D7 first (capture/trit_pattern.h).
ParseResult parse_pattern(const char* key, Word value, bool allow_zero, capture::TritPattern& out) {
  const capture::TritError e = capture::parse_trits(value.text, value.length, allow_zero, out);
  if (e == capture::TritError::Length)
    return error("%s: '%.*s' must be 8 trits, D7 first (e.g. 1X0XXXXX)", key, value.printable_length(),
                 value.text);
  if (e != capture::TritError::None)
    return error(allow_zero ? "%s: '%.*s' may hold only 1, 0 and X" : "%s: '%.*s' may hold only 1 and X", key,
                 value.printable_length(), value.text);
  return {};
}

ParseResult parse_trigger(Word value, Config& config) {
  capture::TritPattern pattern;
  ETT_TRY(parse_pattern("trigger", value, true, pattern));
  if (pattern.mask == 0)
    return error("trigger: '%.*s' has no 1 or 0: it would match always", value.printable_length(),
                 value.text);
  config.trigger_enabled = true;
  config.trigger_mask = pattern.mask;
  config.trigger_match = pattern.match;
  return {};
}

ParseResult parse_filter(Word value, Config& config) {
  capture::TritPattern pattern;
  ETT_TRY(parse_pattern("filter", value, false, pattern));
  if (pattern.mask == 0)
    return error("filter: '%.*s' has no 1: no line would give events", value.printable_length(), value.text);
  config.filter_mask = pattern.mask;
  return {};
}

ParseResult parse_pretrigger(Word value, Config& config) {
  if (!parse_unsigned(value, 10, 0xFFFFFFFFu, config.pretrigger))
    return error("pretrigger: '%.*s' is not a number of events", value.printable_length(), value.text);
  return {};
}

// stop=zero | stop=code:P:C (P a probe number, C a code; decimal or 0x-hex).
ParseResult parse_stop(Word value, Config& config) {
  if (value.is("zero")) {
    config.stop_rule = format::StopReason::ZeroCode;
    return {};
  }
  if (!value.starts_with("code:"))
    return error("stop: unknown rule '%.*s' (expected zero or code:P:C)", value.printable_length(),
                 value.text);
  const Word rest = value.drop(5);
  uint32_t colon = 0;
  while (colon < rest.length && rest.text[colon] != ':') ++colon;
  const Word probe{rest.text, colon};
  const Word code = colon < rest.length ? rest.drop(colon + 1) : Word{rest.text + rest.length, 0};
  const bool hex = code.starts_with("0x") || code.starts_with("0X");
  uint32_t p = 0, c = 0;
  if (colon == rest.length || !parse_unsigned(probe, 10, 8, p) || p == 0 ||
      !parse_unsigned(hex ? code.drop(2) : code, hex ? 16 : 10, 255, c))
    return error("stop: '%.*s' is not code:PROBE:CODE (e.g. code:2:15)", value.printable_length(),
                 value.text);
  config.stop_rule = format::StopReason::CodeMatch;
  config.stop_probe = static_cast<uint8_t>(p);
  config.stop_code = static_cast<uint8_t>(c);
  return {};
}

ParseResult parse_keyboard(Word value, Config& config) {
  if (value.is("1"))
    config.keyboard = true;
  else if (value.is("0"))
    config.keyboard = false;
  else
    return error("keyboard: '%.*s' must be 0 or 1", value.printable_length(), value.text);
  return {};
}

ParseResult parse_uart_selftest(Word value, Config& config) {
  if (value.is("1"))
    config.uart_selftest = true;
  else if (value.is("0"))
    config.uart_selftest = false;
  else
    return error("uart-selftest: '%.*s' must be 0 or 1", value.printable_length(), value.text);
  return {};
}

ParseResult parse_threshold(Word value, Config& config) {
  if (!parse_unsigned(value, 10, 1'000'000'000u, config.hwlat_threshold_ns) || config.hwlat_threshold_ns == 0)
    return error("threshold: '%.*s' is not a number of nanoseconds (1 to 1000000000)",
                 value.printable_length(), value.text);
  return {};
}

ParseResult parse_bench(Word value, Config& config) {
  if (!parse_unsigned(value, 10, kMaxBenchWindows, config.bench_windows) ||
      config.bench_windows < kMinBenchWindows)
    return error("bench: '%.*s' is not a number of window pairs (%u to %u)", value.printable_length(),
                 value.text, kMinBenchWindows, kMaxBenchWindows);
  return {};
}

ParseResult parse_usb(Word value, Config& config) {
  if (choose(value, kUsbs, config.usb)) return {};
  return error("usb: '%.*s' must be auto, take or keep", value.printable_length(), value.text);
}

ParseResult parse_buffer(Word value, Config& config) {
  if (value.is("all"))
    config.buffer = BufferPlacement::All;
  else if (value.is("above4g"))
    config.buffer = BufferPlacement::Above4G;
  else if (value.is("split"))
    config.buffer = BufferPlacement::Split;
  else
    return error("buffer: '%.*s' must be all, above4g or split", value.printable_length(), value.text);
  return {};
}

// The parser of each option of kCmdlineOptions (cmdline_options.h), in its order: parse_word finds a key in
// that table and runs the parser at the same index. The key is repeated here so that the compiler checks the
// pairing.
struct OptionParser {
  const char* key;
  ParseResult (*parse)(Word value, Config& config);
};

constexpr OptionParser kParsers[] = {
    {"probe", parse_probe},
    {"layout", parse_layout},
    {"limit", parse_limit},
    {"exit", parse_exit},
    {"dump", parse_dump},
    {"mode", parse_mode},
    {"auto", parse_auto},
    {"trigger", parse_trigger},
    {"pretrigger", parse_pretrigger},
    {"filter", parse_filter},
    {"stop", parse_stop},
    {"keyboard", parse_keyboard},
    {"threshold", parse_threshold},
    {"bench", parse_bench},
    {"usb", parse_usb},
    {"buffer", parse_buffer},
    {"uart-selftest", parse_uart_selftest},
};
constexpr uint32_t kOptionCount = kCmdlineOptionCount;
static_assert(sizeof(kParsers) / sizeof(kParsers[0]) == kOptionCount, "a parser per option of the table");

constexpr bool same_text(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
constexpr bool parsers_match_table() {
  for (uint32_t i = 0; i < kOptionCount; ++i)
    if (!same_text(kParsers[i].key, kCmdlineOptions[i].key)) return false;
  return true;
}
static_assert(parsers_match_table(), "kParsers must follow kCmdlineOptions' order");
// The numbers the table's text gives (threshold= and bench=).
static_assert(kDefaultHwlatThresholdNs == 1000 && kMinBenchWindows == 20 && kMaxBenchWindows == 1000,
              "update the threshold and bench rows of cmdline_options.h");

ParseResult parse_word(Word word, Config& config, bool (&seen)[kOptionCount]) {
  uint32_t equals = 0;
  while (equals < word.length && word.text[equals] != '=') ++equals;
  if (equals == word.length)
    return error("option '%.*s' is not key=value", word.printable_length(), word.text);
  const Word key{word.text, equals};
  const Word value = word.drop(equals + 1);
  for (uint32_t i = 0; i < kOptionCount; ++i) {
    if (!key.is(kCmdlineOptions[i].key)) continue;
    if (value.length == 0)
      return error("option '%.*s' has an empty value", word.printable_length(), word.text);
    if (seen[i]) return error("option '%.*s' is given twice", word.printable_length(), word.text);
    seen[i] = true;
    return kParsers[i].parse(value, config);
  }
  return error("unknown option '%.*s'", word.printable_length(), word.text);
}

// Combinations that parse word by word but make no sense together.
ParseResult check_supported(const Config& config) {
  const bool capture = config.mode == format::CaptureMode::Capture;
  if (!capture &&
      (config.trigger_enabled || config.filter_mask != 0xFF || config.stop_rule != format::StopReason::None))
    return error("trigger=, filter= and stop= apply to mode=capture only, not mode=%s",
                 format::mode_name(static_cast<uint32_t>(config.mode)));
  if (config.pretrigger != 0 && !config.trigger_enabled) return error("pretrigger= needs a trigger=");
  if (config.stop_rule == format::StopReason::CodeMatch) {
    const uint32_t bits = format::layout_bits_per_probe(static_cast<uint32_t>(config.layout));
    const uint32_t probes = bits ? 8 / bits : 0;
    if (config.stop_probe > probes || config.stop_code >= (1u << bits))
      return error("stop=code:%u:%u does not exist under layout=%s (%u probes of %u bits)", config.stop_probe,
                   config.stop_code, format::layout_name(static_cast<uint32_t>(config.layout)), probes, bits);
  }
  if (config.hwlat_threshold_ns != 0 && config.mode != format::CaptureMode::HwLat &&
      config.mode != format::CaptureMode::Survey)
    return error("threshold= applies to mode=hwlat and mode=survey only");
  if (config.bench_windows != 0 && !capture) return error("bench= applies to mode=capture only");
  return {};
}

// GRUB 2 calls itself "GRUB 2.06" (its 1.9x betas "GRUB 1.99"); GRUB Legacy is "GNU GRUB 0.97".
bool is_grub2(const char* loader_name) {
  constexpr char kGrub[] = "GRUB ";
  for (const char* p = loader_name; *p != '\0'; ++p) {
    size_t i = 0;
    while (kGrub[i] != '\0' && p[i] == kGrub[i]) ++i;
    if (kGrub[i] == '\0' && p[i] >= '1' && p[i] <= '9') return true;
  }
  return false;
}

}  // namespace

const char* kernel_arguments(const char* cmdline, const char* loader_name) {
  const char* p = skip_spaces(cmdline);
  return is_grub2(loader_name) ? p : skip_spaces(skip_word(p));
}

bool has_word(const char* cmdline, const char* word) {
  for (const char* p = skip_spaces(cmdline); *p != '\0'; p = skip_spaces(skip_word(p))) {
    const char* end = skip_word(p);
    if (Word{p, static_cast<uint32_t>(end - p)}.is(word)) return true;
  }
  return false;
}

Result<Config, CmdlineError> parse_cmdline(const char* arguments) {
  Config config;
  bool seen[kOptionCount] = {};
  for (const char* p = skip_spaces(arguments); *p != '\0'; p = skip_spaces(p)) {
    const char* end = skip_word(p);
    auto parsed = parse_word(Word{p, static_cast<uint32_t>(end - p)}, config, seen);
    if (!parsed) return parsed.failure();
    p = end;
  }
  auto supported = check_supported(config);
  if (!supported) return supported.failure();
  return config;
}

}  // namespace ett::config
