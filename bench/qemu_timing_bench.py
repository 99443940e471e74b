#!/usr/bin/env python3
"""qemu_timing_bench.py: how closely `ett qemu run` keeps a scenario's clock, on this machine, under load.

Prints numbers; it is not a timed test. For each scenario (the bundled qemu/scenarios/demo.scn and four made
here: 3000 mixed events 150-400 us apart, 300 simultaneous two-probe pairs, 2000 events on 8x1, 60 events
20 ms apart) one `ett qemu run` while HOGS busy loops compete for the CPUs, then the fidelity report: events
sent / captured / lost / unexpected / out of order, and the interval and schedule errors (p50 / p95 / max).
Then two machines sharing sync edges: `ett analyze align` against the truth the run reports. Last line: one
JSON object with every number.
Usage: bench/qemu_timing_bench.py [BIN_DIR] [--hogs N] [--clock guest|host] [--repeat R]
       (default build/bin, 2 hogs, guest, 1; needs ett, ett-kernel.elf, qemu-system-i386)
"""
import argparse, json, os, random, subprocess, sys, tempfile

parser = argparse.ArgumentParser()
parser.add_argument("bin_dir", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
parser.add_argument("--hogs", type=int, default=2)
parser.add_argument("--clock", default="guest", choices=["guest", "host"])
parser.add_argument("--repeat", type=int, default=1)
args = parser.parse_args()
ett = os.path.join(args.bin_dir, "ett")
repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def scenarios(tmp):
    rng = random.Random(7)
    made = {}

    def write(name, lines):
        path = os.path.join(tmp, name + ".scn")
        with open(path, "w") as f:
            f.writelines(lines)
        made[name] = path

    t, last, lines = 0.0, {1: 0, 2: 0}, []
    for _ in range(3000):
        p = rng.choice([1, 2])
        c = rng.choice([x for x in range(16) if x != last[p]])
        last[p] = c
        lines.append(f"{t:.3f} {p} {c}\n")
        t += rng.uniform(150, 400)
    write("mixed-3000", lines)
    lines, a, b = [], 0, 0
    for i in range(300):
        a, b = a % 15 + 1, (b + 3) % 15 + 1
        lines += [f"{i * 300} 1 {a}\n", f"{i * 300} 2 {b}\n"]
    write("pairs-300", lines)
    lines, level = [], [0] * 9
    for i in range(2000):
        p = rng.randint(1, 8)
        level[p] ^= 1
        lines.append(f"{i * 200} {p} {level[p]}\n")
    write("8x1-2000", lines)
    write("slow-60", [f"{i * 20000} 1 {i % 15 + 1}\n" for i in range(60)])
    made["demo"] = os.path.join(repo, "qemu", "scenarios", "demo.scn")
    return made


def qemu_run(tmp, name, scenario, extra):
    disk = os.path.join(tmp, name + ".img")
    report = os.path.join(tmp, name + ".json")
    for path in [disk, report]:
        if os.path.exists(path):
            os.remove(path)
    r = subprocess.run([ett, "qemu", "run", "--disk", disk, "--scenario", scenario, "--fidelity-json", report,
                        "--clock", args.clock, "--timeout", "600"] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{name}: ett qemu run failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    with open(report) as f:
        return json.load(f), r.stdout


hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.hogs)]
results = {}
try:
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in scenarios(tmp).items():
            for k in range(args.repeat):
                report, _ = qemu_run(tmp, name, path, ["--append", "layout=8x1"] if name.startswith("8x1") else [])
                m = report[0]
                row = {key: m[key] for key in ["sent", "captured", "lost", "unexpected", "out_of_order",
                                                "interval_error_p50_ns", "interval_error_p95_ns",
                                                "interval_error_max_ns", "schedule_error_p95_ns",
                                                "schedule_error_max_ns", "held_back"]}
                results.setdefault(name, []).append(row)
                print(f"{name:11s} sent {m['sent']:5d} captured {m['captured']:5d} lost {m['lost']} unexpected "
                      f"{m['unexpected']} out of order {m['out_of_order']}; interval error p50 "
                      f"{m['interval_error_p50_ns'] / 1e3:.1f} us, p95 {m['interval_error_p95_ns'] / 1e3:.1f} us, max "
                      f"{m['interval_error_max_ns'] / 1e3:.1f} us; schedule error max "
                      f"{m['schedule_error_max_ns'] / 1e3:.1f} us; held back {m['held_back']}", flush=True)
        # Two machines: 300 events on probe 1 into machine 1, sync edges every ms on probe 2 into both.
        sync_scn = os.path.join(tmp, "sync.scn")
        with open(sync_scn, "w") as f:
            f.writelines(f"{i * 3000 + 500} 1 {i % 15 + 1}\n" for i in range(300))
        align_rows = []
        for k in range(args.repeat):
            report, _ = qemu_run(tmp, "two", sync_scn, ["--machines", "2", "--sync-probe", "2", "--sync-period",
                                                       "1000", "--memory", "64"])
            db = "sqlite:" + os.path.join(tmp, f"align-{k}.db")
            for disk in ["two-1.img", "two-2.img"]:
                subprocess.run([ett, "load", os.path.join(tmp, disk), "--db", db], check=True, capture_output=True)
            out = subprocess.run([ett, "analyze", "align", "--db", db, "--traces", "1,2", "--sync", "2", "--format",
                                  "json"], check=True, capture_output=True, text=True).stdout
            fit = json.loads(out)["fits"][1]
            row = {"offset_error_ns": fit["offset_ns"] - report[1]["truth_offset_ns"],
                   "drift_error_ppm": fit["drift_ppm"] - report[1]["truth_drift_ppm"],
                   "max_abs_residual_ns": fit["max_abs_residual_ns"], "edges": fit["edges"]}
            align_rows.append(row)
            print(f"two machines: align offset {fit['offset_ns']:.1f} ns vs truth {report[1]['truth_offset_ns']:.1f} ns "
                  f"(error {row['offset_error_ns']:.1f} ns), drift {fit['drift_ppm']:.3f} ppm vs truth "
                  f"{report[1]['truth_drift_ppm']:.3f} ppm; max residual {fit['max_abs_residual_ns']:.0f} ns over "
                  f"{fit['edges']} edges", flush=True)
        results["align"] = align_rows
finally:
    for hog in hogs:
        hog.kill()
print(json.dumps({"clock": args.clock, "hogs": args.hogs, "results": results}))
