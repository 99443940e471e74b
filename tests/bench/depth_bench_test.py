#!/usr/bin/env python3
"""depth_bench_test.py BUILD_DIR: bench/depth_bench.py at 20,000 and 40,000 events (not timed) prints a complete
table: a row for every command of every engine it ran, a time per event and a peak for each size, a growth, and
the database size per event of each engine."""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "depth_bench.py")
SIZES = (20000, 40000)


def main():
    build = sys.argv[1]
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.dirname(SCRIPT))
    import depth_bench  # for its list of commands

    env = dict(os.environ, DEPTH_SIZES=",".join(map(str, SIZES)), PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run([sys.executable, SCRIPT, build], env=env, capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    assert result.returncode == 0, f"depth_bench.py exited {result.returncode}"
    lines = result.stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Time per event (ns)")]
    assert len(starts) == 1, "no final table"
    table = lines[starts[0] + 2:]
    engines = ["sqlite"] + ([] if any(l.startswith("PostgreSQL skipped") for l in lines) else ["postgresql"])
    number = r"\s+(\d+\.\d)\s+(\d+)"
    expected = [("-", "synth"), ("-", "extract csv"), ("sqlite3", "plain scan (baseline)")]
    for engine in engines:
        expected += [(engine, "load"), (engine, "load 2 x N/2 (align)")]
        expected += [(engine, name) for name, _, _ in depth_bench.CASES]
    for engine, command in expected:
        pattern = re.compile(rf"^{re.escape(engine)}\s+{re.escape(command)}{number * len(SIZES)}\s+(\d+\.\d\d) (-|!\S+)$")
        rows = [m for m in map(pattern.match, table) if m]
        assert len(rows) == 1, f"no complete row for {engine} {command}"
        values = [float(v) for v in rows[0].groups()[:2 * len(SIZES)]]
        assert all(v > 0 for v in values), f"{engine} {command}: a zero time or peak: {values}"
    for engine in engines:
        pattern = re.compile(rf"^{engine}\s+database bytes/event\s+(\d+\.\d)\s+(\d+\.\d)\s*$")
        rows = [m for m in map(pattern.match, table) if m]
        assert len(rows) == 1 and all(float(v) > 8 for v in rows[0].groups()), f"no database size row for {engine}"
    assert len(table) == len(expected) + len(engines), "rows the test does not know"
    print("depth_bench_test: complete table")


if __name__ == "__main__":
    main()
