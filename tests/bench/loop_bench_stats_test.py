#!/usr/bin/env python3
"""loop_bench_stats_test.py: the capture loop benchmark's statistics (bench/loop_bench_stats.py) on window
lines made from the kernel's own format string, with known answers."""
import os
import re
import statistics
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import loop_bench_stats as stats  # noqa: E402


def kernel_window_format():
    """The printf format of the kernel's `ETT: bench window` line (kernel/main.cpp), as a Python % format."""
    with open(os.path.join(ROOT, "kernel", "main.cpp")) as f:
        source = f.read()
    start = source.index('"ETT: bench window')
    literals = re.match(r'((?:"[^"]*"\s*)+)', source[start:]).group(1)
    text = "".join(re.findall(r'"([^"]*)"', literals)).replace("\\n", "\n")
    return text.replace("%llu", "%d").replace("%u", "%d")


FORMAT = kernel_window_format()


def line(index, loop, floor):
    """loop/floor: (polls, ticks, fastest round, stalled)."""
    return FORMAT % (index, loop[0], loop[1], loop[2], " stalled" if loop[3] else "", floor[0], floor[1],
                     floor[2], " stalled" if floor[3] else "")


def serial(pairs):
    return "ETT: bench: 40 window pairs\n" + "".join(line(i + 1, l, f) for i, (l, f) in enumerate(pairs)) + \
        "ETT: bench done\n"


class ParseTest(unittest.TestCase):
    def test_reads_every_field_of_the_kernels_line(self):
        windows = stats.parse_windows(serial([((49152, 1002712, 20812, False), (50176, 1010192, 20600, True)),
                                              ((1024, 99, 98, True), (2048, 200, 97, False))]))
        self.assertEqual(len(windows), 2)
        w = windows[0]
        self.assertEqual((w.loop_polls, w.loop_ticks, w.loop_fastest, w.loop_stalled), (49152, 1002712, 20812, False))
        self.assertEqual((w.floor_polls, w.floor_ticks, w.floor_fastest, w.floor_stalled),
                         (50176, 1010192, 20600, True))
        self.assertTrue(w.stalled)
        self.assertTrue(windows[1].loop_stalled)
        self.assertFalse(windows[1].floor_stalled)


class GuestClockTest(unittest.TestCase):
    def test_ratio_is_the_ratio_of_the_fastest_rounds_and_counts_instructions(self):
        # 5 instructions per poll, 4 ticks per instruction: floor 30, loop 83 more instructions per round.
        floor_round, loop_round = 4 * (5 * 1024 + 30), 4 * (5 * 1024 + 83)
        # The windows' own ticks include the loop's entry and exit; the ratio does not use them.
        windows = stats.parse_windows(serial([((49152, 49 * loop_round + 3000, loop_round, False),
                                               (50176, 49 * floor_round, floor_round, False))] * 25))
        s = stats.guest_clock_stats(windows, 4)
        self.assertEqual(s["ratio"], round(loop_round / floor_round, 5))
        self.assertGreater(s["ratio"], 1)
        self.assertEqual(s["floor_ticks"], round(floor_round / 1024, 4))
        self.assertEqual(s["loop_instructions_per_round"], 5 * 1024 + 83)
        self.assertEqual(s["floor_instructions_per_round"], 5 * 1024 + 30)
        self.assertTrue(s["deterministic"])
        self.assertEqual(s["windows"], 25)

    def test_a_window_that_differs_is_reported_and_the_median_ignores_it(self):
        pairs = [((1024, 1100, 1100, False), (1024, 1000, 1000, False))] * 24
        pairs.append(((1024, 900, 900, False), (1024, 1000, 1000, False)))
        s = stats.guest_clock_stats(stats.parse_windows(serial(pairs)), 1)
        self.assertFalse(s["deterministic"])
        self.assertEqual(s["ratio"], 1.1)

    def test_too_few_windows_is_an_error(self):
        pairs = [((1024, 1100, 1100, False), (1024, 1000, 1000, False))] * 19
        with self.assertRaisesRegex(ValueError, "only 19 usable window pairs"):
            stats.guest_clock_stats(stats.parse_windows(serial(pairs)), 1)


class HostClockTest(unittest.TestCase):
    def test_fastest_rounds_of_each_side_wherever_they_are(self):
        # Host noise only adds time: each side's fastest round comes from a different window.
        pairs = [((10240, 20480, 2048 + 10 * i, False), (10240, 20480, 2000 + 10 * (30 - i), False))
                 for i in range(30)]
        s = stats.host_clock_stats(stats.parse_windows(serial(pairs)))
        self.assertEqual(s["loop_ticks"], 2.0)
        self.assertEqual(s["floor_ticks"], round(2000 / 1024 + 10 / 1024, 3))
        self.assertEqual(s["ratio"], round(2048 / 2010, 4))
        pair = sorted((2048 + 10 * i) / (2000 + 10 * (30 - i)) for i in range(30))
        self.assertEqual(s["pairs_below_1"], sum(1 for r in pair if r < 1))
        self.assertEqual(s["pair_ratio_p10_p50_p90"][1], round(statistics.median(pair), 4))
        self.assertEqual(s["windows"], 30)

    def test_window_means_are_over_stall_free_pairs_when_there_are_20(self):
        clean = [((1000, 2000, 2048, False), (1000, 1000, 1024, False))] * 20
        stalled = [((1000, 90000, 2048, True), (1000, 1000, 1024, False))] * 10
        s = stats.host_clock_stats(stats.parse_windows(serial(clean + stalled)))
        self.assertEqual(s["window_mean_ratio"], 2.0)
        self.assertEqual(s["stall_free_windows"], 20)
        self.assertEqual(s["window_means_over"], "stall-free pairs")
        s = stats.host_clock_stats(stats.parse_windows(serial(clean[:19] + stalled)))
        self.assertEqual(s["window_means_over"], "all pairs (fewer than 20 stall-free)")
        self.assertEqual(s["window_mean_loop_ticks"], 2.0)  # the median of 19 x 2 and 10 x 90

    def test_quantile_is_the_inclusive_interpolation(self):
        values = [7.5, 1.0, 3.25, 9.0, 2.0, 4.0, 11.5]
        q = statistics.quantiles(values, n=10, method="inclusive")
        self.assertAlmostEqual(stats.quantile(values, 0.1), q[0])
        self.assertAlmostEqual(stats.quantile(values, 0.9), q[8])
        self.assertEqual(stats.quantile(values, 0.5), statistics.median(values))
        self.assertEqual(stats.quantile([3.0], 0.9), 3.0)


if __name__ == "__main__":
    unittest.main()
