#!/usr/bin/env python3
"""site_test.py: builds the documentation site (scripts/build-docs) in a scratch directory and checks it.

1. The site's heading ids are GitHub's: for every page, the ids of the built <h1>..<h6> are the anchors
   tests/docs/check_links.py computes from the Markdown source (scripts/docs_markdown.py), in order; every
   relative <a href> of every built page names a page of the site and, with #x, an id in it.
2. In real headless Chromium through chromedriver (tests/support/browser_check.py's WebDriver client), served
   from 127.0.0.1 (python's http.server: offline), it opens the home page, one guide page and a search (index.html?q=WORD, the
   theme's search box, WORD from the guide's title): fails on any console error, any failed or non-local
   request, and on a search without results pointing at the page the word comes from. The search again from
   disk (file://), where it runs in the page (scripts/docs_markdown.py). Screenshots: home.png, guide.png,
   search.png, search-disk.png in --screenshots DIR.

usage: site_test.py [--screenshots DIR] [--keep]
Prints what it checked; exit status 1 on any failure.
"""

import argparse
import functools
import glob
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import docs_markdown as md  # noqa: E402
from browser_check import chromium, wait_until  # noqa: E402

PATIENCE_S = 60
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


def check_heading_ids(src, site):
    pages = 0
    for path in sorted(glob.glob(os.path.join(src, "**", "*.md"), recursive=True)):
        rel = os.path.relpath(path, src)
        with open(path, encoding="utf-8") as f:
            expected = [a for a in md.anchors(f.read())]
        built = os.path.join(site, os.path.splitext(rel)[0] + ".html")
        with open(built, encoding="utf-8") as f:
            page = f.read()
        start = page.find('<div class="col-md-9" role="main">')
        content = page[start:page.find("<footer", start)]
        ids = [html.unescape(i) for i in re.findall(r"<h[1-6][^>]*\bid=\"([^\"]*)\"", content)]
        ids += [html.unescape(i) for i in re.findall(r"<a\s[^>]*?\b(?:name|id)=\"([^\"]*)\"", content)]
        if sorted(ids) != sorted(expected):
            fail("%s: the site's heading ids differ from GitHub's slugs:\n  site:   %s\n  github: %s"
                 % (rel, [i for i in ids if i not in expected], [a for a in expected if a not in ids]))
        pages += 1
    print("heading ids: %d page(s), site ids = GitHub slugs" % pages)


def check_site_links(site):
    """Every relative <a href> of every built page names a file of the site and, with #x, an id in it."""
    ids, pages = {}, sorted(glob.glob(os.path.join(site, "**", "*.html"), recursive=True))

    def ids_of(path):
        if path not in ids:
            with open(path, encoding="utf-8") as f:
                ids[path] = {html.unescape(i) for i in re.findall(r"\b(?:id|name)=\"([^\"]*)\"", f.read())}
        return ids[path]
    count = 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for href in re.findall(r"<a\s[^>]*?\bhref=\"([^\"]*)\"", text):
            href = html.unescape(href)
            if href in ("", "#") or md.is_external(href):
                continue
            count += 1
            path, _, fragment = href.partition("#")
            # 404.html links from the site's root (/x.html): a server shows it at any path
            base = site if path.startswith("/") else os.path.dirname(page)
            target = os.path.normpath(os.path.join(base, urllib.parse.unquote(path).lstrip("/"))) if path else page
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            rel = os.path.relpath(page, site)
            if not os.path.isfile(target):
                fail("%s: link %s: no such page in the site" % (rel, href))
            elif fragment and target.endswith(".html") and urllib.parse.unquote(fragment) not in ids_of(target):
                fail("%s: link %s: no id %r in %s" % (rel, href, fragment, os.path.relpath(target, site)))
    print("site links: %d page(s), %d relative link(s)" % (len(pages), count))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    errors = []

    def log_message(self, fmt, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        QuietHandler.errors.append("%d %s" % (code, self.path))
        super().send_error(code, message, explain)


def start_server(site):
    handler = functools.partial(QuietHandler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def title_word(md_path):
    """A word of the page's first heading, for the search."""
    with open(md_path, encoding="utf-8") as f:
        found = md.headings(f.read())
    title = found[0][2] if found else ""
    words = [w for w in re.findall(r"[A-Za-z]{5,}", title)]
    return max(words, key=len).lower() if words else None


def browser_log(driver, kind):
    return driver.s("POST", "/se/log", {"type": kind}) or []


def network_problems(entries, ours, local):
    """Failed loads, HTTP errors and non-local requests of the site's documents (and their workers) in
    chromedriver's performance log; the browser's own pages (chrome://new-tab-page, ...) are not the site's."""
    requests, problems = {}, []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not (ours(params.get("documentURL", "")) or ours(url)):
                continue
            requests[params["requestId"]] = url
            if not local(url):
                problems.append("request to the network: " + url)
        elif method == "Network.loadingFailed" and params["requestId"] in requests and not params.get("canceled"):
            problems.append("failed load (%s): %s" % (params.get("errorText"), requests[params["requestId"]]))
        elif method == "Network.responseReceived" and params["requestId"] in requests:
            status = params["response"].get("status", 0)
            if status >= 400:
                problems.append("HTTP %d: %s" % (status, params["response"]["url"]))
    return problems, sorted(set(requests.values()))


def open_page(driver, url):
    driver.s("POST", "/url", {"url": url})
    wait_until("the page to load", lambda: driver.script("return document.readyState") == "complete", PATIENCE_S)


def screenshot(driver, path):
    import base64
    with open(path, "wb") as f:
        f.write(base64.b64decode(driver.s("GET", "/screenshot")))
    return path


def browse(site, shots, guide_md, guide_html):
    server = start_server(site)
    base = "http://127.0.0.1:%d/" % server.server_address[1]
    profile = tempfile.mkdtemp(prefix="ett-docs-chromium-")
    try:
        with chromium(os.path.join(shots, "chromedriver.log"), profile, window="1280,900",
                      ready_s=PATIENCE_S) as driver:
            browser_log(driver, "browser"), browser_log(driver, "performance")  # the new-tab page's entries

            def ours(url):
                return url.startswith(base) or url.startswith("file://" + site)

            def local(url):
                return ours(url) or url.startswith("data:") or url.startswith("blob:") or url.startswith("about:")

            def check(name, url):
                errors = [e["message"] for e in browser_log(driver, "browser") if e.get("level") == "SEVERE"]
                problems, requested = network_problems(browser_log(driver, "performance"), ours, local)
                for e in errors:
                    fail("%s (%s): console error: %s" % (name, url, e))
                for p in problems:
                    fail("%s (%s): %s" % (name, url, p))
                if os.environ.get("ETT_DOCS_DEBUG"):
                    print("\n".join("  " + r for r in requested))
                print("%s: %s: %d request(s), %d console error(s), %d failed load(s)"
                      % (name, url, len(requested), len(errors), len(problems)))

            # The home page: README.md.
            open_page(driver, base + "index.html")
            title = driver.script("return document.querySelector('div[role=main] h1') ?"
                                  " document.querySelector('div[role=main] h1').textContent : ''")
            nav = driver.script("return Array.from(document.querySelectorAll('.navbar-nav .nav-link'))"
                                ".map(e => e.textContent.trim()).filter(t => t)")
            if not title:
                fail("home: no <h1> in the page")
            # The side table of contents and the search index are built by scripts: give them a moment.
            time.sleep(0.5)
            print("home: title %r, nav %s, screenshot %s"
                  % (title, nav, screenshot(driver, os.path.join(shots, "home.png"))))
            check("home", base + "index.html")

            # One guide page.
            if guide_html:
                open_page(driver, base + guide_html)
                time.sleep(0.3)
                h1 = driver.script(
                    "const h = document.querySelector('div[role=main] h1'); return h ? h.textContent : ''")
                print("guide: %s, title %r, screenshot %s"
                      % (guide_html, h1, screenshot(driver, os.path.join(shots, "guide.png"))))
                check("guide", base + guide_html)
            else:
                print("guide: no docs/guide/*.md page yet: only the home page and the search are opened")

            # The search: the theme's search box, filled from ?q= once lunr has indexed the site; over http (a Web
            # Worker) and from disk (file://: in the page, scripts/docs_markdown.py).
            word = title_word(guide_md) if guide_md else None
            word = word or title_word(os.path.join(os.path.dirname(site), "docs-src", "index.md")) or "ett"
            expected = guide_html or "index.html"
            query = "index.html?q=" + urllib.parse.quote(word)
            for name, url, png in (("search", base + query, "search.png"),
                                   ("search from disk", "file://" + os.path.join(site, query), "search-disk.png")):
                open_page(driver, url)
                driver.script("$('#mkdocs_search_modal').modal('show')")

                def results():
                    return driver.script(
                        "return Array.from(document.querySelectorAll('#mkdocs-search-results article h3 a'))"
                        ".map(a => a.getAttribute('href'))") or None
                try:
                    hits = wait_until("search results for %r" % word, results, PATIENCE_S)
                except RuntimeError as e:
                    hits = []
                    fail("%s: %s" % (name, e))
                time.sleep(0.3)
                if hits and not any(h.split("#")[0].endswith(expected) for h in hits):
                    fail("%s: %r finds %s, not %s" % (name, word, hits, expected))
                print("%s: %r -> %d result(s) %s, screenshot %s"
                      % (name, word, len(hits), hits[:3], screenshot(driver, os.path.join(shots, png))))
                check(name, url)
    finally:
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    for e in QuietHandler.errors:
        fail("server: " + e)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--screenshots", help="directory for the screenshots (default: the scratch directory)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (the built site)")
    args = parser.parse_args()
    for tool in ("mkdocs", "chromium", "chromedriver"):
        if not shutil.which(tool):
            print("FAIL: %s is not installed (scripts/deps.sh installs mkdocs, chromium, chromium-driver)" % tool)
            return 1
    work = tempfile.mkdtemp(prefix="ett-docs-site-")
    shots = os.path.abspath(args.screenshots) if args.screenshots else work
    os.makedirs(shots, exist_ok=True)
    started = time.monotonic()
    try:
        build = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-docs"), "--out", work],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(build.stdout, end="")
        if build.returncode != 0:
            fail("scripts/build-docs failed (status %d)" % build.returncode)
            return 1
        src, site = os.path.join(work, "docs-src"), os.path.join(work, "site")
        print("built in %.1f s" % (time.monotonic() - started))
        check_heading_ids(src, site)
        check_site_links(site)
        guides = sorted(glob.glob(os.path.join(src, "guide", "*.md")))
        guide_md = guides[0] if guides else None
        guide_html = os.path.relpath(os.path.splitext(guide_md)[0] + ".html", src) if guide_md else None
        browse(site, shots, guide_md, guide_html)
    except Exception as e:
        fail("%s: %s" % (type(e).__name__, e))
    finally:
        if args.keep:
            print("kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("site_test: %s in %.1f s (screenshots in %s)"
          % ("%d failure(s)" % len(failures) if failures else "passed", time.monotonic() - started, shots))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
