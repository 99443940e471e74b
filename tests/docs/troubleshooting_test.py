#!/usr/bin/env python3
"""troubleshooting_test.py: docs/guide/troubleshooting.md names every refusal, and only refusals that exist.

The page's messages are the first cells of its tables made of code spans (several joined by <br>) starting `ett:`
or `ETT:` (a `\\|` in a cell is a `|`); the cell after the messages is their exit status. Checks:
  1. every distinct message the hostile corpus provokes (tests/docs/collect_messages.py, normalised: FILE, N,
     0xN, VALUE, OPTION, VERB, TEXT) is quoted on the page, and its exit cell names every status it exited with;
  2. every message quoted on the page is still provoked by some case, or its text between placeholders is still
     in a string literal of host-tools/ or kernel/ (printf %-conversions, fmt {} fields and the C library's
     errno texts count as placeholders), so that a message taken out of the code goes out of the page too.

Usage: troubleshooting_test.py ETT [--page PATH] [--sanitized]
"""

import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import collect_messages  # noqa: E402

PLACEHOLDERS = r"\b(?:FILE|0xN|N|VALUE|OPTION|VERB|TEXT|MESSAGE|URL|PHASE|STATE)\b"
# What frames a message on the screen or on stderr, not part of the message's own string literal.
PREFIXES = ["ett: warning: ", "ett: ", "ETT: RESULT FAILED ", "ETT: PANIC ", "ETT: "]


def code_span(cell):
    """The text of a cell that is one code span (`x` or `` x ``), or None."""
    match = re.fullmatch(r"(`+)\s?(.*?)\s?\1", cell.strip())
    return match.group(2) if match else None


def split_row(line):
    cells, current, k = [], "", 0
    body = line.strip()[1:]
    while k < len(body):
        if body[k] == "\\" and k + 1 < len(body) and body[k + 1] == "|":
            current += "|"
            k += 2
            continue
        if body[k] == "|":
            cells.append(current)
            current = ""
        else:
            current += body[k]
        k += 1
    return cells


def page_messages(path):
    """[(message, exit cell, line number)] of the page's message tables."""
    out = []
    in_fence = False
    with open(path, encoding="utf-8") as page:
        for number, line in enumerate(page, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            if in_fence or not line.lstrip().startswith("|"):
                continue
            cells = split_row(line)
            if len(cells) < 2:
                continue
            spans = [code_span(piece) for piece in cells[0].split("<br>")]
            if all(spans):
                for text in spans:
                    if text.startswith(("ett:", "ETT:")):
                        out.append((text, cells[1].strip(), number))
    return out


def source_text():
    """Every string literal of host-tools/ and kernel/, adjacent literals joined, conversions as NULs."""
    literal = r'"(?:[^"\\\n]|\\.)*"'
    runs = re.compile(rf"{literal}(?:\s*{literal})*")
    parts = []
    for top in ("host-tools", "kernel"):
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".cpp", ".h")):
                    continue
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                    code = f.read()
                for run in runs.finditer(code):
                    text = "".join(m[1:-1] for m in re.findall(literal, run.group(0)))
                    text = re.sub(r"%%", "\x01", text)
                    text = re.sub(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t)?[diouxXscpfgeEG]",
                                  "\x00", text)
                    text = re.sub(r"\{[^{}]*\}", "\x00", text)
                    text = text.replace("\x01", "%")
                    text = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)
                    parts.append(text)
    return "\x00".join(parts)


def in_sources(message, sources):
    """Whether each stretch of the message between placeholders (3 letters or more) is in one literal."""
    text = message
    for prefix in PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    # The C library's texts of errno values (strerror) are not in the sources: they stand for themselves.
    for error in sorted({os.strerror(e) for e in range(1, 134)}, key=len, reverse=True):
        if not error.startswith("Unknown error"):
            text = text.replace(error, "TEXT")
    missing = []
    for fragment in re.split(PLACEHOLDERS, text):
        if len(re.findall(r"[A-Za-z]", fragment)) >= 3 and fragment not in sources:
            # A fragment may join two literals around a message made elsewhere (`bad command line: ` + the
            # option's own message): each stretch between ": " and "; " on its own then, quotes left out.
            parts = re.split(r"[:;] ", fragment)
            pieces = [p.strip(' "') for p in parts]
            pieces = [p for p in pieces if len(re.findall(r"[A-Za-z]", p)) >= 3]
            if len(parts) < 2 or any(p not in sources for p in pieces):
                missing.append(fragment)
    return missing


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ett")
    parser.add_argument("--page", default=os.path.join(ROOT, "docs", "guide", "troubleshooting.md"))
    parser.add_argument("--sanitized", action="store_true")
    options = parser.parse_args()
    started = time.monotonic()
    quoted = page_messages(options.page)
    if not quoted:
        print(f"FAILED: no messages found in {options.page}")
        return 1
    page = {}
    for text, exit_cell, number in quoted:
        page.setdefault(text, (exit_cell, number))
    found, failed_cases = collect_messages.collect(options.ett, sanitized=options.sanitized)
    problems = []
    for message, entry in sorted(found.items()):
        codes = ", ".join(str(c) for c in sorted(entry["codes"]))
        example = entry["cases"][0]
        if message not in page:
            problems.append(f"not on the page: add a row for `{message}` (exit {codes}; "
                            f"{', '.join(sorted(entry['verbs']))}; e.g. hostile case '{example}')")
            continue
        if entry["kind"] == "error":
            exit_cell, number = page[message]
            documented = {int(n) for n in re.findall(r"\b\d+\b", exit_cell)}
            undocumented = sorted(entry["codes"] - documented)
            if undocumented:
                problems.append(f"line {number}: `{message}` exits {codes} but its exit cell says "
                                f"'{exit_cell}' (e.g. hostile case '{example}')")
    sources = source_text()
    stale = 0
    for text, (exit_cell, number) in sorted(page.items(), key=lambda item: item[1][1]):
        if text in found:
            continue
        missing = in_sources(text, sources)
        if missing:
            stale += 1
            problems.append(f"line {number}: `{text}` is provoked by no hostile case and its text "
                            f"{missing[0]!r} is in no string literal of host-tools/ or kernel/: "
                            "update or remove the row")
    for name in failed_cases:
        print(f"note: hostile case failed its own checks (see hostile_inputs_*): {name}")
    for problem in problems:
        print(f"FAILED {problem}")
    covered = sum(1 for m in found if m in page)
    print(f"troubleshooting.md: {len(page)} messages quoted; {covered} of the {len(found)} messages of the "
          f"hostile corpus covered; {len(page) - covered - stale} more found in the sources "
          f"({time.monotonic() - started:.1f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
