// injector.cpp: the host side of the virtual probe: timed single-byte release stores into shared memory.
#include "harness/injector.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "ett/virtual_probe.h"

namespace ett::host {

namespace {

constexpr uint64_t kSpinNs = 200'000;          // busy-wait this close to a write: sleeping wakes up too late
constexpr uint64_t kCheckEveryNs = 5'000'000;  // how often keep_going() runs
constexpr uint64_t kNoCheckNs = 20'000;        // never call keep_going() this close to a write
// Linux throttles real-time threads that run for more than 950 ms of each second (sched_rt_runtime_us), which
// would stall the injector for 50 ms. It steps down to a normal thread for a short break well before that.
constexpr uint64_t kRealtimeStretchNs = 800'000'000;
constexpr uint64_t kRealtimeBreakNs = 100'000'000;

void sleep_until(uint64_t monotonic) {
  timespec when{static_cast<time_t>(monotonic / 1'000'000'000), static_cast<long>(monotonic % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, nullptr) == EINTR) {
  }
}

// Pins the calling thread to `cpu` and raises it to a low SCHED_FIFO priority for its lifetime, when
// permitted. The pinning matters as much as the priority: a spinning real-time thread starves any normal
// thread that shares its CPU, so QEMU must have been kept off that CPU (see choose_injector_cpu).
class ScopedRealtime {
 public:
  explicit ScopedRealtime(std::optional<int> cpu) {
    if (!cpu) return;
    if (pthread_getaffinity_np(pthread_self(), sizeof(m_old_cpus), &m_old_cpus) != 0) return;
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(*cpu, &only);
    if (pthread_setaffinity_np(pthread_self(), sizeof(only), &only) != 0) return;
    m_pinned = true;
    if (pthread_getschedparam(pthread_self(), &m_old_policy, &m_old_param) != 0) return;
    sched_param param{};
    param.sched_priority = 1;
    m_active = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  }
  ~ScopedRealtime() {
    if (m_active && m_realtime) pthread_setschedparam(pthread_self(), m_old_policy, &m_old_param);
    if (m_pinned) pthread_setaffinity_np(pthread_self(), sizeof(m_old_cpus), &m_old_cpus);
  }
  ScopedRealtime(const ScopedRealtime&) = delete;
  ScopedRealtime& operator=(const ScopedRealtime&) = delete;
  bool active() const { return m_active; }

  // Called now and then: keeps the time spent real-time under the kernel's throttling budget.
  void pace(uint64_t now) {
    if (!m_active) return;
    if (m_since == 0) m_since = now;
    const uint64_t elapsed = now - m_since;
    if (m_realtime && elapsed >= kRealtimeStretchNs) {
      m_realtime = pthread_setschedparam(pthread_self(), m_old_policy, &m_old_param) != 0;
      m_since = now;
    } else if (!m_realtime && elapsed >= kRealtimeBreakNs) {
      sched_param param{};
      param.sched_priority = 1;
      m_realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
      m_since = now;
    }
  }

 private:
  cpu_set_t m_old_cpus{};
  bool m_pinned = false;
  int m_old_policy = SCHED_OTHER;
  sched_param m_old_param{};
  bool m_active = false;
  bool m_realtime = true;  // while m_active: SCHED_FIFO now, not in a break
  uint64_t m_since = 0;
};

}  // namespace

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec);
}

std::optional<int> choose_injector_cpu() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) < 2) return std::nullopt;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu)
    if (CPU_ISSET(cpu, &cpus)) return cpu;
  return std::nullopt;
}

PlayResult play_scenario(const Scenario& scenario, uint8_t* lines, const std::function<bool()>& keep_going,
                         std::optional<int> cpu, const uint32_t* heartbeat) {
  PlayResult result = play_scenarios({PlayTarget{&scenario, lines, heartbeat}}, keep_going, cpu);
  result.sent = std::move(result.sent_per_target.front());
  result.sent_per_target.clear();
  return result;
}

PlayResult play_scenarios(const std::vector<PlayTarget>& targets, const std::function<bool()>& keep_going,
                          std::optional<int> cpu) {
  PlayResult result;
  result.sent_per_target.resize(targets.size());
  for (size_t t = 0; t < targets.size(); ++t)
    result.sent_per_target[t].reserve(targets[t].scenario->events.size());
  ScopedRealtime realtime(cpu);
  result.realtime = realtime.active();
  // Per target: its line byte, its heartbeat, the next write and the beat seen at its previous write.
  struct Cursor {
    std::atomic_ref<uint8_t> line_byte;
    std::optional<std::atomic_ref<const uint32_t>> beat;
    size_t next = 0;
    uint32_t beat_at_last_write = 0;
    bool wrote_before = false;
  };
  std::vector<Cursor> cursors;
  cursors.reserve(targets.size());
  for (const PlayTarget& target : targets) {
    cursors.push_back(Cursor{std::atomic_ref<uint8_t>(*target.lines), std::nullopt});
    if (target.heartbeat) cursors.back().beat.emplace(*target.heartbeat);
  }
  const uint64_t start = monotonic_ns();
  result.start_monotonic_ns = start;
  uint64_t last_check = start;
  // Now and then while waiting: keep the real-time budget, ask the caller whether to go on.
  auto checkpoint = [&](uint64_t now) {
    last_check = now;
    realtime.pace(now);
    if (keep_going()) return true;
    result.stopped_early = true;
    result.duration_ns = monotonic_ns() - start;
    return false;
  };

  std::vector<size_t> due;  // targets written at this step
  for (;;) {
    // The writes due first: every target whose next write has the earliest time (a sync edge reaches all).
    std::optional<uint64_t> due_ns;
    for (size_t t = 0; t < targets.size(); ++t)
      if (cursors[t].next < targets[t].scenario->writes.size()) {
        const uint64_t time = targets[t].scenario->writes[cursors[t].next].time_ns;
        due_ns = due_ns ? std::min(*due_ns, time) : time;
      }
    if (!due_ns) break;
    due.clear();
    for (size_t t = 0; t < targets.size(); ++t)
      if (cursors[t].next < targets[t].scenario->writes.size() &&
          targets[t].scenario->writes[cursors[t].next].time_ns == *due_ns)
        due.push_back(t);
    const uint64_t target = start + *due_ns;
    // Pacing: each of these kernels must have polled since its previous write before any of them is written,
    // so that writes due together (a sync edge on several machines) still go out together.
    bool held_back = false;
    for (size_t t : due) {
      Cursor& cursor = cursors[t];
      if (!cursor.beat || !cursor.wrote_before) continue;
      while (cursor.beat->load(std::memory_order_acquire) - cursor.beat_at_last_write < vprobe::kPaceBeats) {
        const uint64_t now = monotonic_ns();
        held_back = held_back || now >= target;
        if (now - last_check >= kCheckEveryNs && !checkpoint(now)) return result;
        _mm_pause();
      }
    }
    if (held_back) result.paced_writes += due.size();
    for (;;) {
      const uint64_t now = monotonic_ns();
      if (now >= target) break;
      const uint64_t remaining = target - now;
      if (remaining > kNoCheckNs && now - last_check >= kCheckEveryNs) {
        if (!checkpoint(now)) return result;
        continue;
      }
      if (remaining > kSpinNs)
        sleep_until(std::min(target - kSpinNs, now + kCheckEveryNs));
      else
        _mm_pause();
    }
    for (size_t t : due) {
      Cursor& cursor = cursors[t];
      const Scenario& scenario = *targets[t].scenario;
      const ScenarioWrite& write = scenario.writes[cursor.next++];
      // seq_cst: the store is globally visible before the heartbeat is read below.
      const uint64_t tsc_before = __rdtsc();
      cursor.line_byte.store(write.lines, std::memory_order_seq_cst);
      const uint64_t tsc = __rdtsc();
      if (cursor.beat) cursor.beat_at_last_write = cursor.beat->load(std::memory_order_acquire);
      cursor.wrote_before = true;
      const uint64_t sent = monotonic_ns() - start;
      for (size_t i = write.first; i < write.first + write.count; ++i) {
        const ScenarioEvent& event = scenario.events[i];
        result.sent_per_target[t].push_back(
            SentEvent{i, event.probe, event.code, event.lines, event.time_ns, sent, tsc, tsc_before});
      }
      ++result.writes_done;
    }
  }
  result.duration_ns = monotonic_ns() - start;
  return result;
}

Status write_sent_log(const std::vector<SentEvent>& sent, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return make_error(ErrorKind::Io, errno_message(path, errno));
  fmt::memory_buffer buffer;
  fmt::format_to(std::back_inserter(buffer),
                 "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before\n");
  for (const SentEvent& event : sent)
    fmt::format_to(std::back_inserter(buffer), "{},{},{},{},{},{},{},{}\n", event.index, event.probe,
                   event.code, event.lines, event.scheduled_ns, event.sent_ns, event.host_tsc,
                   event.host_tsc_before);
  const bool wrote = std::fwrite(buffer.data(), 1, buffer.size(), file) == buffer.size();
  const bool closed = std::fclose(file) == 0;
  if (!wrote || !closed) return make_error(ErrorKind::Io, errno_message(path + ": write failed", errno));
  return {};
}

}  // namespace ett::host
