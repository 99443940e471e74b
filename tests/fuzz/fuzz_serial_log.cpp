// fuzz_serial_log.cpp: the dump=serial log reader (ETTX lines) over arbitrary text, then the image it
// describes through TraceImage. When the first byte is odd, every ETTX line's trailing CRC is rewritten to
// match its body, so that the fuzzer reaches the LBA, offset and hex parsing behind the checksum.
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "ett/crc32c.h"
#include "fuzz_support.h"
#include "image/serial_log.h"
#include "image/trace_image.h"

namespace {

std::string fix_line_crcs(std::string_view text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    const size_t space = line.rfind(' ');
    if (line.starts_with("ETTX ") && space != std::string::npos && space >= 5)
      line = line.substr(0, space) + fmt::format(" {:08x}", ett::crc32c(line.data(), space));
    out += line;
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) text = fix_line_crcs(text);
  auto decoded = ett::host::decode_serial_log(text, "fuzz.log");
  if (decoded) {
    ETT_FUZZ_CHECK(decoded->good_lines > 0);
    ETT_FUZZ_CHECK(decoded->bytes.size() % 512 == 0);
  }
  if (!ett::host::looks_like_serial_log(text)) return 0;
  const ett::fuzz::MemoryFile file(text.data(), text.size());
  auto opened = ett::host::TraceImage::open(file.path());
  if (!opened) return 0;
  ETT_FUZZ_CHECK(opened->is_serial_log());
  for (size_t i = 0; i < opened->sessions().size(); ++i) {
    auto session = opened->read_session(i);
    if (session) ETT_FUZZ_CHECK(session->summary.recovered_events == session->events.size());
  }
  return 0;
}
