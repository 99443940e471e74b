#!/usr/bin/env python3
# report_dom_check.py: opens an HTML report in real headless Chromium (tests/support/browser_check.py's
# chromium()) and prints what a reader sees as one JSON object: readiness, the console log, the requests, the
# tick texts of every histogram and the timeline's code scale, how many bus values the timeline wrote, each
# elided label (its text, title and width, and whether the number beside it is on screen), and every table
# with an id as rows of {data-key: data-value}; then zooms the timeline to a fiftieth and counts its bus values
# again. A screenshot of the page (zoomed) goes to OUTDIR/report.png.
#
# usage: report_dom_check.py PAGE.html OUTDIR
import base64
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from browser_check import chromium, wait_until  # noqa: E402

READ_PAGE = """
const r = window.ettReport, out = {charts: Object.keys(r.charts)};
out.ticks = {};
for (const name of ["steps", "durations", "comparison"])
  if (r.charts[name]) out.ticks[name] = r.charts[name].axes[0]._values;
const tl = r.charts.timeline;
out.code_scale = tl && tl.axes[2] ? tl.axes[2]._values : [];
out.bus_values_drawn = tl ? tl.busValuesDrawn || 0 : 0;
out.labels = Array.from(document.querySelectorAll("span.label, #chart-timeline .u-legend .u-label")).map(e => {
  const rect = e.getBoundingClientRect(), row = e.closest("tr");
  const cell = row ? row.querySelector("td") : null;
  return {text: e.textContent, title: e.title || "", width: rect.width,
          value_right: cell ? cell.getBoundingClientRect().right : null,
          value_text: cell ? cell.textContent : null};
});
out.window_width = window.innerWidth;
out.tables = {};
for (const table of document.querySelectorAll("table[id]"))
  out.tables[table.id] = Array.from(table.querySelectorAll("tr")).filter(tr => tr.querySelector("[data-key]"))
    .map(tr => Object.fromEntries(Array.from(tr.querySelectorAll("[data-key]"))
      .map(c => [c.dataset.key, c.dataset.value])));
out.resources = performance.getEntriesByType("resource").map(e => e.name);
return out;
"""


def main():
    page, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(outdir, exist_ok=True)
    result = {}
    try:
        with chromium(os.path.join(outdir, "chromedriver.log"), os.path.join(outdir, "profile"),
                      window="1280,1600", ready_s=60) as driver:
            driver.s("POST", "/url", {"url": "file://" + page})
            result["ready"] = wait_until("data-ready", lambda: driver.script(
                "return document.documentElement.dataset.ready || ''"))
            result.update(driver.script(READ_PAGE))
            # Zoomed to a fiftieth of the capture, the bus lanes have room for their values.
            driver.script("const u = window.ettReport.charts.timeline, s = u.scales.x;"
                          "u.setScale('x', {min: s.min, max: s.min + (s.max - s.min) / 50})")
            result["bus_values_zoomed"] = driver.script("return window.ettReport.charts.timeline.busValuesDrawn || 0")
            png = base64.b64decode(driver.s("GET", "/screenshot"))
            result["screenshot"] = os.path.join(outdir, "report.png")
            with open(result["screenshot"], "wb") as f:
                f.write(png)
            result["console"] = [{"level": e.get("level"), "message": e.get("message")}
                                 for e in driver.s("POST", "/se/log", {"type": "browser"}) or []]
    except Exception as e:  # reported to the test, which fails with it
        result["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
