#!/usr/bin/env python3
"""check_links.py: the documentation's links, checked offline over README.md and docs/**/*.md.

- every relative link (inline, reference definition, HTML href/src) names an existing file or folder of the
  repository (and stays inside it);
- every #anchor, in the same file or in another .md file, names a heading of that file (GitHub's slugs, which
  the site uses too: scripts/docs_markdown.py) or an <a name/id>;
- every docs/**/*.md is reached from README.md by following links (no orphan pages).
External http(s) links are not fetched; --list-external lists them.

usage: check_links.py [--root DIR] [--list-external]
Prints one line per problem (FILE:LINE: ...) and a summary; exit status 1 when there is any problem.
"""

import argparse
import os
import posixpath
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))
import docs_markdown as md  # noqa: E402


def markdown_files(root):
    files = ["README.md"] if os.path.isfile(os.path.join(root, "README.md")) else []
    docs = os.path.join(root, "docs")
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".md") and not name.startswith("."):
                files.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)), help="repository root")
    parser.add_argument("--list-external", action="store_true", help="list the external links (not fetched)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)

    files = markdown_files(root)
    texts = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            texts[f] = fh.read()
    anchor_cache = {}

    def anchors_of(path):
        if path not in anchor_cache:
            if path not in texts:
                with open(os.path.join(root, path), encoding="utf-8") as fh:
                    texts[path] = fh.read()
            anchor_cache[path] = set(md.anchors(texts[path]))
        return anchor_cache[path]

    problems, external = [], []
    graph = {f: set() for f in files}
    checked = 0
    for f in files:
        here = posixpath.dirname(f)
        for line, _, _, target in md.links(texts[f]):
            where = "%s:%d" % (f, line)
            if md.is_external(target):
                external.append("%s: %s" % (where, target))
                continue
            checked += 1
            raw_path, _, raw_fragment = target.partition("#")
            path = urllib.parse.unquote(raw_path.partition("?")[0])
            fragment = urllib.parse.unquote(raw_fragment)
            if path.startswith("/"):
                problems.append("%s: %s: a path from the site root; write it relative to this file" % (where, target))
                continue
            resolved = posixpath.normpath(posixpath.join(here, path)) if path else f
            if resolved == ".." or resolved.startswith("../"):
                problems.append("%s: %s: outside the repository" % (where, target))
                continue
            full = os.path.join(root, resolved)
            if not os.path.exists(full):
                problems.append("%s: %s: no such file" % (where, target))
                continue
            if resolved.endswith(".md") and os.path.isfile(full):
                graph.setdefault(f, set()).add(resolved)
                if raw_fragment and fragment not in anchors_of(resolved):
                    near = [a for a in anchors_of(resolved) if a.lower() == fragment.lower()]
                    hint = " (did you mean #%s?)" % near[0] if near else ""
                    problems.append("%s: %s: %s has no heading with anchor #%s%s"
                                    % (where, target, resolved, fragment, hint))

    # Orphans: pages of docs/ that no chain of links from README.md reaches.
    reached, todo = set(), ["README.md"] if "README.md" in files else []
    while todo:
        page = todo.pop()
        if page in reached:
            continue
        reached.add(page)
        todo.extend(graph.get(page, ()))
    orphans = [f for f in files if f.startswith("docs/") and f not in reached]
    for f in orphans:
        problems.append("%s: orphan page: no chain of links from README.md reaches it" % f)

    if args.list_external:
        print("external links (not fetched): %d" % len(external))
        for e in external:
            print("  " + e)
    for p in problems:
        print(p)
    print("check_links: %d file(s), %d relative link(s), %d external, %d problem(s)%s"
          % (len(files), checked, len(external), len(problems),
             " (%d orphan page(s))" % len(orphans) if orphans else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
