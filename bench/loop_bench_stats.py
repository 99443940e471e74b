"""loop_bench_stats.py: the statistics of the capture loop benchmark (bench/capture_loop_bench.py), from the
kernel's `ETT: bench window` lines.

Each line is one window pair: the capture loop (polls, TSC ticks, the ticks of its fastest round of 1024 polls
and one stop check, and whether it held a stall) and the bare-poll floor (the same, a round being 1024 polls
and a TSC read). A round of the loop does everything a round of the floor does and more, so per round it can
only take as long or longer; what the statistics have to cope with is time that is not the loop's.

- `guest_clock_stats`: a boot under QEMU -icount, where the guest's TSC advances a fixed step per executed
  instruction. Every round of a side takes the same number of ticks, so the ratio of the fastest rounds is the
  exact ratio of instructions per poll; it cannot be below 1 unless the loop ran fewer instructions than the
  floor, i.e. the benchmark is wrong. This is the benchmark's `ratio`.
- `host_clock_stats`: a boot under plain TCG, where the guest's TSC is the host's: real time, with the host's
  load in it. Host noise only adds time, so the fastest round of each side is the estimate of its undisturbed
  cost; quantiles over windows, pair ratios and the stall-free window means show the spread.
"""
import re
import statistics

ROUND_POLLS = 1024  # polls between two stop checks (capture/stop_rules.h kPollIntervalLog2)

WINDOW_LINE = re.compile(r"ETT: bench window \d+: loop (\d+) polls (\d+) ticks fastest (\d+)( stalled)?, "
                         r"floor (\d+) polls (\d+) ticks fastest (\d+)( stalled)?")


class Window:
    """One window pair as the kernel printed it."""

    def __init__(self, loop_polls, loop_ticks, loop_fastest, loop_stalled, floor_polls, floor_ticks,
                 floor_fastest, floor_stalled):
        self.loop_polls, self.loop_ticks, self.loop_fastest = loop_polls, loop_ticks, loop_fastest
        self.floor_polls, self.floor_ticks, self.floor_fastest = floor_polls, floor_ticks, floor_fastest
        self.loop_stalled, self.floor_stalled = loop_stalled, floor_stalled

    @property
    def stalled(self):
        return self.loop_stalled or self.floor_stalled


def parse_windows(serial):
    return [Window(int(m[0]), int(m[1]), int(m[2]), bool(m[3]), int(m[4]), int(m[5]), int(m[6]), bool(m[7]))
            for m in WINDOW_LINE.findall(serial)]


def quantile(values, q):
    """The q-quantile (0..1) by linear interpolation between the sorted values (statistics' 'inclusive')."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _usable(windows):
    usable = [w for w in windows if w.loop_fastest > 0 and w.floor_fastest > 0 and w.loop_polls and w.floor_polls]
    if len(usable) < 20:
        raise ValueError(f"only {len(usable)} usable window pairs (at least 20 needed)")
    return usable


def guest_clock_stats(windows, ticks_per_instruction):
    """The -icount boot: per poll, the fastest round's ticks of each side (their medians over the windows;
    every window gives the same under -icount, `deterministic` says whether they did) and their ratio, plus
    the instructions per round those ticks are."""
    usable = _usable(windows)
    floor_rounds = [w.floor_fastest for w in usable]
    loop_rounds = [w.loop_fastest for w in usable]
    floor_round = statistics.median(floor_rounds)
    loop_round = statistics.median(loop_rounds)
    return {
        "floor_ticks": round(floor_round / ROUND_POLLS, 4),
        "loop_ticks": round(loop_round / ROUND_POLLS, 4),
        "ratio": round(loop_round / floor_round, 5),
        "floor_instructions_per_round": round(floor_round / ticks_per_instruction, 2),
        "loop_instructions_per_round": round(loop_round / ticks_per_instruction, 2),
        "deterministic": len(set(floor_rounds)) == 1 and len(set(loop_rounds)) == 1,
        "windows": len(usable),
    }


def host_clock_stats(windows):
    """The plain-TCG boot (real time): per poll, the fastest round of all windows of each side and their ratio
    (host noise only adds time: the estimate of the undisturbed cost, not guaranteed >= 1 when the loop's
    extra is below the host's jitter), the spread of the windows' fastest rounds (p10/p50/p90), the pair
    ratios of the fastest rounds, and the medians of the whole windows' ticks per poll over the pairs without
    a stall (over all pairs when fewer than 20 are stall-free)."""
    usable = _usable(windows)
    floor = [w.floor_fastest / ROUND_POLLS for w in usable]
    loop = [w.loop_fastest / ROUND_POLLS for w in usable]
    pair = [l / f for l, f in zip(loop, floor)]
    clean = [w for w in usable if not w.stalled]
    over = clean if len(clean) >= 20 else usable
    floor_mean = statistics.median(w.floor_ticks / w.floor_polls for w in over)
    loop_mean = statistics.median(w.loop_ticks / w.loop_polls for w in over)
    spread = (0.1, 0.5, 0.9)
    return {
        "floor_ticks": round(min(floor), 3),
        "loop_ticks": round(min(loop), 3),
        "ratio": round(min(loop) / min(floor), 4),
        "floor_fastest_p10_p50_p90": [round(quantile(floor, q), 3) for q in spread],
        "loop_fastest_p10_p50_p90": [round(quantile(loop, q), 3) for q in spread],
        "pair_ratio_p10_p50_p90": [round(quantile(pair, q), 4) for q in spread],
        "pairs_below_1": sum(1 for r in pair if r < 1),
        "window_mean_floor_ticks": round(floor_mean, 3),
        "window_mean_loop_ticks": round(loop_mean, 3),
        "window_mean_ratio": round(loop_mean / floor_mean, 4),
        "window_means_over": "stall-free pairs" if over is clean else "all pairs (fewer than 20 stall-free)",
        "windows": len(usable),
        "stall_free_windows": len(clean),
    }
