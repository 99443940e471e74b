// injector.cpp: the host side of the virtual probe: timed single-byte release stores into shared memory.
#include "harness/injector.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>

#include "ett/virtual_probe.h"

namespace ett::host {

namespace {

constexpr uint64_t kSpinNs = 200'000;          // busy-wait this close to a write: sleeping wakes up too late
constexpr uint64_t kCheckEveryNs = 5'000'000;  // how often keep_going() runs
constexpr uint64_t kNoCheckNs = 20'000;        // never call keep_going() this close to a write
constexpr uint64_t kForceCheckNs = 100'000'000;  // ... unless it has not run for this long
// Linux throttles real-time threads that run for more than 950 ms of each second (sched_rt_runtime_us), which
// would stall the injector for 50 ms. It steps down to a normal thread for a short break well before that.
constexpr uint64_t kRealtimeStretchNs = 800'000'000;
constexpr uint64_t kRealtimeBreakNs = 100'000'000;
// A stretch in which the thread slept this long in all (5 %, what the kernel's throttling leaves) has left
// the CPU often enough: no break needed. A break at normal priority is the worst case under load: measured, a
// guest-clock playback held up for 180 ms by the CPU hogs.
constexpr uint64_t kRealtimeSleepCreditNs = 40'000'000;

// Guest clock playback. The injector spins: on this project's loaded 2-core VM a sleeping SCHED_FIFO thread
// was woken 50 us to 4 ms late several times a run, and the guest runs on meanwhile (a SIGSTOP of QEMU took
// effect only ~4 ms later, so stopping the guest for the injector's sleeps is no way out). It sleeps when the
// next write is more than kLongNapNs of host time away (at the guest's rate seen, times kRateMargin), waking
// half the wait early; and, only as far as the real-time budget needs it (kBudgetSleep of every
// kBudgetWindowNs), for shorter waits, waking kWakeEarlyNs early.
constexpr uint64_t kLongNapNs = 2'000'000;
constexpr uint64_t kNapMinNs = 10'000;  // shorter naps are not worth the system call
constexpr uint64_t kWakeEarlyNs = 50'000;
constexpr uint64_t kBudgetWindowNs = 100'000'000;
constexpr double kBudgetSleep = 0.08;
constexpr double kRateMargin = 1.5;
constexpr size_t kRateSamples = 15;  // the guest's rate is the median of the latest samples
// The kernel's hold (Control.hold_256) for a write is this much guest time after the write's due time: an
// injector on time writes at the due time and the guest never waits (a hold at the due time itself made it
// wait at almost every write, for the stop check the published clock lags by); one held up by the host makes
// the guest wait at its first stop check after due + kHoldMarginNs, so the write is at most that plus one
// stop check interval (~25 us) late on the guest's clock, however long the host held the injector up.
constexpr uint64_t kHoldMarginNs = 50'000;
// While pacing waits for the kernel's polls the hold lets the guest run this many stop check intervals on.
constexpr uint64_t kPaceHoldSteps = 4;

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

  // Called now and then: keeps the time spent real-time under the kernel's throttling budget. `slept_ns`:
  // how long the thread has slept in all so far; a stretch with enough sleep in it needs no break.
  void pace(uint64_t now, uint64_t slept_ns = 0) {
    if (!m_active) return;
    if (m_since == 0) {
      m_since = now;
      m_slept_at_since = slept_ns;
    }
    const uint64_t elapsed = now - m_since;
    if (m_realtime && elapsed >= kRealtimeStretchNs &&
        slept_ns - m_slept_at_since >= kRealtimeSleepCreditNs) {
      m_since = now;
      m_slept_at_since = slept_ns;
    } else if (m_realtime && elapsed >= kRealtimeStretchNs) {
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
  uint64_t m_slept_at_since = 0;
};

// One guest's TSC as its kernel publishes it (Control.clock_256: TSC / 256 at every stop check), unwrapped
// from the capture's start TSC to 64 bits and extrapolated between two publications.
class GuestClock {
 public:
  GuestClock(const uint32_t* clock_256, const uint32_t* heartbeat, uint64_t start_tsc)
      : m_low(*clock_256), m_beat(*heartbeat) {
    m_last_beat = m_beat.load(std::memory_order_acquire);
    m_units = start_tsc >> 8;
    m_last_low = static_cast<uint32_t>(m_units);
    m_value = m_units << 8;
    m_seen_at = monotonic_ns();
  }

  // The latest published value: the guest's clock is at least this now (the capture's start until the
  // kernel's first stop check has published one).
  uint64_t published() {
    if (m_beat.load(std::memory_order_acquire) == 0) return m_value;
    const uint32_t low = m_low.load(std::memory_order_acquire);
    if (low == m_last_low) return m_value;
    const uint64_t now = monotonic_ns();
    m_units += static_cast<uint32_t>(low - m_last_low);
    const uint64_t delta = (m_units << 8) - m_value;
    // The heartbeat counts the kernel's publications: a step sample only from two consecutive ones (a delta
    // over publications this thread missed would make the step, and so the estimate's reach, too long).
    const uint32_t beat = m_beat.load(std::memory_order_acquire);
    const bool consecutive = beat - m_last_beat == 1;
    m_last_beat = beat;
    // A rate sample only from two publications seen while watching: after a sleep of the injector the
    // first one is seen late. A vCPU descheduled in between gives a slow sample, an injector that was
    // itself held up a fast one: the median of the latest samples ignores both.
    if (m_watching && now > m_seen_at) {
      m_samples[m_sample_count++ % kRateSamples] =
          static_cast<double>(delta) / static_cast<double>(now - m_seen_at);
      const size_t n = std::min(m_sample_count, kRateSamples);
      std::array<double, kRateSamples> sorted = m_samples;
      std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
      m_rate = sorted[n / 2];
      m_fastest = std::max(m_fastest, m_rate);
      // The shortest of them, once there are a few: a publication read before its heartbeat was counted makes
      // one look consecutive over two steps.
      if (consecutive) {
        m_shortest_step = m_shortest_step == 0 ? delta : std::min(m_shortest_step, delta);
        ++m_step_count;
      }
    }
    m_value = m_units << 8;
    m_last_low = low;
    m_seen_at = now;
    m_watching = true;
    return m_value;
  }

  // The guest's clock now, estimated: the last publication plus the host time since then at the guest's
  // rate, at most one publication interval ahead (the next one is due by then; a vCPU descheduled
  // meanwhile makes the estimate early by at most that much).
  uint64_t estimate() {
    const uint64_t value = published();
    if (m_rate == 0 || step() == 0) return value;
    const double ahead = static_cast<double>(monotonic_ns() - m_seen_at) * m_rate;
    return value + static_cast<uint64_t>(std::min(ahead, static_cast<double>(step())));
  }

  // Host ns until the clock reaches `tsc`, at a margin over the rate seen (0: unknown, or due now).
  uint64_t host_ns_until(uint64_t tsc) {
    const uint64_t now = estimate();
    if (tsc <= now || m_rate == 0) return 0;
    return static_cast<uint64_t>(static_cast<double>(tsc - now) / (m_rate * kRateMargin));
  }

  void slept() { m_watching = false; }
  // The publication interval in guest ticks, once a few consecutive publications were seen (0: not yet).
  uint64_t step() const { return m_step_count >= 3 ? m_shortest_step : 0; }
  double fastest_rate() const { return m_fastest; }

 private:
  std::atomic_ref<const uint32_t> m_low;
  std::atomic_ref<const uint32_t> m_beat;
  uint32_t m_last_low = 0;
  uint64_t m_units = 0;  // TSC / 256, unwrapped
  uint64_t m_value = 0;
  uint64_t m_seen_at = 0;
  bool m_watching = false;
  std::array<double, kRateSamples> m_samples{};
  size_t m_sample_count = 0;
  double m_rate = 0;  // guest ticks per host ns
  double m_fastest = 0;
  uint32_t m_last_beat = 0;
  uint64_t m_shortest_step = 0;  // between two consecutive publications
  size_t m_step_count = 0;       // consecutive publications seen
};

}  // namespace

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec);
}

int64_t realtime_ns() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

uint64_t published_guest_clock(const PlayTarget& target) {
  return GuestClock(target.clock_256, target.clock_heartbeat, target.start_tsc).published();
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
                          std::optional<int> cpu, uint64_t start_monotonic_ns) {
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
  const uint64_t start = start_monotonic_ns != 0 ? start_monotonic_ns : monotonic_ns();
  result.start_monotonic_ns = start;
  uint64_t last_check = monotonic_ns();
  // Now and then while waiting: keep the real-time budget, ask the caller whether to go on.
  auto checkpoint = [&](uint64_t now) {
    last_check = now;
    realtime.pace(now);
    if (keep_going()) return true;
    result.stopped_early = true;
    result.duration_ns = elapsed_ns(start, monotonic_ns());
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
      const uint64_t sent = elapsed_ns(start, monotonic_ns());
      const uint64_t held = held_back ? sent - std::min(sent, write.time_ns) : 0;
      result.held_back_max_ns = std::max(result.held_back_max_ns, held);
      result.held_back_total_ns += held;
      for (size_t i = write.first; i < write.first + write.count; ++i) {
        const ScenarioEvent& event = scenario.events[i];
        SentEvent record{i, event.probe, event.code, event.lines, event.time_ns, sent, tsc, tsc_before};
        record.held_back = held_back;
        record.held_ns = held;
        result.sent_per_target[t].push_back(record);
      }
      ++result.writes_done;
    }
  }
  result.duration_ns = elapsed_ns(start, monotonic_ns());
  return result;
}

PlayResult play_on_guest_clocks(const std::vector<PlayTarget>& targets,
                                const std::function<bool()>& keep_going, std::optional<int> cpu) {
  PlayResult result;
  result.guest_clock = true;
  result.sent_per_target.resize(targets.size());
  ScopedRealtime realtime(cpu);
  result.realtime = realtime.active();
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // a normal thread's sleeps would end up to 50 us late
  struct Cursor {
    std::atomic_ref<uint8_t> line_byte;
    GuestClock clock;
    std::optional<std::atomic_ref<const uint32_t>> beat;
    uint64_t origin = 0;
    double ticks_per_ns = 1;
    size_t next = 0;
    uint32_t beat_at_last_write = 0;
    bool wrote_before = false;
    bool held = false;  // the next write is due but waits for the kernel's poll
    std::optional<std::atomic_ref<uint32_t>> hold;
    uint64_t hold_tsc = 0;
    const HoldPipe* pipe = nullptr;
    // The earliest hold moved on from that the guest may still wait at (0: none): the kernel publishes its
    // clock and then reads the hold, and its read can pass its store, so a guest can wait at a hold it read
    // just before the move and show that only a little later. Released once its clock shows it got there.
    uint64_t unreleased = 0;
    // The kernel's hold at guest TSC `tsc`, on the clock_256 scale; 0 releases it. Never 0 for a time.
    void hold_at(uint64_t tsc) {
      if (hold_tsc != 0) unreleased = unreleased == 0 ? hold_tsc : std::min(unreleased, hold_tsc);
      hold_tsc = tsc;
      if (!hold) return;
      const uint32_t value = static_cast<uint32_t>(tsc >> 8);
      hold->store(tsc == 0 ? 0 : std::max<uint32_t>(value, 1), std::memory_order_seq_cst);
      release_reached();
    }
    // Lets a guest waiting at a hold that has moved on go (the pipe: after the store of the new hold).
    void release_reached() {
      if (unreleased == 0 || (clock.published() >> 8) < (unreleased >> 8)) return;
      unreleased = 0;
      if (pipe) pipe->release();
    }
  };
  std::vector<Cursor> cursors;
  cursors.reserve(targets.size());
  for (const PlayTarget& target : targets) {
    result.sent_per_target[cursors.size()].reserve(target.scenario->events.size());
    cursors.push_back(Cursor{std::atomic_ref<uint8_t>(*target.lines),
                             GuestClock(target.clock_256, target.clock_heartbeat, target.start_tsc),
                             std::nullopt});
    Cursor& cursor = cursors.back();
    if (target.heartbeat) cursor.beat.emplace(*target.heartbeat);
    if (target.hold_256) cursor.hold.emplace(*target.hold_256);
    cursor.pipe = target.hold_pipe;
    // Hold the guest where it is before its origin is read: until the first write's hold below is in place, a
    // guest running on while this thread is descheduled could pass the first writes' due times unseen.
    cursor.hold_at(cursor.clock.published());
    cursor.origin = target.origin_tsc != 0 ? target.origin_tsc : cursor.clock.published();
    cursor.ticks_per_ns = static_cast<double>(target.tsc_hz) / 1e9;
    result.origin_tsc.push_back(cursor.origin);
  }
  const uint64_t start = monotonic_ns();
  result.start_monotonic_ns = start;
  uint64_t last_check = start;
  uint64_t slept = 0;
  uint64_t window_start = start, slept_at_window = 0;  // the real-time budget's window
  auto finish = [&] {
    for (Cursor& cursor : cursors) {
      cursor.hold_at(0);
      if (cursor.pipe) cursor.pipe->release();  // whatever the clock shows yet
    }
    result.duration_ns = elapsed_ns(start, monotonic_ns());
    for (const Cursor& cursor : cursors) result.guest_rate.push_back(cursor.clock.fastest_rate());
  };
  auto hold_margin = [](const Cursor& cursor) {
    return static_cast<uint64_t>(static_cast<double>(kHoldMarginNs) * cursor.ticks_per_ns);
  };
  auto due_tsc = [&](const Cursor& cursor, const ScenarioWrite& write) {
    return cursor.origin +
           static_cast<uint64_t>(std::llround(static_cast<double>(write.time_ns) * cursor.ticks_per_ns));
  };
  for (size_t t = 0; t < targets.size(); ++t)
    if (!targets[t].scenario->writes.empty())
      cursors[t].hold_at(due_tsc(cursors[t], targets[t].scenario->writes.front()) + hold_margin(cursors[t]));
  for (;;) {
    bool left = false;
    uint64_t wait_ns = UINT64_MAX;  // host time until the nearest write
    for (size_t t = 0; t < targets.size(); ++t) {
      Cursor& cursor = cursors[t];
      const Scenario& scenario = *targets[t].scenario;
      cursor.release_reached();
      if (cursor.next >= scenario.writes.size()) continue;
      left = true;
      const ScenarioWrite& write = scenario.writes[cursor.next];
      const uint64_t due = due_tsc(cursor, write);
      if (const uint64_t until = cursor.clock.host_ns_until(due); until > 0) {
        wait_ns = std::min(wait_ns, until);
        continue;
      }
      if (cursor.clock.estimate() < due) {  // rate not known yet: watch
        wait_ns = 0;
        continue;
      }
      if (cursor.beat && cursor.wrote_before &&
          cursor.beat->load(std::memory_order_acquire) - cursor.beat_at_last_write < vprobe::kPaceBeats) {
        // The kernel must poll on for the beats pacing waits for: a few stop checks further, no more.
        if (const uint64_t published = cursor.clock.published();
            !cursor.held || (published >> 8) >= (cursor.hold_tsc >> 8))
          cursor.hold_at(cursor.clock.step() == 0 ? 0 : published + kPaceHoldSteps * cursor.clock.step());
        cursor.held = true;
        wait_ns = 0;
        continue;
      }
      const uint64_t guest_before = cursor.clock.published();
      const uint64_t tsc_before = __rdtsc();
      cursor.line_byte.store(write.lines, std::memory_order_seq_cst);
      const uint64_t tsc = __rdtsc();
      if (cursor.beat) cursor.beat_at_last_write = cursor.beat->load(std::memory_order_acquire);
      cursor.wrote_before = true;
      ++cursor.next;
      cursor.hold_at(cursor.next < scenario.writes.size()
                         ? due_tsc(cursor, scenario.writes[cursor.next]) + hold_margin(cursor)
                         : 0);
      const uint64_t sent = elapsed_ns(start, monotonic_ns());
      uint64_t held = 0;
      if (cursor.held) {
        held =
            static_cast<uint64_t>(static_cast<double>(cursor.clock.estimate() - due) / cursor.ticks_per_ns);
        ++result.paced_writes;
        result.held_back_max_ns = std::max(result.held_back_max_ns, held);
        result.held_back_total_ns += held;
      }
      for (size_t i = write.first; i < write.first + write.count; ++i) {
        const ScenarioEvent& event = scenario.events[i];
        SentEvent record{i, event.probe, event.code, event.lines, event.time_ns, sent, tsc, tsc_before};
        record.guest_tsc_due = due;
        record.guest_tsc_before = guest_before;
        record.held_back = cursor.held;
        record.held_ns = held;
        result.sent_per_target[t].push_back(record);
      }
      cursor.held = false;
      ++result.writes_done;
      wait_ns = 0;
    }
    if (!left) break;
    const uint64_t now = monotonic_ns();
    // Not this close to a write, unless writes have kept it busy for long (pacing on a kernel that stopped).
    if ((wait_ns > kNoCheckNs && now - last_check >= kCheckEveryNs) || now - last_check >= kForceCheckNs) {
      last_check = now;
      realtime.pace(now, slept);
      if (!keep_going()) {
        result.stopped_early = true;
        finish();
        return result;
      }
      continue;
    }
    if (now - window_start >= kBudgetWindowNs) {
      window_start = now;
      slept_at_window = slept;
    }
    const bool budget_short =
        static_cast<double>(slept - slept_at_window) < kBudgetSleep * static_cast<double>(now - window_start);
    uint64_t nap = 0;
    if (wait_ns > kLongNapNs)
      nap = std::min(wait_ns / 2, kCheckEveryNs);
    else if (wait_ns > kWakeEarlyNs + kNapMinNs && realtime.active() && budget_short)
      nap = wait_ns - kWakeEarlyNs;
    if (nap > 0) {
      sleep_until(now + nap);
      slept += monotonic_ns() - now;
      for (Cursor& cursor : cursors) cursor.clock.slept();
    } else {
      _mm_pause();
    }
  }
  finish();
  return result;
}

Expected<HoldPipe> HoldPipe::create(const std::string& path) {
  ::unlink(path.c_str());
  if (::mkfifo(path.c_str(), 0600) != 0) return make_error(ErrorKind::Io, errno_message(path, errno));
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    ::unlink(path.c_str());
    return make_error(ErrorKind::Io, errno_message(path, error));
  }
  HoldPipe pipe(path, fd);
  // One page: then one byte more only fits after the reader has emptied it (a page is freed whole).
  fcntl(fd, F_SETPIPE_SZ, 4096);
  const std::array<char, 4096> filler{};
  while (::write(fd, filler.data(), filler.size()) > 0) {
  }
  while (::write(fd, filler.data(), 1) > 0) {
  }
  return pipe;
}

HoldPipe::HoldPipe(HoldPipe&& other) noexcept : m_path(std::move(other.m_path)), m_fd(other.m_fd) {
  other.m_fd = -1;
}

HoldPipe::~HoldPipe() {
  if (m_fd < 0) return;
  ::close(m_fd);
  unlink();
}

void HoldPipe::unlink() {
  if (!m_path.empty()) ::unlink(m_path.c_str());
  m_path.clear();
}

void HoldPipe::release() const {
  std::array<char, 4096> buffer{};
  while (::read(m_fd, buffer.data(), buffer.size()) > 0) {
  }
  // 4095 bytes (one atomic write): room for exactly the one byte a waiting guest is writing.
  [[maybe_unused]] const ssize_t wrote = ::write(m_fd, buffer.data(), buffer.size() - 1);
}

Status write_sent_log(const std::vector<SentEvent>& sent, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return make_error(ErrorKind::Io, errno_message(path, errno));
  fmt::memory_buffer buffer;
  fmt::format_to(std::back_inserter(buffer),
                 "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,"
                 "guest_tsc_before,held_back,utc_ns,pps_edge,pps_second,held_ns\n");
  for (const SentEvent& event : sent) {
    fmt::format_to(std::back_inserter(buffer), "{},{},{},{},{},{},{},{},{},{},{},", event.index, event.probe,
                   event.code, event.lines, event.scheduled_ns, event.sent_ns, event.host_tsc,
                   event.host_tsc_before, event.guest_tsc_due, event.guest_tsc_before,
                   event.held_back ? 1 : 0);
    if (event.utc_ns != 0) fmt::format_to(std::back_inserter(buffer), "{}", event.utc_ns);
    if (event.pps_edge != 0)
      fmt::format_to(std::back_inserter(buffer), ",{},{}", event.pps_edge > 0 ? "rise" : "fall",
                     event.pps_second);
    else
      fmt::format_to(std::back_inserter(buffer), ",,");
    fmt::format_to(std::back_inserter(buffer), ",{}\n", event.held_ns);
  }
  const bool wrote = std::fwrite(buffer.data(), 1, buffer.size(), file) == buffer.size();
  const bool closed = std::fclose(file) == 0;
  if (!wrote || !closed) return make_error(ErrorKind::Io, errno_message(path + ": write failed", errno));
  return {};
}

}  // namespace ett::host
