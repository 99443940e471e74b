#!/usr/bin/env python3
"""Runs the shell examples of README.md and docs/ and compares what they print with what the page says.

A page's examples are fenced blocks with the info string `console`:

    ```console
    $ ett ls trace.img
    session 1 ...
    ...
    [12]
    ```

`$ ` starts a command (`> ` continues it on the next line); the lines after it, up to the next command, are its
expected output (stdout and stderr together, as a terminal shows them). Expected lines match exactly, except:
  `...`            alone on a line: any number of lines (also none)
  `TEXT (glob)`    `*` is any text, `?` one character
  `TEXT (re)`      a Python regular expression for the whole line
  `[N]`            the last line: the command exits with status N (no such line: it exits 0)

An HTML comment right before a block says how to run it:
  <!-- doctest: skip REASON -->   not run (a real PC, a package install): counted and listed with its reason
  <!-- doctest: qemu -->          boots the kernel under QEMU: the page runs only with --qemu
  <!-- doctest: file NAME -->     the next block (any language) is written to NAME, for later commands to use
  <!-- doctest: status -->        run, but only the exit status is checked (a block shown without its output);
  <!-- doctest: qemu status -->   the same for a block that boots the kernel
Hidden set-up commands, run in order with the blocks but not shown on the page:
  <!-- doctest-setup
  $ ett synth --events 1000 trace.img
  -->
Every other shell block (sh, bash, shell, or one without a language whose lines start with `$ `) is an error: a shell example either runs or says why not.

All blocks of one page run in order in one fresh directory, with the build's bin directory first on PATH,
TZ=UTC, LC_ALL=C and no terminal, so a page can build on what its earlier blocks made. DOCTEST_SOURCE_DIR names
the repository's root, for set-up commands that link files from it.

Usage: run_examples.py BIN_DIR [--qemu | --only-qemu] [--list] FILE|DIR...  (a DIR: its *.md files, recursively)
Exit 0 when every example printed what its page says, 1 otherwise (each difference shown).
"""
import argparse
import difflib
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHELL_LANGS = {"sh", "bash", "shell", "console", "shell-session"}
DIRECTIVE = re.compile(r"^\s*<!--\s*doctest:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w-]*)")
COMMAND_TIMEOUT = 600
# The repository's root: a page's hidden set-up links what it needs from there (qemu/scenarios, ...).
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Block:
    def __init__(self, path, line, lang, lines, directive=None, hidden=False):
        self.path = path
        self.line = line
        self.lang = lang
        self.lines = lines
        self.kind, self.reason = directive if directive else ("run", "")
        self.hidden = hidden
        # Only the exit status is checked: a block shown without its output (the reference's examples).
        self.status_only = self.kind == "status" or (self.kind == "qemu" and self.reason == "status")

    def where(self):
        return f"{self.path}:{self.line}"


def parse_page(path):
    """The page's shell blocks and hidden set-up blocks, in page order."""
    with open(path, encoding="utf-8") as f:
        text = f.read().splitlines()
    blocks = []
    directive = None
    i = 0
    while i < len(text):
        line = text[i]
        m = DIRECTIVE.match(line)
        if m:
            directive = (m.group(1), m.group(2))
            if directive[0] not in ("skip", "qemu", "file", "status"):
                raise SystemExit(f"{path}:{i + 1}: unknown doctest directive '{directive[0]}' "
                                 "(skip, qemu, status or file)")
            i += 1
            continue
        if line.strip() == "<!-- doctest-setup":
            start = i + 1
            i += 1
            body = []
            while i < len(text) and text[i].strip() != "-->":
                body.append(text[i])
                i += 1
            blocks.append(Block(path, start, "console", body, directive, hidden=True))
            directive = None
            i += 1
            continue
        m = FENCE.match(line)
        if m:
            indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
            start = i + 1
            i += 1
            body = []
            while i < len(text) and not text[i].strip().startswith(fence):
                body.append(text[i][len(indent):] if text[i].startswith(indent) else text[i].lstrip())
                i += 1
            if directive and directive[0] == "file":
                blocks.append(Block(path, start, lang, body, directive, hidden=True))
            elif lang in SHELL_LANGS or (not lang and any(b.startswith("$ ") for b in body)):
                blocks.append(Block(path, start, lang, body, directive))
            directive = None
            i += 1
            continue
        if line.strip():
            directive = None
        i += 1
    return blocks


def commands_of(block):
    """[(command, expected lines, line number)] of a console block."""
    out = []
    for n, line in enumerate(block.lines):
        lineno = block.line + 1 + n
        if line.startswith("$ ") or line == "$":
            out.append([line[2:], [], lineno])
        elif line.startswith("> ") and out and not out[-1][1]:
            out[-1][0] += "\n" + line[2:]
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise SystemExit(f"{block.path}:{lineno}: output before the first `$ ` command")
    return out


def line_matches(pattern, actual):
    if pattern.endswith(" (re)"):
        return re.fullmatch(pattern[:-5], actual) is not None
    if pattern.endswith(" (glob)"):
        return fnmatch.fnmatchcase(actual, pattern[:-7].replace("[", "[[]"))
    return pattern == actual


def output_matches(expected, actual):
    """Whether the actual lines match the expected ones, `...` standing for any run of lines."""
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            result = j == len(actual)
        elif expected[i] == "...":
            result = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and line_matches(expected[i], actual[j]) and go(i + 1, j + 1)
        memo[key] = result
        return result

    return go(0, 0)


def run_page(path, bin_dir, with_qemu, verbose):
    blocks = parse_page(path)
    failures = []
    counts = {"run": 0, "skip": 0, "qemu-not-run": 0}
    shell_blocks = [b for b in blocks if not b.hidden]
    for block in shell_blocks:
        if block.lang != "console" and block.kind != "skip":
            failures.append(f"{block.where()}: a ```{block.lang or '(no language)'} block: write it as ```console with `$ ` "
                            f"commands and their output, or mark it <!-- doctest: skip REASON -->")
        if block.kind == "skip" and not block.reason:
            failures.append(f"{block.where()}: <!-- doctest: skip --> needs a reason")
    if failures:
        return failures, counts
    needs_qemu = any(b.kind == "qemu" for b in blocks)
    if needs_qemu and not with_qemu:
        counts["qemu-not-run"] = len(shell_blocks)
        return failures, counts

    work = tempfile.mkdtemp(prefix="ett-doc-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETT_")}
    env.update({"PATH": os.path.abspath(bin_dir) + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
                "TZ": "UTC", "LC_ALL": "C", "LANG": "C", "HOME": work, "COLUMNS": "100",
                "NO_COLOR": "1", "PAGER": "cat",
                "DOCTEST_SOURCE_DIR": SOURCE_DIR})
    env.pop("TERM", None)
    try:
        for block in blocks:
            if block.kind == "skip":
                counts["skip"] += 1
                continue
            if block.kind == "file":
                with open(os.path.join(work, block.reason), "w", encoding="utf-8") as f:
                    f.write("\n".join(block.lines) + "\n")
                continue
            for command, expected, lineno in commands_of(block):
                status = 0
                if expected and re.fullmatch(r"\[\d+\]", expected[-1]):
                    status = int(expected[-1][1:-1])
                    expected = expected[:-1]
                started = time.monotonic()
                try:
                    proc = subprocess.run(["bash", "-c", command], cwd=work, env=env,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT)
                    actual = proc.stdout.decode("utf-8", "replace").splitlines()
                    code = proc.returncode
                except subprocess.TimeoutExpired:
                    actual, code = [f"(timed out after {COMMAND_TIMEOUT} s)"], None
                if verbose:
                    print(f"  {path}:{lineno}: $ {command.splitlines()[0]}  "
                          f"({time.monotonic() - started:.1f} s, exit {code})")
                if block.hidden:
                    if code != status:
                        failures.append(f"{path}:{lineno}: set-up command `{command}` exited {code}:\n"
                                        + "\n".join("    " + a for a in actual[-20:]))
                    continue
                counts["run"] += 1
                if code != status or not (block.status_only or output_matches(expected, actual)):
                    diff = difflib.unified_diff(expected + ([f"[{status}]"] if status else []),
                                                actual + ([f"[{code}]"] if code else []),
                                                "page", "actual", lineterm="", n=3)
                    failures.append(f"{path}:{lineno}: `$ {command}` printed something else than the page says:\n"
                                    + "\n".join("    " + d for d in diff))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return failures, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bin_dir")
    parser.add_argument("files", nargs="+")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--qemu", action="store_true", help="run the pages that boot the kernel too")
    group.add_argument("--only-qemu", action="store_true", help="run only the pages that boot the kernel")
    parser.add_argument("--list", action="store_true", help="list each page's blocks and how they run")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    files = []
    for path in args.files:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".md")]
        else:
            files.append(path)
    args.files = files

    if args.list:
        for path in args.files:
            for b in parse_page(path):
                if not b.hidden:
                    print(f"{b.where()}\t{b.lang}\t{b.kind}\t{b.reason}")
        return 0

    all_failures = []
    totals = {"run": 0, "skip": 0, "qemu-not-run": 0}
    for path in args.files:
        if args.only_qemu and not any(b.kind == "qemu" for b in parse_page(path)):
            continue
        failures, counts = run_page(path, args.bin_dir, args.qemu or args.only_qemu, args.verbose)
        all_failures += failures
        for k in totals:
            totals[k] += counts[k]
    for f in all_failures:
        print(f, file=sys.stderr)
    print(f"doc examples: {totals['run']} commands run, {totals['skip']} blocks skipped (with a reason), "
          f"{totals['qemu-not-run']} blocks left for the QEMU pass, {len(all_failures)} failures")
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
