#!/usr/bin/env python3
"""depth_bench.py BUILD_DIR: every host command at capture depth (part of `make bench`; it may take long).

For each size in DEPTH_SIZES (events, comma separated; default 10000000,100000000,1000000000) it makes a
synthetic capture (`ett synth --seed 1`) and runs `ett extract`, `ett load` (SQLite and PostgreSQL), every
analysis, `ett compare` and every export through the ett binary, each once, and prints its wall time per event
and its peak memory (the child's maximum resident set size from wait4, as /usr/bin/time -f %M reports it),
the database size per event after the load, and the sqlite3 shell's plain full scan of the same SQLite file
as the baseline at each size. The last table puts the sizes side by side: "growth" is each command's time per
event at the largest size over its time per event at the smallest (1.00: linear); a growth above 1.2 or a peak
above 1 GB is flagged, and so is a command that refused to start (it says what it would need; the row says
"refused" at that size and the run goes on).

Environment:
  DEPTH_SIZES    event counts, e.g. 20000,40000 for a quick run
  DEPTH_ENGINES  sqlite,postgresql (default both; postgresql is skipped with a note when initdb is missing)
  DEPTH_DIR      the directory the scratch directory is made in (default: $TMPDIR or /tmp); the 1,000 M size
                 needs about 16 GB of images and 2x that of SQLite files there
  ETT_PG_BIN     PostgreSQL's bin directory (default /usr/lib/postgresql/15/bin)

The align, compare databases hold the same events split into two traces of N/2 (the second stamped by a clock
50 ppm fast), so that every command reads N events. `ett analyze pps` is left out: a synthetic capture has no
pulse-per-second line."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

GROWTH_LIMIT = 1.2
PEAK_LIMIT_MB = 1000.0
SIZES_PER_CODE = ",".join(f"{code}={16 * code}" for code in range(1, 16))

# (name, database: "main" (one trace of N events) or "align" (two of N/2), arguments; {out}: an output file)
CASES = [
    ("analyze durations", "main", ["analyze", "durations", "--from", "1", "--to", "2"]),
    ("analyze durations --fit", "main",
     ["analyze", "durations", "--from", "1", "--to", "2", "--size-of-code", SIZES_PER_CODE, "--fit", "linear"]),
    ("analyze intervals", "main", ["analyze", "intervals", "--tau-ns", "1000"]),
    ("analyze histogram code", "main", ["analyze", "histogram", "--by", "code"]),
    ("analyze histogram probe", "main", ["analyze", "histogram", "--by", "probe", "--match", "XXXX1XXX"]),
    ("analyze histogram time", "main", ["analyze", "histogram", "--by", "time:1ms", "--max-buckets", "100000000"]),
    ("analyze align", "align", ["analyze", "align", "--traces", "1,2", "--sync", "1"]),
    ("analyze align csv", "align",
     ["analyze", "align", "--traces", "1,2", "--sync", "1", "--format", "csv", "-o", "{out}"]),
    # The fewest resamples compare takes (past 4,000 M drawn values it draws order statistics: the same cost at any
    # depth).
    ("compare", "align",
     ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2", "--resamples", "100"]),
    ("export vcd", "main", ["export", "--format", "vcd", "-o", "{out}"]),
    ("export perfetto", "main", ["export", "--format", "perfetto", "--from", "1", "--to", "2", "-o", "{out}"]),
    ("export perfetto-proto", "main",
     ["export", "--format", "perfetto-proto", "--from", "1", "--to", "2", "-o", "{out}"]),
    ("export csv", "main", ["export", "--format", "csv", "-o", "{out}"]),
    # Last: the main trace is relabelled as a calibration capture first, and the result is stored.
    ("analyze precision", "main", ["analyze", "precision"]),
]


class Failed(Exception):
    def __init__(self, message, said=""):
        super().__init__(message)
        self.said = said  # the last line the command wrote to standard error


def run(argv, log):
    """Runs argv with standard output to /dev/null and standard error to the log; (wall s, peak MB)."""
    with open(os.devnull, "wb") as null, open(log, "ab") as err:
        err.write(("$ " + " ".join(argv) + "\n").encode())
        err.flush()
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=null, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        with open(log, "rb") as err:
            err.seek(max(0, os.path.getsize(log) - 2000))
            tail = err.read().decode(errors="replace")
        said = tail.strip().splitlines()[-1] if tail.strip() else ""
        raise Failed(f"exit {child.returncode}: {' '.join(argv)}; its standard error ends:\n{tail}", said)
    return wall, usage.ru_maxrss * 1024 / 1e6


class Postgres:
    """A throwaway server (fsync off, unix socket only), as the database tests' ThrowawayPostgres."""

    def __init__(self, log):
        self.bin = os.environ.get("ETT_PG_BIN") or "/usr/lib/postgresql/15/bin"
        if not os.access(os.path.join(self.bin, "initdb"), os.X_OK):
            raise Failed(f"{self.bin}/initdb not found: install Debian's postgresql-15 or set ETT_PG_BIN")
        self.dir = tempfile.mkdtemp(prefix="ett-pg-", dir="/tmp")  # a socket path must fit in 107 bytes
        self.log = log
        self.prefix = []
        if os.geteuid() == 0:  # initdb refuses root: the server runs as nobody
            import pwd
            nobody = pwd.getpwnam("nobody")
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
            self.prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups", "--"]
        data = os.path.join(self.dir, "data")
        self._run([f"{self.bin}/initdb", "-D", data, "-A", "trust", "-U", "ett", "-E", "UTF8", "--locale=C",
                   "--no-sync", "--no-instructions"])
        self._run([f"{self.bin}/pg_ctl", "-D", data, "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "60",
                   "-o", f"-k {self.dir} -c listen_addresses='' -F -c max_wal_size=8GB -c checkpoint_timeout=1h "
                   "-c shared_buffers=256MB", "start"])
        self.running = True

    def _run(self, argv):
        subprocess.run(self.prefix + argv, cwd=self.dir, check=True, stdin=subprocess.DEVNULL,
                       stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)

    def uri(self, database):
        return f"postgresql:///{database}?host={self.dir}&user=ett"

    def stop(self):
        if self.running:
            self.running = False
            self._run([f"{self.bin}/pg_ctl", "-D", os.path.join(self.dir, "data"), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(self.dir, ignore_errors=True)


def query_value(ett, db, sql):
    out = subprocess.run([ett, "sql", "--db", db, "--format", "csv", sql], check=True, capture_output=True,
                         text=True).stdout.split()
    return out[-1]


class Depth:
    def __init__(self, ett, engines, scratch):
        self.ett = ett
        self.engines = engines
        self.scratch = scratch
        self.log = os.path.join(scratch, "stderr.log")
        self.results = {}  # (engine, command) -> {size: (ns per event, peak MB)}
        self.db_bytes = {}  # engine -> {size: bytes per event}

    def record(self, engine, command, size, wall, peak):
        ns = wall / size * 1e9
        self.results.setdefault((engine, command), {})[size] = (ns, peak)
        print(f"  {engine:<10} {command:<26} {ns:10.1f} ns/event {wall:10.2f} s {peak:9.0f} MB", flush=True)

    def measure(self, engine, command, size, argv):
        wall, peak = run(argv, self.log)
        self.record(engine, command, size, wall, peak)

    def size(self, n, pg):
        work = os.path.join(self.scratch, str(n))
        os.makedirs(work)
        print(f"{n} events (in {work}; load average {os.getloadavg()[0]:.2f})", flush=True)
        image, half_a, half_b = (os.path.join(work, f) for f in ("trace.img", "half_a.img", "half_b.img"))
        self.measure("-", "synth", n, [self.ett, "synth", "--events", str(n), "-q", image])
        run([self.ett, "synth", "--events", str(n // 2), "-q", half_a], self.log)
        run([self.ett, "synth", "--events", str(n // 2), "--clock-ppm", "50", "-q", half_b], self.log)
        self.measure("-", "extract csv", n, [self.ett, "extract", image, "-o", os.devnull, "--force"])
        main_file, align_file = os.path.join(work, "ett.db"), os.path.join(work, "align.db")
        for engine in self.engines:
            if engine == "sqlite":
                dbs = {"main": "sqlite:" + main_file, "align": "sqlite:" + align_file}
            else:
                for name in (f"main{n}", f"align{n}"):
                    run([self.ett, "sql", "--write", "--db", pg.uri("postgres"), f"CREATE DATABASE {name}"], self.log)
                dbs = {"main": pg.uri(f"main{n}"), "align": pg.uri(f"align{n}")}
            self.measure(engine, "load", n, [self.ett, "load", "--db", dbs["main"], image])
            walls, peaks = [], []
            for half in (half_a, half_b):
                wall, peak = run([self.ett, "load", "--db", dbs["align"], half], self.log)
                walls.append(wall)
                peaks.append(peak)
            self.record(engine, "load 2 x N/2 (align)", n, sum(walls), max(peaks))
            if engine == "sqlite":
                size_bytes = os.path.getsize(main_file)
                scan = ["sqlite3", main_file, "select count(*), total(tsc), sum(code), sum(probe) from events"]
                # total(): a float sum, as sum(tsc) overflows 64 bits from about 100 M events
                run(scan, self.log)  # the page cache warm, as for every command after it
                self.measure("sqlite3", "plain scan (baseline)", n, scan)
            else:
                for db in dbs.values():  # as the e2e benchmark: no autovacuum during a command
                    run([self.ett, "sql", "--write", "--db", db, "VACUUM ANALYZE"], self.log)
                    run([self.ett, "sql", "--write", "--db", db, "CHECKPOINT"], self.log)
                size_bytes = int(query_value(self.ett, dbs["main"], "SELECT pg_database_size(current_database())"))
            self.db_bytes.setdefault(engine, {})[n] = size_bytes / n
            print(f"  {engine:<10} database size {size_bytes / 1e6:.0f} MB, {size_bytes / n:.1f} bytes/event",
                  flush=True)
            out = os.path.join(work, "command.out")
            for name, db, args in CASES:
                if name == "analyze precision":
                    run([self.ett, "sql", "--write", "--db", dbs["main"], "UPDATE traces SET mode = 'calibrate' WHERE trace_id = 1"],
                        self.log)
                argv = [self.ett] + [out if a == "{out}" else a for a in args] + ["--db", dbs[db]]
                if "{out}" in args:
                    argv.append("--force")
                try:
                    self.measure(engine, name, n, argv)
                except Failed as refused:  # a command that says before it starts that it cannot run this deep
                    self.results.setdefault((engine, name), {})[n] = None
                    print(f"  {engine:<10} {name:<26} refused: {refused.said}", flush=True)
                if os.path.exists(out):
                    os.remove(out)
            if engine == "sqlite":
                for f in (main_file, align_file):
                    os.remove(f)
            else:
                for name in (f"main{n}", f"align{n}"):
                    run([self.ett, "sql", "--write", "--db", pg.uri("postgres"), f"DROP DATABASE {name}"], self.log)
        shutil.rmtree(work)

    def table(self, sizes):
        print(f"\nTime per event (ns) and peak memory (MB) at each size; growth: ns/event at {sizes[-1]} over "
              f"ns/event at {sizes[0]}; ! marks a growth above {GROWTH_LIMIT} or a peak above 1 GB")
        header = f"{'engine':<10} {'command':<26}"
        for n in sizes:
            header += f" {f'ns/ev {n}':>16} {f'MB {n}':>14}"
        print(header + f" {'growth':>7} flag")
        for (engine, command), by_size in self.results.items():
            line = f"{engine:<10} {command:<26}"
            for n in sizes:
                line += f" {by_size[n][0]:16.1f} {by_size[n][1]:14.0f}" if by_size[n] else f" {'refused':>16} {'-':>14}"
            flags = []
            if any(v is None for v in by_size.values()):
                growth = "-"
                flags.append("refused")
            else:
                ratio = by_size[sizes[-1]][0] / by_size[sizes[0]][0]
                growth = f"{ratio:.2f}"
                if ratio > GROWTH_LIMIT and len(sizes) > 1:
                    flags.append("growth")
            if max((v[1] for v in by_size.values() if v), default=0) > PEAK_LIMIT_MB:
                flags.append("peak")
            print(line + f" {growth:>7} {'!' + ','.join(flags) if flags else '-'}")
        for engine, by_size in self.db_bytes.items():
            print(f"{engine:<10} {'database bytes/event':<26}" +
                  "".join(f" {by_size[n]:16.1f} {'':>14}" for n in sizes))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    ett = os.path.join(build, "bin", "ett")
    sizes = [int(s) for s in os.environ.get("DEPTH_SIZES", "10000000,100000000,1000000000").split(",") if s]
    if not sizes or min(sizes) < 1000:
        sys.exit("depth_bench: DEPTH_SIZES must list event counts of at least 1000")
    engines = [e for e in os.environ.get("DEPTH_ENGINES", "sqlite,postgresql").split(",") if e]
    if not set(engines) <= {"sqlite", "postgresql"} or not engines:
        sys.exit("depth_bench: DEPTH_ENGINES lists sqlite and/or postgresql")
    scratch = tempfile.mkdtemp(prefix="ett-depth-", dir=os.environ.get("DEPTH_DIR") or None)
    pg = None
    print(f"depth_bench: sizes {','.join(map(str, sizes))}, engines {','.join(engines)}, in {scratch}; "
          f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        if "postgresql" in engines:
            try:
                pg = Postgres(os.path.join(scratch, "postgres.log"))
            except (Failed, subprocess.CalledProcessError, OSError) as error:
                print(f"PostgreSQL skipped: {error}", flush=True)
                engines.remove("postgresql")
        bench = Depth(ett, engines, scratch)
        for n in sizes:
            bench.size(n, pg)
        bench.table(sizes)
    except Failed as error:
        sys.exit(f"depth_bench: {error}")
    finally:
        if pg:
            pg.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
