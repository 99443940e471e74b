#!/usr/bin/env python3
# browser_check.py: opens an HTML report in real headless Chromium through chromedriver's W3C WebDriver HTTP API
# (Python standard library only), waits for the page's data-ready attribute, zooms the timeline once with its
# "zoom in" button and once by dragging across it, switches the first scatter to its log axis, and prints what
# happened as one JSON object: the page's readiness, the timeline's x range after each step, screenshots of the
# timeline (PNG files in OUTDIR), the scatter's y distribution, the browser's console log and every network request
# the page made.
#
# usage: browser_check.py PAGE.html OUTDIR
import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference
PATIENCE_S = 180  # a busy 2-core machine can take long to start Chromium and lay out the page


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.session = None

    def call(self, method, path, body=None, timeout=PATIENCE_S):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read().decode() or "{}").get("value")
        except urllib.error.HTTPError as e:
            raise RuntimeError("%s %s: %s" % (method, path, e.read().decode(errors="replace")[:2000]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.session, path), body)

    def script(self, code, *args):
        return self.s("POST", "/execute/sync", {"script": code, "args": list(args)})

    def screenshot(self, element, path):
        png = base64.b64decode(self.s("GET", "/element/%s/screenshot" % element[ELEMENT]))
        with open(path, "wb") as f:
            f.write(png)
        return path


def wait_until(what, check, seconds=PATIENCE_S):
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError("timed out after %d s waiting for %s" % (seconds, what))
        time.sleep(0.2)


@contextlib.contextmanager
def chromium(log_path, profile_dir, window="1280,1000", ready_s=PATIENCE_S):
    """chromedriver on a free port (its output in log_path) and one headless Chromium session with the browser's
    console and network logs on; the session, chromedriver and the log are ended on leaving."""
    port = free_port()
    log = open(log_path, "w")
    server = subprocess.Popen(["chromedriver", "--port=%d" % port], stdout=log, stderr=subprocess.STDOUT)
    driver = Driver(port)
    try:
        def ready():
            try:
                return (driver.call("GET", "/status", timeout=5) or {}).get("ready")
            except (OSError, RuntimeError):
                return False
        wait_until("chromedriver", ready, ready_s)
        options = {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=" + window, "--hide-scrollbars", "--force-device-scale-factor=1",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--no-first-run", "--user-data-dir=" + profile_dir],
            "perfLoggingPrefs": {"enableNetwork": True, "enablePage": False},
        }
        caps = {"browserName": "chrome", "goog:chromeOptions": options,
                "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
                "timeouts": {"pageLoad": PATIENCE_S * 1000, "script": PATIENCE_S * 1000, "implicit": 0}}
        driver.session = driver.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
        yield driver
    finally:
        if driver.session:
            try:
                driver.s("DELETE", "")
            except Exception:
                pass
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def main():
    page, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    result = {}
    try:
        with chromium(os.path.join(outdir, "chromedriver.log"), os.path.join(outdir, "profile"),
                      ready_s=60) as driver:
            url = "file://" + page
            driver.s("POST", "/url", {"url": url})
            result["ready"] = wait_until("data-ready", lambda: driver.script(
                "return document.documentElement.dataset.ready || ''"))
            charts = driver.script("return window.ettReport ? Object.keys(window.ettReport.charts) : []")
            result["charts"] = charts
            result["legend"] = driver.script(
                "return Array.from(document.querySelectorAll('#chart-timeline .u-legend .u-series .u-label'))"
                ".map(e => e.textContent)")
            # uPlot draws tick labels on its canvas; the axis keeps the texts it drew.
            result["histogram_ticks"] = driver.script(
                "const u = window.ettReport.charts.durations; return u ? u.axes[0]._values : []")
            result["timeline_ticks"] = driver.script(
                "const u = window.ettReport.charts.timeline; return u ? u.axes[0]._values : []")
            # Hovering the middle of the timeline: the legend's values (the time, then each probe's code).
            result["hover_legend"] = driver.script(
                "const u = window.ettReport.charts.timeline; if (!u) return [];"
                "u.setCursor({left: u.over.getBoundingClientRect().width / 2, top: 5});"
                "return Array.from(document.querySelectorAll('#chart-timeline .u-legend .u-series .u-value'))"
                ".map(e => e.textContent)")
            x_range = "const s = window.ettReport.charts.timeline.scales.x; return [s.min, s.max]"
            timeline = driver.script("return document.getElementById('chart-timeline')")
            result["x_before"] = driver.script(x_range)
            result["before_png"] = driver.screenshot(timeline, os.path.join(outdir, "before.png"))

            button = driver.script("return document.getElementById('chart-timeline').previousElementSibling"
                                   ".querySelector('button[data-action=zoom-in]')")
            driver.s("POST", "/element/%s/click" % button[ELEMENT], {})
            result["x_after_button"] = driver.script(x_range)
            result["after_button_png"] = driver.screenshot(timeline, os.path.join(outdir, "after_button.png"))

            # A drag across the middle fifth of the plot: uPlot's own drag-to-zoom.
            box = driver.script("const r = window.ettReport.charts.timeline.over.getBoundingClientRect();"
                                "return [r.width, r.height]")
            over = driver.script("return window.ettReport.charts.timeline.over")
            pointer = [{"type": "pointerMove", "origin": over, "x": int(-box[0] * 0.1), "y": 0, "duration": 0},
                       {"type": "pointerDown", "button": 0},
                       {"type": "pointerMove", "origin": over, "x": int(-box[0] * 0.05), "y": 0, "duration": 100},
                       {"type": "pointerMove", "origin": over, "x": int(box[0] * 0.1), "y": 0, "duration": 200},
                       {"type": "pointerUp", "button": 0}]
            driver.s("POST", "/actions", {"actions": [
                {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": pointer}]})
            driver.s("DELETE", "/actions")
            result["x_after_drag"] = driver.script(x_range)
            result["after_drag_png"] = driver.screenshot(timeline, os.path.join(outdir, "after_drag.png"))

            # The duration scatter's "log axis, every point" box: the chart is drawn again on a log y axis.
            toggle = driver.script("return document.querySelector('label.toggle input')")
            if toggle:
                driver.s("POST", "/element/%s/click" % toggle[ELEMENT], {})
                result["scatter_log_distr"] = driver.script(
                    "return window.ettReport.charts['duration-time'].scales.y.distr")

            result["resources"] = driver.script(
                "return performance.getEntriesByType('resource').map(e => e.name)")
            result["ready_after"] = driver.script("return document.documentElement.dataset.ready || ''")
            result["console"] = [{"level": e.get("level"), "message": e.get("message")}
                                 for e in driver.s("POST", "/se/log", {"type": "browser"}) or []]
            # The requests of the report's document (the log also holds those of the new-tab page Chromium starts on).
            requests = []
            for entry in driver.s("POST", "/se/log", {"type": "performance"}) or []:
                message = json.loads(entry["message"])["message"]
                params = message.get("params", {})
                if message.get("method") == "Network.requestWillBeSent" and params.get("documentURL") == url:
                    requests.append(params["request"]["url"])
            result["page_url"] = url
            result["requests"] = requests
    except Exception as e:  # reported to the test, which fails with it
        result["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
