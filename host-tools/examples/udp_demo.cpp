// udp_demo.cpp: ett-udp-demo, the `make demo` workload: a UDP client and server on loopback that mark each
// request's send (client, probe 1) and receive (server, probe 2) through libettprobe, so that the capture
// kernel timestamps the one-way latency of every message, for several message sizes.
//
// Codes: size class k (1..7) is sent as code k on even rounds and k+8 on odd rounds, so that two requests of
// the same size in a row still change the probe's lines; the server echoes the code on probe 2. Then
// `ett analyze durations --from 1 --to 2` pairs every send with its receive, and `--size-of-code` maps both
// codes of a class to its size (`ett-udp-demo --size-map` prints the mapping).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ettprobe.hpp"

namespace {

constexpr int kClientProbe = 1;
constexpr int kServerProbe = 2;
constexpr int kMaxClasses = 7;      // codes 1..7 and 9..15 on a 4-bit probe
constexpr uint8_t kQuitCode = 0;    // a one-byte message with code 0 ends the server
constexpr size_t kMaxSize = 65507;  // the largest UDP payload over IPv4
constexpr int kReceiveTimeoutS = 10;

struct Options {
  std::string role = "pair";  // pair (server and client as two processes), server, client
  std::string url;
  std::vector<size_t> sizes = {16, 256, 1024, 4096, 16384, 32768, 60000};
  int rounds = 50;
  int port = 0;  // server/client roles: the server's UDP port on 127.0.0.1
  // Pause between requests. libettprobe paces each cable's writes on the kernel's heartbeat (two stop checks,
  // about 30 us under TCG); without a pause the server's signal would wait for it inside the measured action.
  int gap_us = 200;
  // A regression to find: the client waits this long between marking a send and sending (a slower send path),
  // so every action grows by about this much. `ett compare` against a run without it fires its gate.
  int delay_us = 0;
};

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

int code_for(int size_class, int round) {
  return size_class + (round % 2 ? 8 : 0);
}

std::string size_map(const std::vector<size_t>& sizes) {
  std::string map;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int k = static_cast<int>(i) + 1;
    map += (i ? "," : "") + std::to_string(k) + "=" + std::to_string(sizes[i]) + "," + std::to_string(k + 8) +
           "=" + std::to_string(sizes[i]);
  }
  return map;
}

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec);
}

int udp_socket() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(errno_text("socket"));
  int buffer = 4 * static_cast<int>(kMaxSize);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
  timeval timeout{kReceiveTimeoutS, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// Binds a server socket on 127.0.0.1:port (0: any free port) and returns it with the port it got.
int bind_server(int port, int& bound_port) {
  const int fd = udp_socket();
  sockaddr_in address = loopback(port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) fail(errno_text("bind"));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  bound_port = ntohs(address.sin_port);
  return fd;
}

// Receives requests until the quit message; marks each receive on probe 2 with the request's code, then
// echoes the message back.
int serve(int fd, const std::string& url) {
  ett::Probe probe(url);
  std::vector<uint8_t> buffer(kMaxSize);
  for (size_t served = 0;; ++served) {
    sockaddr_in peer{};
    socklen_t peer_length = sizeof(peer);
    const ssize_t got =
        recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&peer), &peer_length);
    if (got < 0) fail(errno_text(served ? "server: recvfrom" : "server: recvfrom (no request came)"));
    if (got == 0) fail("server: an empty datagram");
    if (buffer[0] == kQuitCode) return 0;
    probe.signal(kServerProbe, buffer[0]);
    if (sendto(fd, buffer.data(), static_cast<size_t>(got), 0, reinterpret_cast<sockaddr*>(&peer),
               peer_length) != got)
      fail(errno_text("server: sendto"));
  }
}

// Sends `rounds` requests of each size, one at a time, marking each send on probe 1 just before sendto.
void run_client(const Options& options, int port) {
  ett::Probe probe(options.url);
  if (probe.count() < 2 || probe.max_code() < 15)
    fail("the demo needs a cable with at least two 4-bit probes (layout 2x4)");
  const int fd = udp_socket();
  sockaddr_in server = loopback(port);
  std::vector<uint8_t> message(kMaxSize, 0x5a), reply(kMaxSize);
  std::printf("%10s %8s %14s %14s\n", "size", "rounds", "host rtt mean", "host rtt min");
  for (size_t i = 0; i < options.sizes.size(); ++i) {
    const size_t size = options.sizes[i];
    uint64_t total_ns = 0, min_ns = UINT64_MAX;
    for (int round = 0; round < options.rounds; ++round) {
      const int code = code_for(static_cast<int>(i) + 1, round);
      message[0] = static_cast<uint8_t>(code);
      const uint64_t start = monotonic_ns();
      probe.signal(kClientProbe, code);
      if (options.delay_us > 0) {
        const uint64_t until = monotonic_ns() + static_cast<uint64_t>(options.delay_us) * 1000;
        while (monotonic_ns() < until) {
        }
      }
      if (sendto(fd, message.data(), size, 0, reinterpret_cast<sockaddr*>(&server), sizeof(server)) !=
          static_cast<ssize_t>(size))
        fail(errno_text("client: sendto"));
      const ssize_t got = recv(fd, reply.data(), reply.size(), 0);
      if (got < 0) fail(errno_text("client: recv (no reply from the server)"));
      if (static_cast<size_t>(got) != size || reply[0] != code)
        fail("client: the reply does not echo the request");
      const uint64_t rtt = monotonic_ns() - start;
      total_ns += rtt;
      min_ns = std::min(min_ns, rtt);
      const timespec gap{0, options.gap_us * 1000L};
      nanosleep(&gap, nullptr);
    }
    std::printf("%10zu %8d %11.1f us %11.1f us\n", size, options.rounds,
                static_cast<double>(total_ns) / options.rounds / 1e3, static_cast<double>(min_ns) / 1e3);
  }
  const uint8_t quit = kQuitCode;
  sendto(fd, &quit, 1, 0, reinterpret_cast<sockaddr*>(&server), sizeof(server));
  close(fd);
}

// The server in a child process, the client in this one: two processes, each with its own probe.
int run_pair(const Options& options) {
  int port = 0;
  const int server_fd = bind_server(0, port);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) fail(errno_text("fork"));
  if (child == 0) {
    try {
      _exit(serve(server_fd, options.url));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "ett-udp-demo: %s\n", error.what());
      _exit(1);
    }
  }
  close(server_fd);
  std::string client_error;
  try {
    run_client(options, port);
  } catch (const std::exception& error) {
    client_error = error.what();
    kill(child, SIGTERM);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!client_error.empty()) fail(client_error);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the server process failed");
  return 0;
}

std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> sizes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const unsigned long size = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end || size == 0 || size > kMaxSize)
      fail("--sizes: '" + item + "' is not a size in bytes (1-" + std::to_string(kMaxSize) + ")");
    sizes.push_back(size);
    start = comma + 1;
  }
  if (sizes.size() > kMaxClasses) fail("--sizes: at most 7 sizes (two codes each on a 4-bit probe)");
  return sizes;
}

int parse_int(const std::string& flag, const char* text, int low, int high) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (!*text || *end || value < low || value > high)
    fail(flag + ": '" + text + "' is not a number from " + std::to_string(low) + " to " +
         std::to_string(high));
  return static_cast<int>(value);
}

constexpr const char* kUsage =
    "usage: ett-udp-demo [pair|server|client] [--url URL] [--sizes S1,S2,...] [--rounds N] [--gap-us G] "
    "[--port P] [--delay-us D]\n"
    "       ett-udp-demo --size-map [--sizes S1,S2,...]\n"
    "  pair (default): the server in a child process and the client here, on a free loopback port\n"
    "  --url: the probe cable (default: $ETT_PROBE_URL, set by `ett qemu run --run`)\n"
    "  --sizes: message sizes in bytes, at most 7 (default 16,256,1024,4096,16384,32768,60000)\n"
    "  --rounds: requests per size (default 50); --port: the server's port for server/client\n"
    "  --gap-us: pause between requests (default 200), so that probe pacing never waits inside an action\n"
    "  --delay-us: the client waits D us between marking a send and sending it (a regression for ett "
    "compare)\n"
    "  --size-map: print the --size-of-code mapping for `ett analyze durations` and exit\n";

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options;
    bool print_map = false;
    if (const char* url = std::getenv("ETT_PROBE_URL")) options.url = url;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc) fail(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "pair" || arg == "server" || arg == "client")
        options.role = arg;
      else if (arg == "--url")
        options.url = value();
      else if (arg == "--sizes")
        options.sizes = parse_sizes(value());
      else if (arg == "--rounds")
        options.rounds = parse_int(arg, value(), 1, 1'000'000);
      else if (arg == "--gap-us")
        options.gap_us = parse_int(arg, value(), 0, 999'999);
      else if (arg == "--delay-us")
        options.delay_us = parse_int(arg, value(), 0, 1'000'000);
      else if (arg == "--port")
        options.port = parse_int(arg, value(), 1, 65535);
      else if (arg == "--size-map")
        print_map = true;
      else if (arg == "--help" || arg == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else
        fail("unknown argument '" + arg + "'\n" + kUsage);
    }
    if (print_map) {
      std::printf("%s\n", size_map(options.sizes).c_str());
      return 0;
    }
    if (options.url.empty())
      fail("no probe: give --url URL or run under `ett qemu run --run` (ETT_PROBE_URL)");
    if (options.role == "pair") return run_pair(options);
    if (!options.port) fail("--port P is needed for the server and client roles");
    if (options.role == "server") {
      int bound = 0;
      return serve(bind_server(options.port, bound), options.url);
    }
    run_client(options, options.port);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ett-udp-demo: %s\n", error.what());
    return 1;
  }
}
