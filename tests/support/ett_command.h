// ett_command.h: the real `ett` of this build run by a test (standard output and error kept apart, or both on
// a pseudo-terminal), and the small text helpers such tests share: shell quoting, reading a file whole,
// splitting a CSV line.
#pragma once

#include <poll.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ett::test {

// One shell word: 'it''s' quoted so that the shell passes it through unchanged.
inline std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The fields of a CSV line (no quoting) as written: "a,,b," has four, the empty ones kept.
inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
    fields.push_back(line.substr(start, comma - start));
  fields.push_back(line.substr(start));
  return fields;
}

struct EttRun {
  int status = -1;
  std::string out, err;
  int err_lines() const { return static_cast<int>(std::count(err.begin(), err.end(), '\n')); }
};

// Runs a shell command line whose standard error it redirects to `err_path`: its exit status, standard
// output, and then the contents of `err_path`.
inline EttRun run_command(const std::string& command, const std::string& err_path) {
  EttRun run;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 65536> buffer;
  for (size_t got; (got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    run.out.append(buffer.data(), got);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = slurp(err_path);
  return run;
}

// `ett ARGS` in directory `dir` (its relative paths are there), with `input` on its standard input and
// without the ETT_DB default; its standard error goes through dir/stderr (and dir/stdin holds the input).
inline EttRun run_ett_in(const std::string& dir, const std::vector<std::string>& args,
                         const std::string& input = "") {
  const std::string in_path = dir + "/stdin", err_path = dir + "/stderr";
  write_bytes(in_path, input);
  std::string command =
      "cd " + shell_quote(dir) + " && ETT_DB= " + shell_quote(std::string(ETT_BIN_DIR) + "/ett");
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  return run_command(command + " <" + shell_quote(in_path) + " 2>" + shell_quote(err_path), err_path);
}

struct TerminalRun {
  int status = -1;
  std::string screen;  // what it wrote to the terminal (standard output and error)
  bool interrupted = false;
};

// `ett ARGS` in directory `dir` on a pseudo-terminal of 200 columns (its standard output and error are the
// terminal), without the ETT_DB default: what it wrote there, and its exit status. When `interrupt_at` shows
// up in what it wrote, Ctrl-C is typed (the terminal sends SIGINT, as a shell's would).
inline TerminalRun run_ett_on_terminal(const std::string& dir, const std::vector<std::string>& args,
                                       const std::string& interrupt_at = "") {
  std::vector<std::string> argv_text = {std::string(ETT_BIN_DIR) + "/ett"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);
  winsize size{};
  size.ws_row = 24;
  size.ws_col = 200;
  int master = -1;
  const pid_t child = ::forkpty(&master, nullptr, nullptr, &size);
  if (child == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::unsetenv("ETT_DB");
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  TerminalRun run;
  if (child < 0) return run;
  std::array<char, 65536> buffer;
  for (;;) {
    pollfd fd{master, POLLIN, 0};
    if (::poll(&fd, 1, 120'000) <= 0) break;  // a hung ett: the caller's status check fails
    const ssize_t got = ::read(master, buffer.data(), buffer.size());
    if (got <= 0) break;  // EIO: the child's side is closed
    run.screen.append(buffer.data(), static_cast<size_t>(got));
    if (!interrupt_at.empty() && !run.interrupted && run.screen.find(interrupt_at) != std::string::npos)
      run.interrupted = ::write(master, "\x03", 1) == 1;
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(master);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace ett::test
