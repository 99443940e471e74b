#!/usr/bin/env python3
"""capture_loop_bench.py: the capture loop's speed under QEMU next to a bare poll loop measured in the same boot.

Prints numbers; it is not a timed test. Three boots of the real kernel through `ett qemu run`:
  1. mode=calibrate: the kernel first times a bare poll loop (read, compare, count down, branch; 2^20 polls)
     -- the floor -- then records every calibrate-loop step until a 16 MiB trace disk's worth of records is
     full; the step distribution (p50 / p99.7 / max, TSC ticks) comes from `ett extract`.
  2. mode=capture, no events, limit=1: the capture loop's idle step, ticks per poll over a whole second
     (stop checks included), from the kernel's serial summary.
  3. the same with filter=XXXX1111 (the idle step's one extra `and`).
Usage: bench/capture_loop_bench.py [BIN_DIR]   (default build/bin; needs ett, ett-kernel.elf, qemu-system-i386)
"""
import csv, os, re, subprocess, sys, tempfile

bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "bin")
ett = os.path.join(bin_dir, "ett")


def run(args):
    return subprocess.run([ett] + args, capture_output=True, text=True)


def boot(tmp, name, append, disk_size=None):
    disk = os.path.join(tmp, name + ".img")
    if disk_size:
        run(["mkdisk", disk, "--size", disk_size])
    scenario = os.path.join(tmp, "late.scn")
    with open(scenario, "w") as f:  # one write after the capture has ended by itself: no host stop
        f.write("0 1 1\n3000000 1 2\n")
    serial = os.path.join(tmp, name + ".serial")
    r = run(["qemu", "run", "--disk", disk, "--scenario", scenario, "--serial-log", serial, "--timeout", "120",
             "--append", append])
    if r.returncode != 0:
        sys.exit(f"{name}: ett qemu run failed:\n{r.stdout}{r.stderr}")
    return disk, open(serial).read()


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


with tempfile.TemporaryDirectory() as tmp:
    disk, serial = boot(tmp, "calibrate", "mode=calibrate", "16M")
    hz = int(re.search(r"ETT: tsc (\d+) Hz", serial).group(1))
    floor = float(re.search(r"floor \(bare poll loop\) ([\d.]+) ticks per poll", serial).group(1))
    out = os.path.join(tmp, "steps.csv")
    run(["extract", disk, "-o", out])
    with open(out) as f:
        tsc = [int(row["tsc"]) for row in csv.DictReader(f)]
    steps = sorted(b - a for a, b in zip(tsc, tsc[1:]))
    mean = (tsc[-1] - tsc[0]) / len(steps)

    def idle(append):
        _, s = boot(tmp, "idle", append)
        m = re.search(r"ETT: (\d+) ms, (\d+) polls \((\d+) ticks per poll\)", s)
        ms, polls = int(m.group(1)), int(m.group(2))
        return polls / (ms / 1000), (ms / 1000) * hz / polls

    capture_rate, capture_ticks = idle("limit=1")
    filtered_rate, filtered_ticks = idle("limit=1 filter=XXXX1111")

    print(f"TSC {hz / 1e6:.1f} MHz (QEMU TCG); ticks are TSC ticks")
    print(f"floor: bare poll loop (read, compare, branch)   {floor:8.1f} ticks/poll  {hz / floor / 1e6:7.2f} M polls/s")
    print(f"capture loop, idle, 1 s                        {capture_ticks:8.1f} ticks/poll  {capture_rate / 1e6:7.2f} M polls/s"
          f"  = {capture_ticks / floor:.2f}x the floor")
    print(f"capture loop with filter=, idle, 1 s           {filtered_ticks:8.1f} ticks/poll  {filtered_rate / 1e6:7.2f} M polls/s"
          f"  = {filtered_ticks / floor:.2f}x the floor")
    print(f"calibrate loop ({len(steps)} steps, each stores a record): mean {mean:.1f}, "
          f"p50 {percentile(steps, 0.5)}, p99.7 {percentile(steps, 0.997)}, max {steps[-1]} ticks "
          f"({steps[-1] / hz * 1e9:.0f} ns); {hz / mean / 1e6:.2f} M steps/s")
