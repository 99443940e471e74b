#!/usr/bin/env python3
"""slug_test.py: the heading anchors of scripts/docs_markdown.py, which check_links.py and the site both use.

1. slugify() and unique() give GitHub's slugs (github-slugger's rules: lowercase, punctuation and symbols
   dropped, '-' and '_' kept, each space a '-', no collapsing, repeats suffixed -1, -2).
2. anchors() reads a heading's text as GitHub renders it (code spans, links, emphasis, escapes, entities, setext
   headings, not the '#' lines of fenced code).
3. Python-Markdown as MkDocs runs it (the toc extension with the hook's slugify and unique, in the interpreter of
   the installed mkdocs) gives the same ids for the same source.

usage: slug_test.py        exit status 1 on any failure
"""

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, SCRIPTS)
import docs_markdown as md  # noqa: E402

SLUGS = [  # heading text -> GitHub's anchor
    ("The two commands", "the-two-commands"),
    ("ETT — the Event Timestamping Toolkit", "ett--the-event-timestamping-toolkit"),
    ("heading with a - dash", "heading-with-a---dash"),
    ("heading with an _ underscore", "heading-with-an-_-underscore"),
    ("exchange.bind_headers(exchange, routing [, bindCallback])",
     "exchangebind_headersexchange-routing--bindcallback"),
    ("Capture fidelity under QEMU: the scenario's clock", "capture-fidelity-under-qemu-the-scenarios-clock"),
    ("apostrophe’s should be trimmed", "apostrophes-should-be-trimmed"),
    ("I ♥ unicode", "i--unicode"),
    ("en–dash", "endash"),
    ("😄 unicode emoji", "-unicode-emoji"),
    ("Привет non-latin 你好", "привет-non-latin-你好"),
    ("Ünïcode café", "ünïcode-café"),
    ("x² and ½", "x-and-"),
    ("C++ & C#", "c--c"),
]
REPEATS = [("echo", "echo"), ("echo", "echo-1"), ("echo 1", "echo-1-1"), ("echo-1", "echo-1-2"), ("echo", "echo-2")]

SOURCE = """# ETT — the guide

## `ett qemu run --run CMD` & friends

## Step 1: [boot](../README.md) the *kernel*

## Step 1: boot the kernel

### snake_case and __strong__ and \\*stars\\*

```sh
# not a heading
```

    # indented code, not a heading either

Setext heading
--------------

Another setext
==============

## Entities &amp; &lt;tags&gt; <span>inline</span> #

<a name="custom-anchor"></a>
"""
EXPECTED = [
    "ett--the-guide",
    "ett-qemu-run---run-cmd--friends",
    "step-1-boot-the-kernel",
    "step-1-boot-the-kernel-1",
    "snake_case-and-strong-and-stars",
    "setext-heading",
    "another-setext",
    "entities--tags-inline",
    "custom-anchor",
]

RENDER = r"""
import json, re, sys
sys.path.insert(0, sys.argv[1])
import markdown, markdown.extensions.toc as toc
import docs_markdown as md
toc.unique = md.unique
html = markdown.markdown(sys.stdin.read(), extensions=["toc", "fenced_code", "tables", "attr_list"],
                         extension_configs={"toc": {"slugify": md.slugify, "permalink": True}})
print(json.dumps(re.findall(r'<h[1-6] id="([^"]*)"', html) + re.findall(r'<a name="([^"]*)"', html)))
"""


def mkdocs_python():
    """The interpreter the installed mkdocs runs in (it has Python-Markdown)."""
    mkdocs = shutil.which("mkdocs")
    if not mkdocs:
        return None
    with open(mkdocs, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    return first[2:].strip().split()[0] if first.startswith("#!") else None


def main():
    failures = []
    for text, expected in SLUGS:
        got = md.slugify(text)
        if got != expected:
            failures.append("slugify(%r) = %r, GitHub: %r" % (text, got, expected))
    used = set()
    for text, expected in REPEATS:
        got = md.unique(md.slugify(text), used)
        if got != expected:
            failures.append("repeat %r = %r, GitHub: %r" % (text, got, expected))
    got = md.anchors(SOURCE)
    if got != EXPECTED:
        failures.append("anchors(source) = %s\n  expected       %s" % (got, EXPECTED))

    python = mkdocs_python()
    if not python:
        failures.append("mkdocs is not installed (Debian mkdocs; scripts/deps.sh installs it)")
    else:
        run = subprocess.run([python, "-B", "-c", RENDER, SCRIPTS], input=SOURCE, capture_output=True, text=True)
        if run.returncode != 0:
            failures.append("Python-Markdown (%s) failed: %s" % (python, run.stderr.strip()[-2000:]))
        else:
            ids = json.loads(run.stdout)
            if ids != EXPECTED:
                failures.append("Python-Markdown's ids = %s\n  GitHub's             %s" % (ids, EXPECTED))
    for f in failures:
        print("FAIL: " + f)
    print("slug_test: %d slug(s), %d repeat(s), %d heading(s) from source and through Python-Markdown: %s"
          % (len(SLUGS), len(REPEATS), len(EXPECTED), "%d failure(s)" % len(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
