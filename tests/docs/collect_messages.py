#!/usr/bin/env python3
"""collect_messages.py: every distinct `ett:` message the hostile corpus provokes, normalised.

Runs the cases of tests/hostile/run_hostile.py (its own fixtures, its own checks) and keeps, of each run, the
error line (the last `ett:` line of a failed run) and every `ett: warning:` line, with the verb and the exit
status. Paths, numbers and the values the case typed become placeholders (FILE, N, 0xN, VALUE, OPTION, VERB,
TEXT), so that one message of the program is one entry however it was provoked.

Usage: collect_messages.py ETT [--json] [--filter REGEX]
Prints one line per distinct message: exit statuses, verbs, then the normalised message (or, with --json, a
list of {"message", "kind", "codes", "verbs", "cases"}). Exits 1 when a case of the corpus failed its own checks
(the messages are then not to be trusted).
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hostile"))
import run_hostile  # noqa: E402  (the corpus, its fixtures and its per-case checks)

# Literal text of messages that holds digits which are not values (kept as written).
KEEP = ["probe 1-8, code 0-255", "is not 1, 0 or X", "e.g. 2400000000", "D0 to D7", "ETTDISK1", "(5%)", ">= 0",
        "> 0", "1, 10 or 100 of", "in sector 0", "is empty (0 bytes)"]


def verb_of(args):
    """The verb words of a command line: `analyze precision`, `qemu run`, `ls`."""
    if not args:
        return "(none)"
    if args[0] in ("analyze", "qemu") and len(args) > 1 and not args[1].startswith("-"):
        return f"{args[0]} {args[1]}"
    return args[0]


def normalise(line, paths=(), values=()):
    """One stderr line as the page quotes it: `ett: FILE: ...`, numbers N, typed values VALUE."""
    text = line.rstrip("\n")
    # Paths the case named (absolute fixtures, relative spellings, devices): longest first.
    for path in sorted(set(paths), key=len, reverse=True):
        if len(path) >= 3:
            text = text.replace(path, "FILE")
    text = re.sub(r"/dev/\w+", "FILE", text)
    # The kernel ett looks for beside itself (a build without one: the sanitizer build).
    text = re.sub(r"^ett: kernel /\S+:", "ett: kernel FILE:", text)
    # The generic messages of the option parser (CLI11) and of the number options: one entry for every option.
    text = re.sub(r"\(see `ett help [^`]*`\)", "(see `ett help VERB`)", text)
    text = re.sub(r"Could not convert: --[\w-]+ = \S+", "Could not convert: OPTION = VALUE", text)
    text = re.sub(r"ett: --[\w-]+: Value \S+ not in range \S+ to \S+", "ett: OPTION: Value VALUE not in range N to N",
                  text)
    text = re.sub(r"ett: --[\w-]+: '[^']*' is not a number", "ett: OPTION: 'VALUE' is not a number", text)
    text = re.sub(r"ett: --[\w-]+: (\d+) required (\w+) missing", r"ett: OPTION: N required \2 missing", text)
    text = re.sub(r"ett: --[\w-]+ is required \(", "ett: OPTION is required (", text)
    text = re.sub(r"argument was not expected: \S+", "argument was not expected: OPTION", text)
    text = re.sub(r"did you mean '[^']*'", "did you mean 'VERB'", text)
    text = re.sub(r'near "[^"]*"', 'near "TEXT"', text)
    text = re.sub(r"unknown scheme '[^']*'", "unknown scheme 'VALUE'", text)
    # A value the case typed, quoted or right after its option.
    for value in sorted(set(values), key=len, reverse=True):
        if not value:
            continue
        text = text.replace(f"'{value}'", "'VALUE'")
        text = re.sub(rf"(--[\w-]+) {re.escape(value)}(?=[:\s])", r"\1 VALUE", text)
    # Numbers, but not those that are part of a word (ETTDISK1, D6, 64M, 2.4e9) or of the KEEP texts.
    kept = {}
    for k, literal in enumerate(KEEP):
        if literal in text:
            kept[f"\x00{k}\x00"] = literal
            text = text.replace(literal, f"\x00{k}\x00")
    text = re.sub(r"\(D\d\)", "(DN)", text)
    text = re.sub(r"(?<![\w.])0x[0-9a-fA-F]+(?![\w.])", "0xN", text)
    text = re.sub(r"(?<![\w.\x00])-?\d+(?:\.\d+)?(?![\w.\x00]|\.\w)", "N", text)
    for marker, literal in kept.items():
        text = text.replace(marker, literal)
    return text


def classify(line):
    if line.startswith("ett: warning:"):
        return "warning"
    if line.startswith("ett: note:"):
        return "note"
    return "error"


def collect(ett, pattern="", sanitized=False):
    """{message: {"kind", "codes", "verbs", "cases"}} over the corpus, and the names of cases that failed."""
    ett = os.path.abspath(ett)
    found = {}
    failed = []
    root = tempfile.mkdtemp(prefix="ett-messages-")
    try:
        fixtures = run_hostile.make_fixtures(ett, root)
        for case in run_hostile.cases():
            if not re.search(pattern, case.name):
                continue
            if sanitized and case.sanitized_code is not None:
                continue  # the sanitized build has no kernel: that case ends otherwise there
            args = [run_hostile.substitute(w, fixtures, root) for w in case.args]
            paths = [p for p in fixtures.values()]
            paths += [w for w in args if "://" not in w and not w.startswith("sqlite:")
                      and ("/" in w or re.search(r"\.(img|db|csv|txt|bin|json|log)$", w))]
            paths += [w[len("sqlite:"):] for w in args if w.startswith("sqlite:") and w != "sqlite:"]
            values = [w for w in args if w not in paths and not w.startswith(("--", "sqlite:"))]
            values += [part for w in values for part in re.split(r"[:,=]", w) if part and part != w]
            seen = []
            problems = run_hostile.check_case(ett, case, fixtures, root, sanitized,
                                              observe=lambda c, result: seen.append(result))
            if problems:
                failed.append(f"{case.name}: {'; '.join(problems)}")
            result = seen[0]
            lines = [line for line in result.stderr.decode(errors="replace").splitlines() if line.strip()]
            picked = [line for line in lines if classify(line) == "warning"]
            if result.returncode != 0 and lines and lines[-1].startswith("ett:"):
                picked.append(lines[-1])
            for line in picked:
                message = normalise(line, paths, values)
                entry = found.setdefault(message, {"kind": classify(line), "codes": set(), "verbs": set(),
                                                   "cases": []})
                entry["codes"].add(result.returncode)
                entry["verbs"].add(verb_of(case.args))
                entry["cases"].append(case.name)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return found, failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ett")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--filter", default="")
    parser.add_argument("--sanitized", action="store_true")
    options = parser.parse_args()
    found, failed = collect(options.ett, options.filter, options.sanitized)
    if options.json:
        rows = [{"message": m, "kind": e["kind"], "codes": sorted(e["codes"]), "verbs": sorted(e["verbs"]),
                 "cases": e["cases"]} for m, e in sorted(found.items())]
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        for message, entry in sorted(found.items()):
            codes = ",".join(str(c) for c in sorted(entry["codes"]))
            print(f"[{codes}] {', '.join(sorted(entry['verbs']))}: {message}")
        print(f"{len(found)} distinct messages from the hostile corpus")
    for name in failed:
        print(f"case failed its checks: {name}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
