// runner_test.cpp: `ett qemu run` end to end against a fake QEMU that speaks the virtual-probe protocol.
//
// The fake is this test binary itself: run with ETT_FAKE_QEMU=<mode>, a static initializer plays the capture
// kernel (maps mem-path=, handshakes through the Control block, writes a session to the -drive file, prints
// the RESULT line, exits like isa-debug-exit) and never reaches GoogleTest's main.
#include "harness/runner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/probe_layout.h"
#include "ett/virtual_probe.h"
#include "harness/sent_log.h"
#include "image/trace_image.h"
#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

namespace f = ett::format;
using vprobe::Control;
using vprobe::KernelState;

std::string option_value(int argc, char** argv, const std::string& flag, const std::string& key) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (flag != argv[i]) continue;
    std::string value = argv[i + 1];
    auto at = value.find(key);
    if (at == std::string::npos) continue;
    value = value.substr(at + key.size());
    return value.substr(0, value.find(','));
  }
  return "";
}

void set_state(Control* control, KernelState state) {
  std::atomic_ref<uint32_t>(control->state).store(static_cast<uint32_t>(state), std::memory_order_release);
}

[[noreturn]] void fake_qemu(const std::string& mode) {
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(cmdline, arg, '\0');) args.push_back(arg);
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  const int argc = static_cast<int>(argv.size());
  const std::string shm = option_value(argc, argv.data(), "-object", "mem-path=");
  const std::string disk = option_value(argc, argv.data(), "-drive", "file=");

  if (mode == "crash") {
    std::fprintf(stderr, "qemu-system-i386: -device ivshmem-plain: something is wrong\n");
    std::_Exit(1);
  }
  int fd = ::open(shm.c_str(), O_RDWR);
  if (fd < 0) std::_Exit(90);
  auto* memory =
      static_cast<uint8_t*>(::mmap(nullptr, vprobe::kMinSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (memory == MAP_FAILED) std::_Exit(91);
  auto* control = reinterpret_cast<Control*>(memory + vprobe::kControlOffset);
  volatile uint8_t* lines = memory + vprobe::kLinesOffset;
  std::printf("ETT: fake kernel\r\n");
  std::fflush(stdout);
  if (mode == "panic") {
    control->magic = vprobe::kControlMagic;
    set_state(control, KernelState::Failed);
    std::printf("ETT: PANIC fake double fault\n");
    std::fflush(stdout);
    std::_Exit(vprobe::qemu_status_for(vprobe::kExitFailure));
  }

  const uint64_t start = __rdtsc();
  control->tsc_hz = 2'000'000'000;
  control->capture_start_tsc = start;
  control->magic = vprobe::kControlMagic;
  uint8_t last = *lines;
  set_state(control, KernelState::Capturing);
  std::vector<f::EventRecord> records;
  const ProbeLayout layout;
  while (std::atomic_ref<uint32_t>(control->command).load(std::memory_order_acquire) !=
         static_cast<uint32_t>(vprobe::HostCommand::Stop)) {
    // Like the kernel's stop check: its clock (the host's TSC here), then the heartbeat that tells the
    // injector that the lines have been polled.
    std::atomic_ref<uint32_t>(control->clock_256)
        .store(static_cast<uint32_t>(__rdtsc() >> 8), std::memory_order_release);
    std::atomic_ref<uint32_t>(control->heartbeat).fetch_add(1, std::memory_order_acq_rel);
    const uint8_t now = *lines;
    if (now == last) continue;
    const uint64_t tsc = __rdtsc();
    for (int probe = 1; probe <= layout.probe_count(); ++probe)
      if ((now ^ last) & layout.mask(probe))
        records.push_back(
            f::EventRecord{tsc, static_cast<uint8_t>(probe), layout.code_of(now, probe), now, 0, 0});
    last = now;
  }
  control->stop_reason = static_cast<uint32_t>(f::StopReason::HostRequest);
  control->event_count = records.size();
  set_state(control, KernelState::Stopped);
  if (mode == "hang") {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  set_state(control, KernelState::Dumping);
  {
    ett::test::TestDiskWriter writer(disk);
    ett::test::SessionSpec spec;
    spec.records = records;
    spec.tsc_hz = control->tsc_hz;
    spec.capture_start_tsc = start;
    writer.append(spec);
  }
  control->session_number = 1;
  set_state(control, KernelState::Done);
  if (mode != "no-ok") std::printf("ETT: RESULT OK events=%zu session=1\n", records.size());
  std::fflush(stdout);
  std::_Exit(vprobe::qemu_status_for(vprobe::kExitSuccess));
}

const bool kIsFakeQemu = [] {
  const char* mode = std::getenv("ETT_FAKE_QEMU");
  if (mode) fake_qemu(mode);
  return false;
}();

class QemuRunnerTest : public ::testing::Test {
 protected:
  RunOptions options(const std::string& mode) {
    ::setenv("ETT_FAKE_QEMU", mode.c_str(), 1);
    std::ofstream(m_dir.file("s.txt")) << "# fake run\n0 1 1\n1000 2 3\n2000 1 2\n2000 2 4\n3000 1 0\n";
    RunOptions run;
    run.disk = m_dir.file("disk.img");
    run.scenario = m_dir.file("s.txt");
    run.kernel = "/proc/self/exe";  // any existing file: the fake ignores it
    run.qemu = "/proc/self/exe";
    run.sent_log = m_dir.file("sent.csv");
    run.serial_log = m_dir.file("serial.log");
    run.timeout_s = 20;
    run.boot_timeout_s = 10;
    run.guest_clock = false;  // the fake stamps the host's TSC: plain TCG's relation (see GuestClockRun)
    return run;
  }
  void TearDown() override { ::unsetenv("ETT_FAKE_QEMU"); }
  static std::string read(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  ett::test::TempDir m_dir;
};

TEST_F(QemuRunnerTest, SuccessfulRun) {
  const RunOptions run = options("ok");
  auto report = run_qemu(run, nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->disk_created);
  EXPECT_EQ(report->scenario_events, 5u);
  EXPECT_EQ(report->events_sent, 5u);
  EXPECT_EQ(report->session_number, 1u);
  EXPECT_EQ(report->stop_reason, static_cast<uint32_t>(f::StopReason::HostRequest));
  EXPECT_EQ(report->tsc_hz, 2'000'000'000u);
  EXPECT_GE(report->playback_ns, 3'000'000u);

  const std::string sent = read(run.sent_log);
  EXPECT_EQ(
      sent.substr(0, sent.find('\n')),
      "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,guest_tsc_before,"
      "held_back,utc_ns,pps_edge,pps_second,held_ns");
  EXPECT_EQ(std::count(sent.begin(), sent.end(), '\n'), 6);
  EXPECT_NE(sent.find("\n2,1,2,66,2000000,"), std::string::npos) << sent;  // lines 0x42 after the joint write
  EXPECT_NE(sent.find("\n3,2,4,66,2000000,"), std::string::npos) << sent;
  EXPECT_NE(read(run.serial_log).find("ETT: RESULT OK"), std::string::npos);

  auto image = TraceImage::open(run.disk);
  ASSERT_TRUE(image.ok()) << image.error().message;
  ASSERT_EQ(image->sessions().size(), 1u);
  EXPECT_EQ(image->sessions()[0].event_count, report->kernel_events);

  // The fidelity report pairs the fake's records with the writes. The fake stamps the host's own TSC after it
  // saw each store, so the offset (the fastest detection) is below 0, and every capture pairs with a send.
  ASSERT_EQ(report->machines.size(), 1u);
  ASSERT_TRUE(report->machines[0].fidelity.has_value());
  const FidelityReport& fidelity = *report->machines[0].fidelity;
  EXPECT_EQ(fidelity.sent, 5u);
  EXPECT_EQ(fidelity.captured, report->kernel_events);
  EXPECT_EQ(fidelity.unexpected, 0u);
  EXPECT_EQ(fidelity.out_of_order, 0u);
  EXPECT_EQ(fidelity.sent, fidelity.matched + fidelity.lost);
  EXPECT_LT(fidelity.offset_ticks, 0);
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
    EXPECT_EQ(entry.path().filename().string().find(fmt::format("ett-{}-", ::getpid())), std::string::npos)
        << "left behind: " << entry.path();
}

// What `ett fidelity` reads back after a run (the sent log and the .run.json beside it) repeats its report.
TEST_F(QemuRunnerTest, SentLogAndItsRunJsonRepeatTheReport) {
  const RunOptions run = options("ok");
  auto report = run_qemu(run, nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->machines.at(0).fidelity.has_value());
  auto log = read_sent_log(run.sent_log);
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_TRUE(log->held_ns_known);
  EXPECT_EQ(log->events.size(), report->events_sent);
  auto described = read_sent_run(sent_run_path(run.sent_log));
  ASSERT_TRUE(described.ok()) << described.error().message;
  EXPECT_EQ(sent_run_path(run.sent_log), m_dir.file("sent.run.json"));
  EXPECT_EQ(described->disk, run.disk);
  EXPECT_EQ(described->session, report->session_number);
  EXPECT_EQ(described->guest_clock, report->guest_clock);
  EXPECT_EQ(described->machines, 1u);
  ASSERT_TRUE(described->offset_bounds.has_value()) << "the runner saw the kernel start capturing";
  EXPECT_LE(described->offset_bounds->first, described->offset_bounds->second);

  auto image = TraceImage::open(run.disk);
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto index = image->find_session(described->session);
  ASSERT_TRUE(index.ok()) << index.error().message;
  auto data = image->read_session(*index);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const f::SessionHeader& header = data->summary.header;
  const FidelityReport again = assess_fidelity(
      log->events, data->events,
      CaptureWindow{header.tsc_hz, header.capture_end_tsc, described->offset_bounds, described->guest_clock});
  EXPECT_EQ(fidelity_json(again), fidelity_json(*report->machines[0].fidelity));
}

// On the guest's clock (the default): the fake publishes its clock like the kernel's stop check, QEMU gets
// -icount, each write waits for that clock, and the fidelity report pairs on it (offset 0) and compares the
// captured intervals with the scenario's.
// The guest-clock span `ett qemu run` prints: guest TSC from the origin to the last write at the kernel's
// rate; nothing without writes on the guest's clock or a rate, and 0 (not 2^64 less a little) for a last
// write before the origin.
TEST(GuestSpan, FromTheOriginToTheLastWriteAtTheKernelsRate) {
  std::vector<SentEvent> sent(2);
  sent[0].guest_tsc_due = 1'000'000 + 3'000;
  sent[0].guest_tsc_before = 1'000'000 + 2'900;
  sent[1].guest_tsc_due = 1'000'000 + 9'000;     // due at 3 us at 3 GHz ...
  sent[1].guest_tsc_before = 1'000'000 + 9'300;  // ... the clock showed 100 ns more before the store
  EXPECT_EQ(guest_span_ns(sent, 1'000'000, 3'000'000'000), 3'100u);
  EXPECT_EQ(guest_span_ns(sent, 2'000'000, 3'000'000'000), 0u) << "the last write before the origin";
  EXPECT_FALSE(guest_span_ns(sent, 1'000'000, 0)) << "no calibrated rate";
  EXPECT_FALSE(guest_span_ns({}, 1'000'000, 3'000'000'000)) << "nothing written";
  EXPECT_FALSE(guest_span_ns(std::vector<SentEvent>(3), 0, 3'000'000'000)) << "a host-clock playback";
}

TEST_F(QemuRunnerTest, GuestClockRun) {
  RunOptions run = options("ok");
  run.guest_clock = true;
  auto report = run_qemu(run, nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->guest_clock);
  EXPECT_GT(report->guest_rate, 0);
  // The playback's span on the guest's clock: to the last write, due at the scenario's 3 ms (the host time
  // of the playback is playback_ns).
  ASSERT_TRUE(report->guest_playback_ns.has_value());
  EXPECT_GE(*report->guest_playback_ns, 2'999'999u);
  EXPECT_LT(*report->guest_playback_ns, 1'000'000'000u);
  ASSERT_EQ(report->machines.size(), 1u);
  ASSERT_TRUE(report->machines[0].fidelity.has_value());
  const FidelityReport& fidelity = *report->machines[0].fidelity;
  EXPECT_TRUE(fidelity.guest_clock);
  EXPECT_TRUE(fidelity.clean()) << format_fidelity(fidelity);
  EXPECT_EQ(fidelity.matched, 5u);
  EXPECT_EQ(fidelity.offset_ticks, 0);
  // No bound on the intervals here: the fake's clock is the host's TSC, which runs on while the host
  // deschedules the fake (unlike -icount time); Timing.* measure them on the real kernel.
  EXPECT_GT(fidelity.interval_max_ns, 0) << format_fidelity(fidelity);
  const std::string sent = read(run.sent_log);
  const size_t at = sent.find("\n1,2,3,");
  ASSERT_NE(at, std::string::npos) << sent;
  const std::string second = sent.substr(at + 1, sent.find('\n', at + 1) - at - 1);
  EXPECT_EQ(std::count(second.begin(), second.end(), ','), 14) << second;  // 15 columns
  EXPECT_EQ(second.find(",0,0,"), std::string::npos)
      << "guest_tsc_due and guest_tsc_before are set: " << second;
}

// --pps-line D7: pulses at whole seconds of the run's UTC (on either clock), with the truth in the sent log.
void expect_pps_truth(const std::string& sent, size_t pulses) {
  std::istringstream lines(sent);
  std::string line;
  std::getline(lines, line);
  size_t rises = 0, falls = 0, scenario_rows = 0;
  int64_t previous_utc = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    fields.resize(14);
    const int64_t utc = std::stoll(fields[11]);
    EXPECT_GE(utc, previous_utc) << line;
    previous_utc = utc;
    if (fields[12] == "rise") {
      ++rises;
      // The rise marks its second: written at it or after (at most a stop check early, from the injector's
      // extrapolation of the guest's clock), within it. How late is the host's doing: the fake QEMU stamps
      // the host's TSC, so while the host deschedules it its clock runs on and a write that waits for it is
      // late in UTC too, where under -icount the guest's clock would stand still. A bound of 50 ms failed
      // once in a `ctest -j 2` run; the fidelity report measures the lateness, this checks the labelling.
      const int64_t late_ns = utc - std::stoll(fields[13]) * 1'000'000'000;
      EXPECT_GE(late_ns, -1'000'000) << line;
      EXPECT_LT(late_ns, 1'000'000'000) << line;
      EXPECT_EQ(std::stoi(fields[3]) & 0x80, 0x80) << line;
    } else if (fields[12] == "fall") {
      ++falls;
      EXPECT_EQ(std::stoi(fields[3]) & 0x80, 0) << line;
    } else {
      ++scenario_rows;
      EXPECT_TRUE(fields[13].empty()) << line;
    }
  }
  EXPECT_EQ(rises, pulses);
  EXPECT_EQ(falls, pulses);
  EXPECT_EQ(scenario_rows, 5u);
}

TEST_F(QemuRunnerTest, PpsLineOnTheHostClock) {
  RunOptions run = options("ok");
  run.pps_line = 7;
  run.pps_jitter_ns = 1000;
  auto report = run_qemu(run, nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->pps_line, 7);
  ASSERT_EQ(report->machines.size(), 1u);
  EXPECT_EQ(report->machines[0].pps_pulses, 3u);  // the fewest: the scenario lasts 3 us
  EXPECT_EQ(report->events_sent, 5u + 6u);
  expect_pps_truth(read(run.sent_log), 3);
}

TEST_F(QemuRunnerTest, PpsLineOnTheGuestClock) {
  RunOptions run = options("ok");
  run.guest_clock = true;
  run.pps_line = 7;
  auto report = run_qemu(run, nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->machines.size(), 1u);
  EXPECT_GT(report->machines[0].utc_anchor_tsc, 0u);
  EXPECT_GT(report->utc_anchor_ns, 0);
  expect_pps_truth(read(run.sent_log), 3);
}

TEST_F(QemuRunnerTest, PpsLineTheScenarioUsesIsRefused) {
  RunOptions run = options("ok");
  std::ofstream(run.scenario) << "0 2 8\n";
  run.pps_line = 7;
  auto report = run_qemu(run, nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::Usage);
  EXPECT_NE(report.error().message.find("the --pps-line"), std::string::npos) << report.error().message;
}

TEST_F(QemuRunnerTest, KernelPanicIsQuoted) {
  auto report = run_qemu(options("panic"), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::KernelFailure);
  EXPECT_NE(report.error().message.find("\"ETT: PANIC fake double fault\""), std::string::npos)
      << report.error().message;
}

TEST_F(QemuRunnerTest, QemuErrorsAreQuoted) {
  auto report = run_qemu(options("crash"), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::QemuFailure);
  EXPECT_NE(report.error().message.find("exit status 1"), std::string::npos) << report.error().message;
  EXPECT_NE(report.error().message.find("something is wrong"), std::string::npos) << report.error().message;
}

TEST_F(QemuRunnerTest, SuccessStatusWithoutResultLineFails) {
  auto report = run_qemu(options("no-ok"), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::KernelFailure);
  EXPECT_NE(report.error().message.find("ETT: RESULT OK"), std::string::npos) << report.error().message;
}

TEST_F(QemuRunnerTest, DumpTimeoutNamesThePhase) {
  RunOptions run = options("hang");
  run.timeout_s = 1.5;
  auto report = run_qemu(run, nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::Timeout);
  EXPECT_NE(report.error().message.find("dump phase"), std::string::npos) << report.error().message;
  EXPECT_NE(report.error().message.find("kernel state: stopped"), std::string::npos)
      << report.error().message;
  // The logs are written on failure too.
  EXPECT_NE(read(run.serial_log).find("ETT: fake kernel"), std::string::npos);
  EXPECT_EQ(std::count_if(std::istreambuf_iterator<char>(*std::make_unique<std::ifstream>(run.sent_log)), {},
                          [](char c) { return c == '\n'; }),
            6);
}

// Several machines: one disk (and log) per machine, numbered before the extension.
TEST(MachinePaths, NumberedBeforeTheExtension) {
  EXPECT_EQ(machine_disk_path("dir/trace.img", 1, 1), "dir/trace.img");
  EXPECT_EQ(machine_disk_path("dir/trace.img", 1, 2), "dir/trace-1.img");
  EXPECT_EQ(machine_disk_path("dir/trace.img", 2, 2), "dir/trace-2.img");
  EXPECT_EQ(machine_disk_path("trace", 3, 3), "trace-3");
  EXPECT_EQ(machine_disk_path("sent.csv", 2, 4), "sent-2.csv");
}

}  // namespace
}  // namespace ett::host
