// text_input.cpp: bounded reads of the text files a user gives.
#include "common/text_input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/resources.h"
#include "common/unique_fd.h"

namespace ett::host {

namespace {

ett::Failure<HostError> not_text(const std::string& name, uint64_t offset) {
  return make_error(ErrorKind::Usage,
                    fmt::format("{}: a NUL byte at offset {}: not a text file", name, offset));
}

ett::Failure<HostError> line_too_long(const std::string& name, size_t number) {
  return make_error(ErrorKind::Usage,
                    fmt::format("{}:{}: a line longer than {} bytes: not a file of this kind", name, number,
                                kMaxLineBytes));
}

}  // namespace

Expected<std::string> read_text_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
  const bool from_stdin = path == "-";
  const std::string name = from_stdin ? "standard input (" + what + ")" : path;
  int fd = STDIN_FILENO;
  UniqueFd owned;
  if (!from_stdin) {
    owned = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!owned.valid()) return make_error(ErrorKind::Usage, errno_message(path, errno));
    fd = owned.get();
    struct stat status {};
    if (::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode))
      return make_error(ErrorKind::Usage, fmt::format("{}: is a directory, not {}", path, what));
  }
  std::string text;
  char buffer[1 << 16];
  size_t line_start = 0;
  size_t lines = 1;
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorKind::Io, errno_message(name, errno));
    }
    if (got == 0) break;
    if (text.size() + static_cast<size_t>(got) > max_bytes)
      return make_error(ErrorKind::Usage, fmt::format("{}: larger than {}, the most {} may hold", name,
                                                      byte_size_text(max_bytes), what));
    const size_t from = text.size();
    text.append(buffer, static_cast<size_t>(got));
    for (size_t i = from; i < text.size(); ++i) {
      if (text[i] == '\0') return not_text(name, i);
      if (text[i] == '\n') {
        line_start = i + 1;
        ++lines;
      } else if (i - line_start >= kMaxLineBytes) {
        return line_too_long(name, lines);
      }
    }
  }
  return text;
}

bool LineReader::next(std::string& line) {
  line.clear();
  if (!m_status) return false;
  std::streambuf* buffer = m_in.rdbuf();
  if (!buffer) return false;
  for (;;) {
    const int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (line.empty()) return false;
      break;
    }
    if (c == '\n') break;
    if (c == '\0') {
      m_status = make_error(ErrorKind::Usage,
                            fmt::format("{}:{}: a NUL byte: not a text file", m_name, m_number + 1));
      return false;
    }
    if (line.size() >= kMaxLineBytes) {
      m_status = line_too_long(m_name, m_number + 1);
      return false;
    }
    line.push_back(static_cast<char>(c));
  }
  ++m_number;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace ett::host
