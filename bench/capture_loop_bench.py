#!/usr/bin/env python3
"""capture_loop_bench.py: the capture loop's idle speed under QEMU against the bare poll floor, same boot.

Prints numbers; it is not a timed test. For each probe source QEMU can run (ivshmem; lpt, the emulated
parallel port's data register, whose lines never change under QEMU) and for ivshmem with filter=, the real
kernel runs `bench=N` (through `ett qemu run --append`): in one boot it alternates N windows of the capture
loop (the production instantiation for that source, layout and filter, idle, its stop checks included) with N
windows of the floor -- the same idle-step instructions (arch/x86/idle_poll.h: read, compare, count down,
branch) with only a TSC read every 1024 polls. Each window reports its polls, ticks and its fastest round of
1024 polls (the loop's: one stop check to the next). A loop round does everything a floor round does and more.

Two boots per source (statistics in bench/loop_bench_stats.py):
  - --clock guest (QEMU -icount shift=2): the guest's TSC advances 4 ticks per executed instruction, whatever
    the host's load. Every round of a side is the same, so `ratio` is the exact ratio of instructions per
    poll, loop over floor: below 1 only if the benchmark is wrong.
  - --clock host (plain TCG): the guest's TSC is the host's, real time with the host's load in it. Host noise
    only adds time, so the fastest round of each side estimates its undisturbed cost (`host` in the JSON, with
    quantiles over the windows, the pair ratios and the stall-free window medians). The loop's extra is 1-2 %
    with ivshmem and ~0.2 % with lpt (a port read is an I/O exit); the host's jitter can exceed the latter.
A last boot, mode=calibrate, gives the calibrate loop's step distribution (each step stores a record).
The last line of output is one JSON object, per source: floor_ticks, loop_ticks (guest ticks per poll of the
fastest rounds, their median over the windows), ratio, the instructions per round, and `host`.
Usage: bench/capture_loop_bench.py [BIN_DIR] [WINDOWS]   (default build/bin, 400; needs ett, ett-kernel.elf,
ett-kernel64.elf, qemu-system-i386, qemu-system-x86_64)
"""
import csv, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loop_bench_stats as stats  # noqa: E402

bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "bin")
windows = int(sys.argv[2]) if len(sys.argv) > 2 else 400
ett = os.path.join(bin_dir, "ett")

SOURCES = [("ivshmem", "probe=ivshmem"), ("lpt", "probe=lpt"),
           ("ivshmem filter=XXXX1111", "probe=ivshmem filter=XXXX1111"),
           ("ivshmem x86-64 kernel", "probe=ivshmem")]
# The x86-64 kernel (long mode, paging on) beside the i686 one: booted with its own image and QEMU binary.
KERNEL64 = ["--kernel", os.path.join(bin_dir, "ett-kernel64.elf"), "--qemu", "qemu-system-x86_64"]
# `ett qemu run --clock guest` runs QEMU with -icount shift=2 (host-tools/harness/qemu_command.cpp): each
# instruction is 2^2 ns of guest time, and the guest's TSC counts guest nanoseconds.
ICOUNT_TICKS_PER_INSTRUCTION = 4


def run(args):
    return subprocess.run([ett] + args, capture_output=True, text=True)


def boot(tmp, name, append, clock="host", disk_size=None):
    disk = os.path.join(tmp, name + ".img")
    if disk_size:
        run(["mkdisk", disk, "--size", disk_size])
    scenario = os.path.join(tmp, "late.scn")
    with open(scenario, "w") as f:  # one write after the capture has ended by itself: no host stop
        f.write("0 1 1\n30000000 1 2\n")
    serial = os.path.join(tmp, name + ".serial")
    kernel = KERNEL64 if "x86-64" in name else []
    r = run(["qemu", "run", "--disk", disk, "--scenario", scenario, "--serial-log", serial, "--timeout", "300",
             "--clock", clock, "--append", append] + kernel)
    text = open(serial).read() if os.path.exists(serial) else ""
    return disk, text, r


def bench_windows(tmp, name, append, clock):
    tag = name.replace(" ", "_").replace("=", "_") + "-" + clock
    _, serial, r = boot(tmp, tag, f"bench={windows} limit=0.1 dump=none {append}", clock)
    if "ETT: bench done" not in serial:
        sys.exit(f"{name} ({clock} clock): the kernel did not finish the benchmark:\n{r.stdout}{r.stderr}"
                 f"{serial[-2000:]}")
    try:
        return stats.parse_windows(serial), int(re.search(r"ETT: tsc (\d+) Hz", serial).group(1))
    except (AttributeError, ValueError) as e:
        sys.exit(f"{name} ({clock} clock): {e}")


def bench(tmp, name, append):
    try:
        guest, _ = bench_windows(tmp, name, append, "guest")
        result = stats.guest_clock_stats(guest, ICOUNT_TICKS_PER_INSTRUCTION)
        host, hz = bench_windows(tmp, name, append, "host")
        result["host"] = stats.host_clock_stats(host)
    except ValueError as e:
        sys.exit(f"{name}: {e} (the lines changed during the benchmark?)")
    result["host"]["tsc_hz"] = hz
    return result


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


with tempfile.TemporaryDirectory() as tmp:
    results = {name: bench(tmp, name, append) for name, append in SOURCES}

    disk, serial, r = boot(tmp, "calibrate", "mode=calibrate", disk_size="16M")
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
    print(f"ticks per poll of the fastest 1024-poll rounds; load average {load:.1f}")
    print("guest clock (-icount shift=2, 4 ticks per instruction; every window the same = deterministic):")
    print(f"  {'source':26} {'floor':>8} {'loop':>8} {'ratio':>8} {'instr/round floor':>18} {'loop':>6}")
    for name, s in results.items():
        print(f"  {name:26} {s['floor_ticks']:8.3f} {s['loop_ticks']:8.3f} {s['ratio']:8.5f} "
              f"{s['floor_instructions_per_round']:18.0f} {s['loop_instructions_per_round']:6.0f}"
              f"{'' if s['deterministic'] else '  NOT deterministic'}")
    hz_host = next(iter(results.values()))["host"]["tsc_hz"]
    print(f"host clock (plain TCG, TSC {hz_host / 1e6:.1f} MHz, real time): fastest of all windows, "
          f"[p10 p50 p90 of the windows' fastest], pair ratio p10/p50/p90, stall-free window medians")
    for name, s in results.items():
        h = s["host"]
        fq, lq, pq = h["floor_fastest_p10_p50_p90"], h["loop_fastest_p10_p50_p90"], h["pair_ratio_p10_p50_p90"]
        print(f"  {name:26} floor {h['floor_ticks']:.2f} [{fq[0]:.2f} {fq[1]:.2f} {fq[2]:.2f}] "
              f"loop {h['loop_ticks']:.2f} [{lq[0]:.2f} {lq[1]:.2f} {lq[2]:.2f}] ratio {h['ratio']:.4f}; "
              f"pairs {pq[0]:.4f}/{pq[1]:.4f}/{pq[2]:.4f} ({h['pairs_below_1']} of {h['windows']} below 1); "
              f"means {h['window_mean_floor_ticks']:.2f}/{h['window_mean_loop_ticks']:.2f} = "
              f"{h['window_mean_ratio']:.4f} over {h['stall_free_windows']} stall-free")
    print(f"calibrate loop ({len(steps)} steps, each stores a record): mean {mean:.1f}, "
          f"p50 {percentile(steps, 0.5)}, p99.7 {percentile(steps, 0.997)}, max {steps[-1]} ticks "
          f"({steps[-1] / hz * 1e9:.0f} ns); {hz / mean / 1e6:.2f} M steps/s")
    print(json.dumps(results, sort_keys=True))
    for name, s in results.items():
        if s["ratio"] < 1 or not s["deterministic"]:
            sys.exit(f"{name}: the loop ran fewer instructions per poll than the floor, or the -icount rounds "
                     f"differed: the benchmark is wrong")
