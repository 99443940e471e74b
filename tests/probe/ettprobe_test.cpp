// ettprobe_test.cpp: libettprobe through its C API and C++ wrapper: URLs, every layout's line mapping, range
// checks, the signal log, and two processes signalling on one shared line byte at once.
#include "ettprobe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ett/virtual_probe.h"
#include "ettprobe.hpp"
#include "harness/live_command.h"
#include "support/test_disk_writer.h"

namespace {

// A probe file as `ett qemu run` makes it: 1 MiB of zeros with the host's magic and version in the control
// block (no kernel: its state is Booting, so no pacing).
std::string make_probe_file(const ett::test::TempDir& dir, const std::string& name = "probe.shm") {
  const std::string path = dir.file(name);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, ett::vprobe::kMinSize), 0);
  ett::vprobe::Control control{};
  control.host_magic = ett::vprobe::kHostMagic;
  control.file_version = ett::vprobe::kFileVersion;
  EXPECT_EQ(::pwrite(fd, &control, sizeof control, ett::vprobe::kControlOffset),
            static_cast<ssize_t>(sizeof control));
  ::close(fd);
  return path;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The line byte, read through a mapping of our own.
uint8_t lines_in(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  uint8_t byte = 0xff;
  EXPECT_EQ(::pread(fd, &byte, 1, ett::vprobe::kLinesOffset), 1);
  ::close(fd);
  return byte;
}

std::string open_error(const std::string& url) {
  ett_probe* probe = ett_probe_open(url.c_str());
  if (probe) {
    ett_probe_close(probe);
    return "(opened)";
  }
  return ett_probe_last_error();
}

class EttProbeTest : public ::testing::Test {
 protected:
  ett::test::TempDir m_dir;
};

TEST_F(EttProbeTest, BadUrlsAreRejectedWithTheProblemNamed) {
  const std::string file = make_probe_file(m_dir);
  EXPECT_NE(open_error("").find("expected shm:PATH"), std::string::npos);
  EXPECT_NE(open_error(file).find("expected shm:PATH"), std::string::npos);
  EXPECT_NE(open_error("tcp:" + file).find("unknown scheme 'tcp'"), std::string::npos);
  EXPECT_NE(open_error("shm:").find("no path after 'shm:'"), std::string::npos);
  EXPECT_NE(open_error("shm:" + file + "?layout=3x3").find("unknown layout '3x3'"), std::string::npos);
  EXPECT_NE(open_error("shm:" + file + "?speed=9").find("unknown option 'speed'"), std::string::npos);
  EXPECT_NE(open_error("shm:" + file + "?layout").find("not key=value"), std::string::npos);
  EXPECT_NE(open_error("shm:" + file + "?pace=yes").find("pace= takes 0 or 1"), std::string::npos);
  EXPECT_NE(open_error("shm:" + m_dir.file("missing")).find("cannot open the virtual probe file"),
            std::string::npos);
  std::ofstream(m_dir.file("small")) << "not a probe";
  EXPECT_NE(open_error("shm:" + m_dir.file("small")).find("is not an ETT virtual probe file"),
            std::string::npos);
  // 1 MiB without the control block (a zeroed file, a trace disk's worth of data): refused, not written.
  const std::string zeros = m_dir.file("zeros");
  { std::ofstream(zeros, std::ios::binary) << std::string(ett::vprobe::kMinSize, '\x5a'); }
  EXPECT_NE(open_error("shm:" + zeros).find("no probe control block"), std::string::npos);
  EXPECT_EQ(contents(zeros), std::string(ett::vprobe::kMinSize, '\x5a'));
  EXPECT_NE(open_error("shm:" + m_dir.file("")).find("not a regular file"), std::string::npos);
  EXPECT_EQ(ett_probe_open(nullptr), nullptr);
  EXPECT_EQ(open_error("ivshmem:" + file + "?layout=8x1&pace=0"), "(opened)");
}

TEST_F(EttProbeTest, MissingParallelPortFailsClearly) {
  const std::string message = open_error("ppdev:" + m_dir.file("parport9"));
  EXPECT_NE(message.find("cannot open the parallel port"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  EXPECT_NE(message.find("modprobe ppdev"), std::string::npos) << message;
  // A file that is no parallel port: PPCLAIM is refused.
  std::ofstream(m_dir.file("plain")) << "x";
  EXPECT_NE(open_error("ppdev:" + m_dir.file("plain")).find("PPCLAIM"), std::string::npos);
}

// Probe k of a layout with `bits` lines per probe owns lines D((k-1)*bits) .. D(k*bits-1): set each probe to
// each code in turn and check the byte against that rule, computed here independently of the library.
TEST_F(EttProbeTest, EveryLayoutMapsProbesToTheirLines) {
  struct Case {
    const char* name;
    int probes, bits;
  };
  for (const Case& layout : {Case{"2x4", 2, 4}, Case{"8x1", 8, 1}, Case{"4x2", 4, 2}, Case{"1x8", 1, 8}}) {
    SCOPED_TRACE(layout.name);
    const std::string file = make_probe_file(m_dir, std::string("probe-") + layout.name);
    ett::Probe probe("shm:" + file + "?layout=" + layout.name);
    EXPECT_EQ(probe.count(), layout.probes);
    EXPECT_EQ(probe.max_code(), (1 << layout.bits) - 1);
    unsigned expected = 0;
    for (int k = 1; k <= layout.probes; ++k) {
      const int shift = (k - 1) * layout.bits;
      for (int code = 1; code <= probe.max_code(); ++code) {
        probe.signal(k, code);
        expected =
            (expected & ~(((1u << layout.bits) - 1) << shift)) | (static_cast<unsigned>(code) << shift);
        ASSERT_EQ(lines_in(file), expected) << "probe " << k << " code " << code;
        ASSERT_EQ(probe.lines(), expected);
      }
    }
  }
}

TEST_F(EttProbeTest, KnownBytes) {
  const std::string file = make_probe_file(m_dir);
  ett::Probe double_probe("shm:" + file);  // 2x4 by default: probe 2 is D4-D7
  double_probe.signal(2, 0xA);
  EXPECT_EQ(lines_in(file), 0xA0);
  double_probe.signal(1, 0x3);
  EXPECT_EQ(lines_in(file), 0xA3);
  ett::Probe single("shm:" + file + "?layout=8x1");  // a second cable on the same byte sees D7 = 1, D0-D1 = 1
  single.signal(8, 0);
  EXPECT_EQ(lines_in(file), 0x23);
}

TEST_F(EttProbeTest, OutOfRangeAndRepeatedCodesAreRejected) {
  const std::string file = make_probe_file(m_dir);
  ett_probe* probe = ett_probe_open(("shm:" + file).c_str());
  ASSERT_NE(probe, nullptr) << ett_probe_last_error();
  EXPECT_EQ(ett_probe_signal(probe, 0, 1), -1);
  EXPECT_NE(std::string(ett_probe_last_error()).find("probe 0 out of range: layout 2x4 has probes 1-2"),
            std::string::npos);
  EXPECT_EQ(ett_probe_signal(probe, 3, 1), -1);
  EXPECT_EQ(ett_probe_signal(probe, 1, 16), -1);
  EXPECT_NE(std::string(ett_probe_last_error()).find("code 16 out of range"), std::string::npos);
  EXPECT_EQ(ett_probe_signal(probe, 1, -1), -1);
  EXPECT_EQ(lines_in(file), 0) << "a rejected signal must not touch the lines";
  EXPECT_EQ(ett_probe_signal(probe, 1, 0), -1) << "the lines already show 0";
  EXPECT_NE(std::string(ett_probe_last_error()).find("already shows code 0"), std::string::npos);
  EXPECT_EQ(ett_probe_signal(probe, 1, 7), 0);
  EXPECT_STREQ(ett_probe_last_error(), "");
  EXPECT_EQ(ett_probe_signal(nullptr, 1, 7), -1);
  EXPECT_EQ(ett_probe_close(probe), 0);
  EXPECT_EQ(ett_probe_close(nullptr), 0);

  ett::Probe single("shm:" + file + "?layout=8x1");
  EXPECT_THROW(single.signal(9, 1), ett::ProbeError);
  EXPECT_THROW(single.signal(1, 2), ett::ProbeError);
  EXPECT_THROW(ett::Probe("shm:" + m_dir.file("missing")), ett::ProbeError);
}

TEST_F(EttProbeTest, SignalLogHasTheSentLogFormat) {
  const std::string file = make_probe_file(m_dir);
  const std::string log = m_dir.file("signals.csv");
  {
    ett::Probe probe("shm:" + file + "?log=" + log);
    probe.signal(1, 3);
    probe.signal(2, 5);
    probe.signal(1, 4);
  }
  auto sent = ett::host::read_signal_log(log, 0);
  ASSERT_TRUE(sent.ok()) << sent.error().message;
  ASSERT_EQ(sent->size(), 3u);
  const std::vector<std::array<int, 3>> expected = {{1, 3, 0x03}, {2, 5, 0x53}, {1, 4, 0x54}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*sent)[i].index, i);
    EXPECT_EQ((*sent)[i].probe, expected[i][0]);
    EXPECT_EQ((*sent)[i].code, expected[i][1]);
    EXPECT_EQ((*sent)[i].lines, expected[i][2]);
    EXPECT_EQ((*sent)[i].scheduled_ns, (*sent)[i].sent_ns);
    if (i) {
      EXPECT_GT((*sent)[i].host_tsc, (*sent)[i - 1].host_tsc);
    }
  }
  std::ifstream in(log);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc");
}

TEST(SignalLog, LinesOfSeveralProcessesAreOrderedByTsc) {
  ett::test::TempDir dir;
  std::ofstream(dir.file("log.csv"))
      << "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc\n"
      << "0,1,3,3,1500,1500,900\n0,2,5,83,1200,1200,700\n1,1,4,84,2500,2500,1000\n";
  auto sent = ett::host::read_signal_log(dir.file("log.csv"), 1000);
  ASSERT_TRUE(sent.ok()) << sent.error().message;
  ASSERT_EQ(sent->size(), 3u);
  EXPECT_EQ((*sent)[0].probe, 2);
  EXPECT_EQ((*sent)[0].sent_ns, 200u);
  EXPECT_EQ((*sent)[1].probe, 1);
  EXPECT_EQ((*sent)[1].index, 1u);
  EXPECT_EQ((*sent)[2].sent_ns, 1500u);
  std::ofstream(dir.file("bad.csv")) << "0,1,x\n";
  auto bad = ett::host::read_signal_log(dir.file("bad.csv"), 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("line 1"), std::string::npos);
}

// Pacing: a stand-in for the capture kernel polls the line byte, then bumps the heartbeat, as the kernel's
// stop check does, slowly (every 200 us). Back-to-back signals on one probe must each be seen by a poll: the
// cable waits for two bumps after each write, so none is merged with the next.
TEST_F(EttProbeTest, PacedSignalsAreEachSeenByAPoll) {
  const std::string file = make_probe_file(m_dir);
  const int fd = ::open(file.c_str(), O_RDWR);
  auto* map = static_cast<uint8_t*>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  auto* control = reinterpret_cast<ett::vprobe::Control*>(map + ett::vprobe::kControlOffset);
  std::atomic_ref<uint32_t>(control->state).store(static_cast<uint32_t>(ett::vprobe::KernelState::Capturing));
  std::atomic<bool> stop{false};
  std::vector<uint8_t> seen;  // every change of the byte a poll found
  std::thread kernel([&] {
    uint8_t last = 0;
    while (!stop.load()) {
      const uint8_t now = std::atomic_ref<uint8_t>(map[0]).load(std::memory_order_seq_cst);
      if (now != last) seen.push_back(now);
      last = now;
      std::atomic_ref<uint32_t>(control->heartbeat).fetch_add(1, std::memory_order_seq_cst);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  constexpr int kSignals = 30;
  {
    ett::Probe probe("shm:" + file);
    for (int i = 0; i < kSignals; ++i) probe.signal(1, 1 + i % 2);
    // Until the kernel has polled the last write too (ett_probe_signal only waits before a write).
    const uint32_t beat = std::atomic_ref<uint32_t>(control->heartbeat).load();
    while (std::atomic_ref<uint32_t>(control->heartbeat).load() - beat < 2) std::this_thread::yield();
  }
  stop.store(true);
  kernel.join();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kSignals));
  for (int i = 0; i < kSignals; ++i) EXPECT_EQ(seen[i], 1 + i % 2) << i;
  munmap(map, 8192);
}

// Two processes, each owning one probe of a 2x4 cable, write as fast as they can. After every write each
// checks that its own lines still show what it wrote last: a read-modify-write that is not atomic would let
// the other process put back a stale value of them. At the end the byte holds both final codes.
TEST_F(EttProbeTest, TwoProcessesNeverLoseEachOthersLines) {
  const std::string file = make_probe_file(m_dir);
  constexpr int kWrites = 200'000;
  int start_gate[2];  // both children block on it until the parent closes it: they run at the same time
  ASSERT_EQ(pipe(start_gate), 0);
  std::vector<pid_t> children;
  for (int probe_number = 1; probe_number <= 2; ++probe_number) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start_gate[1]);
      char ignored;
      if (::read(start_gate[0], &ignored, 1) != 0) _exit(7);
      ett_probe* probe = ett_probe_open(("shm:" + file).c_str());
      if (!probe) _exit(2);
      const int fd = ::open(file.c_str(), O_RDWR);
      auto* map = static_cast<uint8_t*>(mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0));
      std::atomic_ref<uint8_t> byte(map[0]);
      const int shift = (probe_number - 1) * 4;
      for (int i = 0; i < kWrites; ++i) {
        const int code = 1 + i % 15;
        if (ett_probe_signal(probe, probe_number, code) != 0) _exit(3);
        if (((byte.load() >> shift) & 0xF) != code) _exit(4);  // the other process overwrote our lines
      }
      const int final_code = probe_number == 1 ? 0x6 : 0x9;
      if (ett_probe_signal(probe, probe_number, final_code) != 0) _exit(5);
      _exit(ett_probe_close(probe) == 0 ? 0 : 6);
    }
    children.push_back(pid);
  }
  ::close(start_gate[0]);
  ::close(start_gate[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child exit " << WEXITSTATUS(status) << " (4: lost lines)";
  }
  EXPECT_EQ(lines_in(file), 0x96);
}

}  // namespace
