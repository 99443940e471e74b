"""docs_markdown.py: the Markdown facts shared by the documentation tools, and the MkDocs hook that uses them.

- slugify(): GitHub's heading anchors (github-slugger, as github.com renders README.md and docs/**/*.md):
  lowercase, drop every character that is not a letter, mark, decimal or letter number, connector punctuation,
  '-' or ' ', then each space becomes '-' (repeated hyphens are kept). unique() adds GitHub's -1, -2 to repeats.
- headings() / anchors(): the anchors a Markdown file defines, read from its source (fenced code skipped).
- links(): every link target in a Markdown file with its position (inline, reference definitions, HTML href/src,
  autolinks), code spans and fenced code skipped; scripts/build-docs rewrites them, tests/docs/check_links.py
  checks them.
- As an MkDocs hook (mkdocs.yml `hooks:`): the site's toc extension uses the same slugify() and unique(), so an
  anchor that works on GitHub works on the site; the code blocks' Pygments stylesheet is written into the
  site (no highlight.js from a CDN); page titles are their first heading's text (no Markdown); and the search
  works in pages read from disk (file://) too.

Python standard library only (the hook runs inside MkDocs, the rest under any python3).
"""

import html
import re
import unicodedata

# --- slugs -------------------------------------------------------------------------------------------------------

_KEEP_CATEGORIES = ("L", "M", "Nd", "Nl", "Pc")
# Symbols that Unicode calls alphabetic (Other_Alphabetic): circled, parenthesized and squared Latin letters.
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def slugify(text, sep="-"):
    """GitHub's slug of a heading's text content (the rendered text: no Markdown, no tags). github-slugger
    removes the other numbers, punctuation, symbols, separators and control/format/private/unassigned code
    points except the alphabetic ones; it passes all 78 cases of github-slugger's test/fixtures.json."""
    out = []
    for ch in text.lower():
        if ch == " ":
            out.append(sep)
        elif ch == "-" or unicodedata.category(ch).startswith(_KEEP_CATEGORIES) or \
                any(lo <= ord(ch) <= hi for lo, hi in _ALPHABETIC_SYMBOLS):
            out.append(ch)
    return "".join(out)


def unique(slug, used):
    """GitHub's suffixes for repeated slugs: the second 'x' is 'x-1', then 'x-2'; adds the result to used."""
    result, n = slug, 0
    while result in used:
        n += 1
        result = "%s-%d" % (slug, n)
    used.add(result)
    return result


# --- reading Markdown source -------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")


def _mask(text):
    return " " * len(text)


def source_lines(text):
    """The file's lines with fenced code blocks and HTML comments blanked out (same lengths, same numbering),
    and a flag per line: True for lines inside fenced code."""
    lines = text.split("\n")
    out, in_code = [], []
    fence = None
    in_comment = False
    for line in lines:
        if fence:
            m = _FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and \
                    not line.strip().lstrip(fence[0]):
                fence = None
            out.append(_mask(line))
            in_code.append(True)
            continue
        if not in_comment:
            m = _FENCE.match(line)
            if m and not (m.group(1)[0] == "`" and "`" in line.strip()[len(m.group(1)):]):
                fence = m.group(1)
                out.append(_mask(line))
                in_code.append(True)
                continue
        # HTML comments, possibly over several lines
        chars = list(line)
        i = 0
        while i < len(line):
            if in_comment:
                end = line.find("-->", i)
                stop = len(line) if end < 0 else end + 3
                for j in range(i, stop):
                    chars[j] = " "
                if end < 0:
                    break
                in_comment = False
                i = stop
            else:
                start = line.find("<!--", i)
                if start < 0:
                    break
                in_comment = True
                i = start
        out.append("".join(chars))
        in_code.append(False)
    return out, in_code


def mask_code_spans(line):
    """The line with inline code spans blanked out (same length)."""
    return _CODE_SPAN.sub(lambda m: _mask(m.group(0)), line)


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^ {0,3}([-*+][ \t]|\d{1,9}[.)][ \t]|>|#|\||<|$)|^ {4}")
_HTML_ID = re.compile(r"<a\s[^>]*?\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)


def heading_text(markdown_text):
    """The text content GitHub renders for a heading's Markdown: code spans keep their content, links their
    text, images nothing, emphasis markers and tags go, entities and backslash escapes are decoded."""
    parts = []
    pos = 0
    for m in _CODE_SPAN.finditer(markdown_text):
        parts.append(("md", markdown_text[pos:m.start()]))
        parts.append(("code", m.group(2).strip() if m.group(2).strip() else m.group(2)))
        pos = m.end()
    parts.append(("md", markdown_text[pos:]))
    out = []
    for kind, s in parts:
        if kind == "code":
            out.append(s)
            continue
        s = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", s)                  # images: no text
        s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)              # inline links: their text
        s = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", s)             # reference links
        s = re.sub(r"<[A-Za-z/!][^>]*>", "", s)                     # tags
        s = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", s)     # strong
        s = re.sub(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", r"\1", s)   # emphasis
        s = re.sub(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])", r"\1", s)
        s = re.sub(r"~~(?=\S)(.+?)(?<=\S)~~", r"\1", s)
        s = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", s)              # backslash escapes
        out.append(html.unescape(s))
    return "".join(out).strip()


def headings(text):
    """[(line number, level, text content)] of the file's ATX and setext headings."""
    lines, in_code = source_lines(text)
    result = []
    paragraph = []  # (line number, raw line) of the paragraph above, for setext headings
    for n, line in enumerate(lines, 1):
        if in_code[n - 1]:
            paragraph = []
            continue
        m = _ATX.match(line)
        if m:
            result.append((n, len(m.group(1)), heading_text(m.group(2) or "")))
            paragraph = []
            continue
        m = _SETEXT.match(line)
        if m and paragraph:
            level = 1 if m.group(1)[0] == "=" else 2
            result.append((paragraph[0][0], level,
                           heading_text("\n".join(raw.strip() for _, raw in paragraph))))
            paragraph = []
            continue
        if not line.strip():
            paragraph = []
        elif paragraph or not _NOT_PARAGRAPH.match(line):
            paragraph.append((n, line))
    return result


def anchors(text):
    """The anchors a file defines: its headings' slugs (with GitHub's -1, -2) and <a name/id> targets."""
    used = set()
    result = []
    for _, _, title in headings(text):
        result.append(unique(slugify(title), used))
    lines, _ = source_lines(text)
    for line in lines:
        result.extend(_HTML_ID.findall(line))
    return result


_INLINE_TARGET = re.compile(r"\]\(\s*(<[^>\n]*>|(?:[^\s()]|\([^\s()]*\))+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_HTML_ATTR = re.compile(r"\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^\s<>]*)>", re.IGNORECASE)
_BARE_URL = re.compile(r"(?<![(<\"'=\w])https?://[^\s<>()\[\]`\"']*[^\s<>()\[\]`\"'.,;:!?*_]", re.IGNORECASE)


def links(text):
    """[(line number, start, end, target)]: every link target, start:end its span in that line (without the
    <> of an angle-bracketed target). Code spans, fenced code and HTML comments are skipped."""
    lines, _ = source_lines(text)
    result = []
    for n, line in enumerate(lines, 1):
        line = mask_code_spans(line)
        found = []
        for m in _INLINE_TARGET.finditer(line):
            found.append((m.start(1), m.end(1)))
        m = _REF_DEF.match(line)
        if m:
            found.append((m.start(1), m.end(1)))
        for m in _HTML_ATTR.finditer(line):
            found.append((m.start(1), m.end(1)))
        for m in _AUTOLINK.finditer(line):
            found.append((m.start(1), m.end(1)))
        taken = list(found)
        for m in _BARE_URL.finditer(line):
            if not any(s <= m.start() < e for s, e in taken):
                found.append((m.start(), m.end()))
        for s, e in sorted(found):
            target = line[s:e]
            if target.startswith("<") and target.endswith(">"):
                s, e, target = s + 1, e - 1, target[1:-1]
            result.append((n, s, e, target))
    return result


def is_external(target):
    """A target with a scheme (https:, mailto:, ...) or a network path: not a file of the repository."""
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target)) or target.startswith("//")


# --- the MkDocs hook ---------------------------------------------------------------------------------------------

PYGMENTS_CSS = "css/pygments.css"


def on_config(config, **kwargs):
    """The toc extension's anchors: GitHub's slugs and repeat suffixes (Python-Markdown's own would turn
    "A: b" into "a-b" and a repeated heading into "x_1"). Code blocks: the Pygments stylesheet."""
    import markdown.extensions.toc as toc

    toc.unique = unique  # TocTreeprocessor.run calls the module's unique() for each heading without an id
    config["mdx_configs"].setdefault("toc", {})["slugify"] = slugify
    if PYGMENTS_CSS not in config["extra_css"]:
        config["extra_css"].append(PYGMENTS_CSS)
    return config


def on_page_content(html_text, page, **kwargs):
    """The page's title (navigation, <title>) as its first heading reads on the page: MkDocs 1.4 takes the
    heading's Markdown source, so "Benchmarks (`make bench`)" kept its backticks."""
    from mkdocs.utils import get_markdown_title

    m = re.search(r"<h1[^>]*>(.*?)</h1>", html_text, re.DOTALL)
    # only a title MkDocs took from the heading: not one the nav or the page's meta gives
    if m and page.title is not None and page.title == get_markdown_title(page.markdown):
        text = re.sub(r'<a class="headerlink"[^>]*>.*?</a>', "", m.group(1), flags=re.DOTALL)
        text = html.unescape(re.sub(r"<[^>]+>", "", text)).strip()
        if text:
            page.title = text
    return html_text


def on_post_build(config, **kwargs):
    import os

    path = os.path.join(config["site_dir"], PYGMENTS_CSS)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        from pygments.formatters import HtmlFormatter
        css = HtmlFormatter(style="default").get_style_defs(".highlight")
    except ImportError:  # no Pygments: code blocks stay plain
        css = "/* Pygments is not installed (Debian python3-pygments): code blocks are not highlighted */\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(css)
    _search_from_disk(config["site_dir"])


# The search plugin's main.js runs lunr in a Web Worker that fetches search_index.json: a page read from disk
# (file://) may do neither, so its search would fail. For file:// pages the search runs in the page instead, on
# lunr.js and the index loaded by <script> tags (search/search_index.js); over http nothing changes.
_WORKER_START = "if (!window.Worker) {\n  console.log('Web Worker API not supported');"
_FILE_SEARCH = """// scripts/docs_markdown.py (ETT): a page read from disk (file://) may not start a Web Worker nor fetch
// search_index.json, so there the search runs in the page, on scripts loaded by <script> tags.
function ettLoadScript (url, done) {
  var script = document.createElement('script');
  script.src = url;
  script.onload = done;
  script.onerror = function () { console.error('search: could not load ' + url); };
  document.head.appendChild(script);
}
if (location.protocol === 'file:') {
  var ettIndex = null, ettDocuments = {};
  var searchWorker = {postMessage: function (message) {
    if (!message.query || !ettIndex) return;
    var results = ettIndex.search(message.query).map(function (result) {
      var doc = ettDocuments[result.ref];
      doc.summary = doc.text.substring(0, 200);
      return doc;
    });
    onWorkerMessage({data: {results: results}});
  }};
  ettLoadScript(joinUrl(base_url, 'search/lunr.js'), function () {
    ettLoadScript(joinUrl(base_url, 'search/search_index.js'), function () {
      var data = window.ettSearchIndex;
      if (data.config && data.config.separator && data.config.separator.length) {
        lunr.tokenizer.separator = new RegExp(data.config.separator);
      }
      ettIndex = lunr(function () {
        this.field('title');
        this.field('text');
        this.ref('location');
        for (var i = 0; i < data.docs.length; i++) {
          this.add(data.docs[i]);
          ettDocuments[data.docs[i].location] = data.docs[i];
        }
      });
      onWorkerMessage({data: {config: data.config}});
      onWorkerMessage({data: {allowSearch: true}});
    });
  });
} else """


def _search_from_disk(site_dir):
    import logging
    import os

    main_js = os.path.join(site_dir, "search", "main.js")
    index = os.path.join(site_dir, "search", "search_index.json")
    if not os.path.exists(main_js) or not os.path.exists(index):
        return  # no search plugin
    with open(main_js, encoding="utf-8") as f:
        script = f.read()
    if "function ettLoadScript" in script:
        return  # done already
    if _WORKER_START not in script:
        logging.getLogger("mkdocs.hooks.docs_markdown").warning(
            "search/main.js is not MkDocs 1.4's: the search of pages read from disk (file://) stays off")
        return
    # main.js is a symlink into the mkdocs package on Debian when copied as such: write a new file.
    os.remove(main_js)
    with open(main_js, "w", encoding="utf-8") as f:
        f.write(script.replace(_WORKER_START, _FILE_SEARCH + _WORKER_START, 1))
    with open(index, encoding="utf-8") as f:
        data = f.read()
    with open(os.path.join(site_dir, "search", "search_index.js"), "w", encoding="utf-8") as f:
        f.write("window.ettSearchIndex = %s;\n" % data.strip())
