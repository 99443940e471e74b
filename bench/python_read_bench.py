#!/usr/bin/env python3
"""python_read_bench.py BUILD_DIR [EVENTS]: a session of EVENTS synthetic events (default 10 M) read into numpy
by the Python package (ett.open(IMAGE).events(), the open's check of every chunk included) against `ett extract IMAGE -o /dev/null`, in one run: wall
times and their ratio, and the reading interpreter's peak memory beyond the array. Part of `make bench`.

The read runs in an interpreter of its own (the one the package was built for, from the build's CMake cache),
so that its peak resident memory (VmHWM) less its resident memory before the read is what the read took."""

import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time
import ett

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0

before = status("VmRSS")
start = time.perf_counter()
capture = ett.open(sys.argv[1])  # checks every chunk, as extract does before it writes
events = capture.events()
seconds = time.perf_counter() - start
print(events.size, events.nbytes, seconds, status("VmHWM") - before)
"""


def cached_python(build):
    with open(os.path.join(build, "CMakeCache.txt")) as cache:
        for line in cache:
            if line.startswith("ETT_PYTHON:"):
                return line.split("=", 1)[1].strip()
    sys.exit("python_read_bench: the build has no Python package (pybind11-dev missing?)")


def best_of(runs, work):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    build = os.path.abspath(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    ett_bin = os.path.join(build, "bin", "ett")
    python = cached_python(build)
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"), PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as scratch:
        image = os.path.join(scratch, "bench.img")
        subprocess.run([ett_bin, "synth", image, "--events", str(events), "-q"], check=True)
        extract_command = [ett_bin, "extract", image, "-o", "/dev/null", "--force"]
        extract = best_of(3, lambda: subprocess.run(extract_command, check=True))
        reads = []
        for _ in range(3):
            out = subprocess.run([python, "-c", CHILD, image], check=True, env=env, capture_output=True,
                                 text=True).stdout.split()
            reads.append((float(out[2]), int(out[0]), int(out[1]), int(out[3])))
        seconds, count, nbytes, grew = min(reads)
    extra = grew - nbytes
    print(f"python read: {count} events, best of 3 runs each")
    print(f"  ett extract -o /dev/null   {extract:8.3f} s")
    print(f"  ett.open(IMAGE).events()   {seconds:8.3f} s   {seconds / extract:.2f}x extract "
          f"(goal: within 2x)")
    print(f"  array                      {nbytes / 2**20:8.1f} MiB")
    print(f"  memory beyond the array    {extra / 2**20:8.1f} MiB   {100 * extra / nbytes:.1f} % "
          f"(goal: under 10 %)")


if __name__ == "__main__":
    main()
