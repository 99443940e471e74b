#!/usr/bin/env python3
"""run_hostile.py: every `ett` verb against a corpus of bad inputs, as a hostile new user would try them.

Each case is one command line (placeholders such as {img} and {db} name fixture files) and the exit status
the documentation gives for it. For every case the runner checks:
  - the exit status is the documented one (docs/exit codes: 1 usage/I-O, 8 any error of compare, 10-15 the
    trace disk's problems, ...);
  - a failure prints exactly one error line on standard error, starting "ett:" (warnings may precede it),
    and nothing says "internal error";
  - every input the command line names is byte-identical afterwards (hashed before and after);
  - no file is left behind in the case's scratch directory or beside the fixtures (no partial output, no
    temporary ".NAME.ett-XXXXXX"), except the outputs a successful case is expected to make;
  - the process stays under a memory limit (RLIMIT_AS) and a time limit.

Usage: run_hostile.py ETT [--shard K/N] [--sanitized] [--list] [--filter REGEX]
Prints one line per failed case and a closing "N passed, N failed".
"""

import argparse
import hashlib
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

MEMORY_LIMIT = 2 << 30  # bytes of address space per case (not under AddressSanitizer)
CASE_SECONDS = 60

# Values no numeric option takes.
BAD_NUMBERS = ["nan", "inf", "-inf", "abc", "1e400", "0x"]


class Case:
    def __init__(self, name, args, code, stderr=None, stdin=None, outputs=(), stdout=None, no_stdout=None,
                 cwd=None, sanitized_code=None):
        self.name = name
        self.sanitized_code = sanitized_code  # the sanitized build has no kernel: what it exits with instead
        self.cwd = cwd  # "fixtures": run beside the fixtures (relative spellings of their names)
        self.args = args  # list of words with {placeholders}
        self.code = code
        self.stderr = stderr  # regex the error line must match
        self.stdin = stdin  # a path (placeholders allowed) given as standard input
        self.outputs = outputs  # files (in the scratch directory) a successful run leaves
        self.stdout = stdout  # regex standard output must match
        self.no_stdout = no_stdout  # regex standard output must not match


def run(ett, args, cwd, env=None, check=True):
    result = subprocess.run([ett] + args, cwd=cwd, capture_output=True, env=env)
    if check and result.returncode != 0:
        raise RuntimeError(f"fixture: ett {' '.join(args)} exited {result.returncode}: {result.stderr.decode()}")
    return result


def flip(path, offset, mask=0xFF):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ mask]))


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def set_label_version(path, version):
    """The label's format_version (offset 8) set and its CRC32C (the last 4 bytes of sector 0) made again."""
    with open(path, "r+b") as f:
        label = bytearray(f.read(512))
        label[8:12] = version.to_bytes(4, "little")
        label[508:512] = crc32c(bytes(label[:508])).to_bytes(4, "little")
        f.seek(0)
        f.write(label)


def find_all(path, magic, limit=8):
    with open(path, "rb") as f:
        data = f.read(8 << 20)
    found, at = [], data.find(magic)
    while at >= 0 and len(found) < limit:
        found.append(at)
        at = data.find(magic, at + 1)
    return found


def make_fixtures(ett, root):
    """Trace disks whole and damaged in every way the format can be, databases, odd files."""
    f = {}
    fx = os.path.join(root, "fixtures")
    os.makedirs(fx)

    def path(name):
        f[name] = os.path.join(fx, name)
        return f[name]

    run(ett, ["mkdisk", path("good.img"), "--size", "4M", "-q"], fx)
    run(ett, ["synth", f["good.img"], "--events", "20000", "--seed", "1", "-q"], fx)
    run(ett, ["synth", f["good.img"], "--events", "20000", "--seed", "2", "-q"], fx)
    run(ett, ["mkdisk", path("empty.img"), "--size", "1M", "-q"], fx)
    run(ett, ["load", f["good.img"], "--all", "--db", "sqlite:" + path("good.db"), "-q"], fx)
    run(ett, ["label", "--db", "sqlite:" + f["good.db"], "--probe", "1", "evil\x1b]0;pwned\x07\x1b[2Jname"], fx)
    chunks = find_all(f["good.img"], b"ETTC")
    sessions = find_all(f["good.img"], b"ETTSESS") or find_all(f["good.img"], b"ETTS")
    label_size = 512

    def copy(name):
        shutil.copyfile(f["good.img"], path(name))
        return f[name]

    flip(copy("label_magic.img"), 0)  # not a trace disk
    flip(copy("label_crc.img"), 100)  # inside the label: its CRC fails
    set_label_version(copy("version.img"), 99)  # a format from the future, its label whole
    if sessions:
        flip(copy("header_crc.img"), sessions[0] + 64)
        flip(copy("header2_crc.img"), sessions[1] + 64 if len(sessions) > 1 else sessions[0] + 64)
    flip(copy("chunk.img"), chunks[1] + 600)  # one byte of one chunk of session 1
    last_chunk = chunks[-1] if chunks else 8192
    shutil.copyfile(f["good.img"], path("cut_chunk.img"))
    os.truncate(f["cut_chunk.img"], last_chunk + 4096)  # inside the newest session's last chunk
    shutil.copyfile(f["good.img"], path("cut_label.img"))
    os.truncate(f["cut_label.img"], label_size // 2)
    shutil.copyfile(f["good.img"], path("cut_header.img"))
    os.truncate(f["cut_header.img"], (sessions[0] if sessions else 4096) + 100)
    open(path("zero.img"), "wb").close()
    with open(path("sparse.img"), "wb") as out:
        out.truncate(1 << 40)  # 1 TB of nothing
    with open(path("text.txt"), "w") as out:
        out.write("hello\nthis is not a trace disk\n")
    with open(path("binary.bin"), "wb") as out:
        out.write(bytes(range(256)) * 64)
    with open(path("long_line.txt"), "w") as out:
        out.write("1 1 1 " + "9" * 200000 + "\n")
    with open(path("scenario.txt"), "w") as out:
        out.write("0 1 1\n100 1 0\n")
    os.makedirs(path("dir"))
    with open(path("sent.csv"), "w") as out:
        out.write("index,probe,code\n1,2\n")
    os.symlink(f["good.img"], path("link.img"))
    os.link(f["good.img"], path("hard.img"))
    os.symlink(f["good.db"], path("link.db"))
    # Survey sessions (mode=survey): a whole one and its block damaged in each way `ett survey` names.
    run(ett, ["synth", path("survey.img"), "--survey", "fit", "-q"], fx)
    block = find_all(f["survey.img"], b"ETTSURV1")[0]

    def survey_block(name, change, fix_crc=True):
        shutil.copyfile(f["survey.img"], path(name))
        with open(f[name], "r+b") as out:
            out.seek(block)
            data = bytearray(out.read(4096))
            change(data)
            if fix_crc:
                data[4092:4096] = crc32c(bytes(data[:4092])).to_bytes(4, "little")
            out.seek(block)
            out.write(data)

    survey_block("survey_crc.img", lambda d: d.__setitem__(100, d[100] ^ 0xFF), fix_crc=False)
    survey_block("survey_version.img", lambda d: d.__setitem__(slice(8, 12), (7).to_bytes(4, "little")))
    survey_block("survey_count.img", lambda d: d.__setitem__(slice(16, 20), (4000000000).to_bytes(4, "little")))
    survey_block("survey_magic.img", lambda d: d.__setitem__(7, ord("X")))
    shutil.copyfile(f["survey.img"], path("survey_cut.img"))
    os.truncate(f["survey_cut.img"], block + 1000)
    f["missing"] = os.path.join(fx, "no-such-file")
    f["fixtures"] = fx
    return f


def cases():
    """The corpus: a list of Case."""
    out = []

    def add(name, args, code, **kw):
        out.append(Case(name, args, code, **kw))

    db = ["--db", "sqlite:{good.db}"]
    # -- Trace disks, whole and damaged, through every verb that reads one.
    images = [
        ("good", "{good.img}", {"ls": 0, "extract": 0, "load": 0}),
        ("empty disk", "{empty.img}", {"ls": 0, "extract": 14, "load": 14}),
        ("not a trace disk", "{label_magic.img}", {"ls": 10, "extract": 10, "load": 10}),
        ("label CRC", "{label_crc.img}", {"ls": 12, "extract": 12, "load": 12}),
        ("unknown format version", "{version.img}", {"ls": 11, "extract": 11, "load": 11}),
        ("session header CRC", "{header_crc.img}", {"ls": 12, "extract": 12, "load": 12}),
        ("newest header CRC", "{header2_crc.img}", {"ls": 12, "extract": 12, "load": 12}),
        ("chunk CRC (older session)", "{chunk.img}", {"ls": 12, "extract": 0, "load": 0}),
        ("cut in a chunk", "{cut_chunk.img}", {"ls": 13, "extract": 13, "load": 13}),
        ("cut in the label", "{cut_label.img}", {"ls": 13, "extract": 13, "load": 13}),
        ("cut in a header", "{cut_header.img}", {"ls": 13, "extract": 13, "load": 13}),
        ("zero bytes", "{zero.img}", {"ls": 10, "extract": 10, "load": 10}),
        ("1 TB sparse", "{sparse.img}", {"ls": 10, "extract": 10, "load": 10}),
        ("text file", "{text.txt}", {"ls": 10, "extract": 10, "load": 10}),
        ("binary file", "{binary.bin}", {"ls": 10, "extract": 10, "load": 10}),
        ("database given as image", "{good.db}", {"ls": 10, "extract": 10, "load": 10}),
        ("directory", "{dir}", {"ls": 1, "extract": 1, "load": 1}),
        ("missing", "{missing}", {"ls": 1, "extract": 1, "load": 1}),
        ("/dev/null", "/dev/null", {"ls": 10, "extract": 10, "load": 10}),
        ("/dev/zero", "/dev/zero", {"ls": 10, "extract": 10, "load": 10}),
    ]
    for label, img, codes in images:
        add(f"ls {label}", ["ls", img], codes["ls"])
        add(f"ls --json {label}", ["ls", img, "--json"], codes["ls"])
        add(f"extract {label}", ["extract", img, "-o", "out.csv"], codes["extract"],
            outputs=("out.csv",) if codes["extract"] == 0 else ())
        add(f"load {label}", ["load", img, "--db", "sqlite:new.db"], codes["load"],
            outputs=("new.db",) if codes["load"] == 0 else ())
    # The older session of chunk.img is damaged: asked for by number it is refused, salvaged it is kept.
    add("extract damaged session", ["extract", "{chunk.img}", "--session", "1", "-o", "out.csv"], 12)
    add("extract --salvage damaged session", ["extract", "{chunk.img}", "--session", "1", "--salvage", "-o",
                                               "out.csv"], 0, outputs=("out.csv",))
    add("load damaged session", ["load", "{chunk.img}", "--session", "1", "--db", "sqlite:new.db"], 12)
    add("load --salvage damaged session", ["load", "{chunk.img}", "--session", "1", "--salvage", "--db",
                                            "sqlite:new.db"], 0, outputs=("new.db",))
    add("load --all with a damaged session", ["load", "{chunk.img}", "--all", "--db", "sqlite:new.db"], 1,
        outputs=("new.db",))
    add("extract no such session", ["extract", "{good.img}", "--session", "9", "-o", "out.csv"], 15)
    add("extract session 0", ["extract", "{good.img}", "--session", "0", "-o", "out.csv"], 15)
    add("load no such session", ["load", "{good.img}", "--session", "9", "--db", "sqlite:new.db"], 15)
    # -- `ett survey`: a survey session whole, none on the disk, its block damaged.
    add("survey", ["survey", "{survey.img}"], 0, stdout="overall:   fit")
    add("survey --format json", ["survey", "{survey.img}", "--format", "json"], 0, stdout='"fit": true')
    add("ls survey", ["ls", "{survey.img}"], 0, stdout="survey")
    add("survey no survey session", ["survey", "{good.img}"], 14)
    add("survey capture session", ["survey", "{good.img}", "--session", "1"], 15)
    add("survey no such session", ["survey", "{survey.img}", "--session", "9"], 15)
    add("survey empty disk", ["survey", "{empty.img}"], 14)
    add("survey not a trace disk", ["survey", "{label_magic.img}"], 10)
    add("survey newest header CRC", ["survey", "{header2_crc.img}"], 12)
    add("survey block CRC", ["survey", "{survey_crc.img}"], 12)
    add("ls survey block CRC", ["ls", "{survey_crc.img}"], 12)
    add("survey block version", ["survey", "{survey_version.img}"], 11)
    add("survey block counts", ["survey", "{survey_count.img}"], 12)
    add("survey block magic", ["survey", "{survey_magic.img}"], 12)
    add("survey block cut", ["survey", "{survey_cut.img}"], 13)
    add("ls survey block cut", ["ls", "{survey_cut.img}"], 13)
    add("survey bad format", ["survey", "{survey.img}", "--format", "csv"], 1)
    add("synth --survey bad kind", ["synth", "new.img", "--survey", "broken"], 1)
    add("synth --survey and --events", ["synth", "new.img", "--survey", "fit", "--events", "5"], 1)
    add("synth without --events", ["synth", "new.img"], 1)
    add("extract bad format", ["extract", "{good.img}", "--format", "xml"], 1)
    add("ls bad format", ["ls", "{good.img}", "--format", "yaml"], 1)
    add("extract to /dev/full", ["extract", "{good.img}", "-o", "/dev/full", "--force"], 1)
    add("ls to /dev/full", ["ls", "{good.img}", "-o", "/dev/full", "--force"], 1)
    add("extract into a directory", ["extract", "{good.img}", "-o", "{dir}", "--force"], 1)
    add("extract into a missing directory", ["extract", "{good.img}", "-o", "nodir/out.csv"], 1)

    # -- An output pointed back at an input, however spelled, with and without --force.
    spellings = [("same path", "{good.img}"), ("symlink", "{link.img}"), ("hard link", "{hard.img}"),
                 ("dot-slash", "./good.img"), ("dot-dot", "../fixtures/good.img")]
    for spelled, target in spellings:
        for force in ([], ["--force"]):
            tag = f"{spelled}{' --force' if force else ''}"
            add(f"extract -o input ({tag})", ["extract", "{good.img}", "-o", target] + force, 1,
                stderr="input|already exists", cwd="fixtures")
            add(f"ls -o input ({tag})", ["ls", "{good.img}", "-o", target] + force, 1,
                stderr="input|already exists", cwd="fixtures")
    db_spellings = [("same path", "{good.db}"), ("symlink", "{link.db}"), ("dot-slash", "./good.db"),
                    ("its -wal", "{good.db}-wal"), ("its -journal", "{good.db}-journal")]
    db_verbs = [
        ("sql", ["sql", "select 1"] + db),
        ("query", ["query", "traces"] + db),
        ("analyze precision", ["analyze", "precision", "--no-store"] + db),
        ("analyze intervals", ["analyze", "intervals"] + db),
        ("analyze histogram", ["analyze", "histogram"] + db),
        ("export csv", ["export", "--format", "csv"] + db),
        ("export vcd", ["export", "--format", "vcd"] + db),
        ("report", ["report"] + db),
        ("compare", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"] + db),
    ]
    for verb, args in db_verbs:
        for spelled, target in db_spellings:
            for force in ([], ["--force"]):
                code = 8 if verb == "compare" else 1
                add(f"{verb} -o database ({spelled}{' --force' if force else ''})", args + ["-o", target] + force,
                    code, stderr="input|already exists", cwd="fixtures")
    add("load --db onto the image", ["load", "{good.img}", "--db", "sqlite:{good.img}"], 1, stderr="trace disk")
    add("qemu run --serial-log onto the disk", ["qemu", "run", "--disk", "{good.img}", "--scenario",
                                                "{scenario.txt}", "--serial-log", "{good.img}"], 1)
    add("qemu run --sent-log onto the scenario", ["qemu", "run", "--disk", "new.img", "--scenario",
                                                  "{scenario.txt}", "--sent-log", "{scenario.txt}"], 1)
    add("fidelity -o onto the image", ["fidelity", "{good.img}", "--sent-log", "{sent.csv}", "-o",
                                       "{good.img}", "--force"], 1)

    # -- Databases that are not, or not there.
    for verb, args in db_verbs + [("label", ["label", "--probe", "1", "x"])]:
        args = [a for a in args if a not in db]
        base = [w for w in args if not w.startswith("sqlite:")]
        code = 8 if verb == "compare" else 1
        for what, url in [("missing", "sqlite:{missing}"), ("directory", "sqlite:{dir}"),
                          ("an image", "sqlite:{good.img}"), ("/dev/null", "sqlite:/dev/null"),
                          ("text", "sqlite:{text.txt}"), ("bad scheme", "mysql://x"), ("empty", "sqlite:")]:
            add(f"{verb} --db {what}", base + ["--db", url], code)

    # -- Numbers no option takes.
    numeric = [
        ("extract --cpu-hz", ["extract", "{good.img}", "-o", "out.csv", "--cpu-hz"], 1),
        ("extract --session", ["extract", "{good.img}", "-o", "out.csv", "--session"], 1),
        ("synth --events", ["synth", "new.img", "--events"], 1),
        ("synth --seed", ["synth", "new.img", "--events", "10", "--seed"], 1),
        ("synth --clock-ppm", ["synth", "new.img", "--events", "10", "--clock-ppm"], 1),
        ("mkdisk --size", ["mkdisk", "new.img", "--size"], 1),
        ("analyze precision --bins", ["analyze", "precision", "--no-store"] + db + ["--bins"], 1),
        ("analyze durations --pi-ns", ["analyze", "durations", "--from", "1", "--to", "2"] + db + ["--pi-ns"], 1),
        ("analyze intervals --tau-ns", ["analyze", "intervals"] + db + ["--tau-ns"], 1),
        ("analyze histogram --max-buckets", ["analyze", "histogram", "--by", "time:1ms"] + db + ["--max-buckets"],
         1),
        ("analyze --trace", ["analyze", "intervals"] + db + ["--trace"], 1),
        ("query --trace", ["query", "codes"] + db + ["--trace"], 1),
        ("label --probe", ["label"] + db + ["x", "--probe"], 1),
        ("compare --resamples", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"] + db
         + ["--resamples"], 8),
        ("compare --confidence", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"]
         + db + ["--confidence"], 8),
        ("compare --min-actions", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"]
         + db + ["--min-actions"], 8),
        ("compare --pi-ns", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"] + db
         + ["--pi-ns"], 8),
        ("compare --max-regression", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to",
                                      "2"] + db + ["--max-regression"], 8),
        ("compare --seed", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"] + db
         + ["--seed"], 8),
        ("qemu run --timeout", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}", "--qemu",
                                "/nonexistent", "--timeout"], 1),
        ("qemu run --boot-timeout", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}",
                                     "--qemu", "/nonexistent", "--boot-timeout"], 1),
        ("qemu run --memory", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}", "--qemu",
                               "/nonexistent", "--memory"], 1),
        ("qemu run --machines", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}", "--qemu",
                                 "/nonexistent", "--machines"], 1),
        ("qemu run --initial-lines", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}",
                                      "--qemu", "/nonexistent", "--initial-lines"], 1),
        ("qemu run --tolerance", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}", "--qemu",
                                  "/nonexistent", "--tolerance"], 1),
        ("fidelity --tolerance", ["fidelity", "{good.img}", "--sent-log", "{sent.csv}", "--tolerance"], 1),
    ]
    for name, args, code in numeric:
        for value in BAD_NUMBERS:
            add(f"{name} {value!r}", args + [value], code)
    for name, args, code in numeric:
        if "clock-ppm" in name or "seed" in name or name == "query --trace":
            continue
        add(f"{name} -1", args + ["-1"], code)
    add("synth --events 4e9 (memory)", ["synth", "new.img", "--events", "4000000000"], 1, stderr="memory")
    add("histogram 1 ns buckets (memory)", ["analyze", "histogram", "--by", "time:1ns", "--max-buckets",
                                             "4294967296"] + db, 1, stderr="memory")
    add("compare --resamples 1e9", ["compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to",
                                    "2", "--resamples", "1000000000"] + db, 8, stderr="at most")

    # -- Text inputs that are not text, or not bounded.
    for what, source in [("/dev/zero", "/dev/zero"), ("binary", "{binary.bin}"), ("directory", "{dir}"),
                         ("missing", "{missing}"), ("long line", "{long_line.txt}")]:
        add(f"qemu run --scenario {what}", ["qemu", "run", "--disk", "new.img", "--scenario", source, "--qemu",
                                            "/nonexistent"], 1)
        add(f"fidelity --sent-log {what}", ["fidelity", "{good.img}", "--sent-log", source], 1)
    add("sql - from /dev/zero", ["sql", "-"] + db, 1, stdin="/dev/zero", stderr="NUL")
    add("sql - from a binary file", ["sql", "-"] + db, 1, stdin="{binary.bin}")
    add("sql - from nothing", ["sql", "-"] + db, 1, stdin="/dev/null", stderr="no SQL")

    # -- The database is only read unless asked.
    add("sql UPDATE without --write", ["sql", "UPDATE events SET code = 0"] + db, 1, stderr="--write")
    add("sql DELETE without --write", ["sql", "DELETE FROM events"] + db, 1, stderr="--write")
    add("sql DROP without --write", ["sql", "DROP TABLE events"] + db, 1, stderr="--write")
    add("sql bad SQL", ["sql", "SELEC 1"] + db, 1)
    add("sql injection through a query parameter", ["query", "event", "1; DROP TABLE events"] + db, 1)

    # -- The regression gate never misreads a usage error.
    gate = ["compare", "--from", "1", "--to", "2"] + db
    add("compare mistyped flag", gate + ["--baselin", "1", "--candidate", "2"], 8)
    add("compare unknown flag", gate + ["--baseline", "1", "--candidate", "2", "--fast"], 8)
    add("compare trace twice", gate + ["--baseline", "1,1", "--candidate", "2"], 8, stderr="twice")
    add("compare empty item", gate + ["--baseline", "1,,1", "--candidate", "2"], 8)
    add("compare missing trace", gate + ["--baseline", "1", "--candidate", "99"], 8)
    add("compare bad --stat", gate + ["--baseline", "1", "--candidate", "2", "--stat", "mode"], 8)
    add("compare bad --format", gate + ["--baseline", "1", "--candidate", "2", "--format", "xml"], 8)
    add("compare no value", gate + ["--baseline"], 8)

    # -- Verbs, options and values that do not exist.
    add("unknown verb", ["lss"], 1, stderr="did you mean")
    add("no verb", [], 1)
    add("unknown option", ["ls", "{good.img}", "--colour"], 1)
    add("export unknown format", ["export", "--format", "pdf"] + db, 1)
    add("export --timescale 3ns", ["export", "--format", "vcd", "--timescale", "3ns"] + db, 1)
    add("export --from without --to", ["export", "--format", "perfetto", "--from", "1"] + db, 1)
    add("analyze unknown", ["analyze", "everything"] + db, 1)
    add("analyze histogram --match bad", ["analyze", "histogram", "--match", "12345678"] + db, 1)
    add("analyze histogram --by time:0", ["analyze", "histogram", "--by", "time:0ns"] + db, 1)
    add("analyze durations probe 9", ["analyze", "durations", "--from", "9", "--to", "1"] + db, 1)
    add("analyze align one trace", ["analyze", "align", "--traces", "1", "--sync", "1"] + db, 1)
    add("analyze pps --line D9", ["analyze", "pps", "--line", "D9"] + db, 1)
    add("query unknown", ["query", "everything"] + db, 1)
    add("query window bad time", ["query", "window", "soon", "later"] + db, 1)
    add("label no such trace", ["label", "--trace", "99", "--probe", "1", "x"] + db, 1)
    add("mkdisk over a file", ["mkdisk", "{text.txt}"], 1)
    add("mkdisk onto a directory", ["mkdisk", "{dir}", "--force"], 1)
    add("signal bad url", ["signal", "nosuch:url", "1", "1"], 1)
    add("signal onto a trace disk", ["signal", "shm:{good.img}", "1", "1"], 1)
    add("qemu run --append exit=", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}",
                                    "--append", "exit=reboot"], 1)
    add("qemu run no qemu", ["qemu", "run", "--disk", "new.img", "--scenario", "{scenario.txt}", "--qemu",
                             "/nonexistent"], 4, outputs=("new.img",), sanitized_code=1)

    # -- Terminal safety: a label's escape sequences are shown, not sent.
    add("query probes escapes a label", ["query", "probes"] + db, 0, no_stdout="\x1b")
    add("sql escapes a label", ["sql", "select label from probes"] + db, 0, no_stdout="\x1b")
    add("analyze histogram --by probe escapes", ["analyze", "histogram", "--by", "probe"] + db, 0,
        no_stdout="\x1b")
    add("query probes csv keeps the bytes", ["query", "probes", "--format", "csv"] + db, 0, stdout="\x1b")
    return out


def substitute(word, fixtures, scratch):
    def one(match):
        key = match.group(1)
        if key not in fixtures:
            raise KeyError(f"no fixture {key}")
        return fixtures[key]
    return re.sub(r"\{([A-Za-z0-9_.]+)\}", one, word)


def inputs_of(case, fixtures):
    """The fixture files a case names, to hash before and after."""
    names = set()
    for word in case.args + ([case.stdin] if case.stdin else []):
        for key in re.findall(r"\{([A-Za-z0-9_.]+)\}", word):
            names.add(key)
    # Every verb that takes --db reads good.db; the images share an inode with hard.img.
    names.update(["good.db", "good.img"])
    return [fixtures[n] for n in sorted(names) if n in fixtures and os.path.isfile(fixtures[n])]


def digest(path):
    # The 1 TB sparse file is not read (hours): its size, blocks and change time stand for its bytes.
    info = os.stat(path)
    if info.st_size > 256 << 20:
        return f"size {info.st_size} blocks {info.st_blocks} mtime {info.st_mtime_ns} ctime {info.st_ctime_ns}"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def listing(directory):
    return sorted(os.listdir(directory))


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()


def check_case(ett, case, fixtures, root, sanitized, observe=None):
    """The problems of one case (an empty list when it passed); observe(case, result), if given, sees the run."""
    scratch = tempfile.mkdtemp(prefix="case-", dir=root)
    cwd = fixtures["fixtures"] if case.cwd == "fixtures" else scratch
    args = [substitute(w, fixtures, scratch) for w in case.args]
    hashed = {p: digest(p) for p in inputs_of(case, fixtures)}
    before = listing(fixtures["fixtures"])
    stdin = open(substitute(case.stdin, fixtures, scratch), "rb") if case.stdin else subprocess.DEVNULL
    problems = []
    try:
        started = time.monotonic()
        result = subprocess.run([ett] + args, cwd=cwd, stdin=stdin, capture_output=True, timeout=CASE_SECONDS,
                                preexec_fn=None if sanitized else limit_memory)
        seconds = time.monotonic() - started
    except subprocess.TimeoutExpired:
        return [f"took longer than {CASE_SECONDS} s"]
    finally:
        if case.stdin:
            stdin.close()
    if observe:
        observe(case, result)
    err = result.stderr.decode(errors="replace")
    out = result.stdout.decode(errors="replace")
    code = case.sanitized_code if sanitized and case.sanitized_code is not None else case.code
    if result.returncode != code:
        problems.append(f"exit {result.returncode}, expected {code}")
    if "internal error" in err or "bad_alloc" in err:
        problems.append("internal error")
    if result.returncode < 0:
        problems.append(f"killed by signal {-result.returncode}")
    lines = [line for line in err.splitlines() if line.strip()]
    if result.returncode != 0:
        # Notes and warnings may come first; the error is the last line, one `ett:` line.
        errors = lines[-1:] if lines and lines[-1].startswith("ett:") and not lines[-1].startswith(
            ("ett: warning:", "ett: note:")) else []
        if len(errors) != 1:
            problems.append("the last line on stderr is not one 'ett:' error line")
        others = [line for line in lines if not line.startswith("ett:") and not sanitized]
        if others:
            problems.append(f"stderr lines not in the ett: style: {others[:2]}")
        if case.stderr and errors and not re.search(case.stderr, errors[-1]):
            problems.append(f"error line {errors[-1]!r} does not match {case.stderr!r}")
    if case.stdout and not re.search(case.stdout, out):
        problems.append(f"stdout does not match {case.stdout!r}")
    if case.no_stdout and re.search(case.no_stdout, out):
        problems.append(f"stdout matches {case.no_stdout!r}")
    for path, value in hashed.items():
        # A verb that succeeded may store its result (analyze precision, pps) in the database it read; a refused
        # one changes nothing.
        if result.returncode == 0 and path.endswith(".db"):
            continue
        if os.path.exists(path) and digest(path) != value:
            problems.append(f"input {os.path.basename(path)} changed")
        if not os.path.exists(path):
            problems.append(f"input {os.path.basename(path)} is gone")
    after = listing(fixtures["fixtures"])
    if after != before:
        problems.append(f"fixture directory changed: {sorted(set(after) ^ set(before))}")
    stray = [name for name in listing(scratch) if name not in case.outputs]
    if stray:
        problems.append(f"left files behind: {stray}")
    shutil.rmtree(scratch, ignore_errors=True)
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ett")
    parser.add_argument("--shard", default="1/1")
    parser.add_argument("--sanitized", action="store_true")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--filter", default="")
    options = parser.parse_args()
    ett = os.path.abspath(options.ett)
    all_cases = cases()
    names = [c.name for c in all_cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        print(f"duplicate case names: {sorted(duplicates)}")
        return 2
    if options.list:
        for case in all_cases:
            print(case.name)
        print(f"{len(all_cases)} cases")
        return 0
    k, n = (int(x) for x in options.shard.split("/"))
    chosen = [c for i, c in enumerate(all_cases) if i % n == k - 1 and re.search(options.filter, c.name)]
    root = tempfile.mkdtemp(prefix="ett-hostile-")
    env_ok = True
    try:
        fixtures = make_fixtures(ett, root)
        passed = failed = 0
        for case in chosen:
            problems = check_case(ett, case, fixtures, root, options.sanitized)
            if problems:
                failed += 1
                words = " ".join(case.args)
                print(f"FAILED {case.name}: ett {words}: " + "; ".join(problems), flush=True)
            else:
                passed += 1
        print(f"hostile inputs (shard {options.shard}, {len(all_cases)} cases in all):")
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
