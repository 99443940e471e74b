#!/usr/bin/env python3
"""capture_loop_bench.py: the capture loop's idle speed under QEMU against the bare poll floor, same boot.

Prints numbers; it is not a timed test. For each probe source QEMU can run (ivshmem; lpt, the emulated
parallel port's data register, whose lines never change under QEMU) and for ivshmem with filter=, one boot of
the real kernel through `ett qemu run --append "bench=N ..."`: in the same boot the kernel alternates N windows
of the capture loop (the production instantiation for that source, layout and filter, idle, its stop checks
included) with N windows of the floor -- the same idle-step instructions (arch/x86/idle_poll.h: read, compare,
count down, branch) with only a TSC read every 1024 polls to end the window. Every window lasts 1 ms (to the
first stop check or TSC read after it); each pair's order alternates. Both give TSC ticks per poll. The loop
does everything the floor does plus the rest of a stop check every 1024 polls, so the ratio of the medians
cannot be below 1 unless the benchmark is wrong. A window in which the host descheduled QEMU's vCPU measures
the host: the kernel marks every window that held a stall (the capture's stall-log rule: a 1024-poll interval
over 4x the shortest and over 20 us), and the medians are taken over the pairs in which neither window did
(all pairs when fewer than 20 are stall-free; the JSON says which).

A fourth boot, mode=calibrate, gives the calibrate loop's step distribution (each step stores a record).
The last line of output is one JSON object: per source, floor_ticks, loop_ticks, ratio (of the medians),
their quartiles, the median of the per-window ratios, and the windows used.
Usage: bench/capture_loop_bench.py [BIN_DIR] [WINDOWS]   (default build/bin, 400; needs ett, ett-kernel.elf,
qemu-system-i386)
"""
import csv, json, os, re, statistics, subprocess, sys, tempfile

bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "bin")
windows = int(sys.argv[2]) if len(sys.argv) > 2 else 400
ett = os.path.join(bin_dir, "ett")

SOURCES = [("ivshmem", "probe=ivshmem"), ("lpt", "probe=lpt"),
           ("ivshmem filter=XXXX1111", "probe=ivshmem filter=XXXX1111")]


def run(args):
    return subprocess.run([ett] + args, capture_output=True, text=True)


def boot(tmp, name, append, disk_size=None):
    disk = os.path.join(tmp, name + ".img")
    if disk_size:
        run(["mkdisk", disk, "--size", disk_size])
    scenario = os.path.join(tmp, "late.scn")
    with open(scenario, "w") as f:  # one write after the capture has ended by itself: no host stop
        f.write("0 1 1\n30000000 1 2\n")
    serial = os.path.join(tmp, name + ".serial")
    # --clock host: plain TCG, the guest's TSC runs with the host's (under -icount, the default for a scenario,
    # it would count instructions, and the windows would compare instruction counts, not time).
    r = run(["qemu", "run", "--disk", disk, "--scenario", scenario, "--serial-log", serial, "--timeout", "300",
             "--clock", "host", "--append", append])
    text = open(serial).read() if os.path.exists(serial) else ""
    return disk, text, r


def quartiles(values):
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def bench(tmp, name, append):
    _, serial, r = boot(tmp, name.replace(" ", "_").replace("=", "_"), f"bench={windows} limit=0.1 dump=none {append}")
    if "ETT: bench done" not in serial:
        sys.exit(f"{name}: the kernel did not finish the benchmark:\n{r.stdout}{r.stderr}{serial[-2000:]}")
    pairs = re.findall(r"ETT: bench window \d+: loop (\d+) polls (\d+) ticks( stalled)?, "
                       r"floor (\d+) polls (\d+) ticks( stalled)?", serial)
    if len(pairs) < 20:
        sys.exit(f"{name}: only {len(pairs)} window pairs (the lines changed during the benchmark)")
    hz = int(re.search(r"ETT: tsc (\d+) Hz", serial).group(1))
    # Pairs in which neither window held a stall (the kernel marks them by the stall log's rule) measure the
    # loop, not the host; on a busy host they are the ones to compare. Fewer than 20: all pairs, and say so.
    clean = [p for p in pairs if not p[2] and not p[5]]
    used = clean if len(clean) >= 20 else pairs
    rows = [(int(lp), int(lt), int(fp), int(ft)) for lp, lt, _, fp, ft, _ in used]
    loop = [lt / lp for lp, lt, _, _ in rows]
    floor = [ft / fp for _, _, fp, ft in rows]
    pair = [l / f for l, f in zip(loop, floor)]
    result = {
        "floor_ticks": round(statistics.median(floor), 3),
        "loop_ticks": round(statistics.median(loop), 3),
        "ratio": round(statistics.median(loop) / statistics.median(floor), 4),
        "floor_quartiles": [round(q, 3) for q in quartiles(floor)],
        "loop_quartiles": [round(q, 3) for q in quartiles(loop)],
        "pair_ratio_median": round(statistics.median(pair), 4),
        "pair_ratio_quartiles": [round(q, 4) for q in quartiles(pair)],
        "windows": len(pairs),
        "stall_free_windows": len(clean),
        "medians_over": "stall-free pairs" if used is clean else "all pairs (fewer than 20 stall-free)",
        "floor_min": round(min(floor), 3),
        "loop_min": round(min(loop), 3),
        "tsc_hz": hz,
    }
    return result


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


with tempfile.TemporaryDirectory() as tmp:
    results = {name: bench(tmp, name, append) for name, append in SOURCES}

    disk, serial, r = boot(tmp, "calibrate", "mode=calibrate", "16M")
    if r.returncode != 0:
        sys.exit(f"calibrate: ett qemu run failed:\n{r.stdout}{r.stderr}")
    hz = int(re.search(r"ETT: tsc (\d+) Hz", serial).group(1))
    out = os.path.join(tmp, "steps.csv")
    run(["extract", disk, "-o", out])
    with open(out) as f:
        tsc = [int(row["tsc"]) for row in csv.DictReader(f)]
    steps = sorted(b - a for a, b in zip(tsc, tsc[1:]))
    mean = (tsc[-1] - tsc[0]) / len(steps)

    load = os.getloadavg()[0]
    print(f"TSC {hz / 1e6:.1f} MHz (QEMU TCG); ticks are TSC ticks per poll; load average {load:.1f}")
    print(f"{'source':26} {'floor p50 [p25-p75]':>24} {'loop p50 [p25-p75]':>24} {'ratio':>7} {'pairs':>6} {'stall-free':>10}")
    for name, s in results.items():
        fq, lq = s["floor_quartiles"], s["loop_quartiles"]
        print(f"{name:26} {s['floor_ticks']:8.2f} [{fq[0]:6.2f}-{fq[1]:6.2f}] {s['loop_ticks']:8.2f} "
              f"[{lq[0]:6.2f}-{lq[1]:6.2f}] {s['ratio']:7.3f} {s['windows']:6d} {s['stall_free_windows']:10d}")
    print(f"calibrate loop ({len(steps)} steps, each stores a record): mean {mean:.1f}, "
          f"p50 {percentile(steps, 0.5)}, p99.7 {percentile(steps, 0.997)}, max {steps[-1]} ticks "
          f"({steps[-1] / hz * 1e9:.0f} ns); {hz / mean / 1e6:.2f} M steps/s")
    print(json.dumps(results, sort_keys=True))
