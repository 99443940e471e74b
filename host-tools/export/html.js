// html.js: builds the report's interactive charts with uPlot from the page's data (the JSON in #ett-data, written by
// html.cpp); sets data-ready on <html> to "1" when every chart is drawn, or to "error" when one failed.
(function () {
  "use strict";
  const root = document.documentElement;
  window.addEventListener("error", function () {
    root.dataset.ready = "error";
  });
  const data = JSON.parse(document.getElementById("ett-data").textContent);
  // Lane colours: no red, which marks the stalls.
  const colors = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
  const charts = {};
  window.ettReport = {charts: charts, data: data};

  // The unit a range of nanoseconds reads best in; axis labels name it.
  function unitFor(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return {name: "s", ns: 1e9};
    if (a >= 1e6) return {name: "ms", ns: 1e6};
    if (a >= 1e3) return {name: "µs", ns: 1e3};
    return {name: "ns", ns: 1};
  }
  // A number in 4 significant digits; "" for the ticks a log axis leaves unlabelled (null).
  function num(x) {
    if (x == null || !isFinite(x)) return "";
    if (x === 0) return "0";
    return String(parseFloat(x.toPrecision(4)));
  }
  // A step of 1, 2 or 5 times a power of ten, at least `raw`: ticks at round values.
  function niceStep(raw) {
    if (!(raw > 0)) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const steps = [1, 2, 5, 10];
    for (let i = 0; i < steps.length; ++i) if (steps[i] * power >= raw * (1 - 1e-9)) return steps[i] * power;
    return 10 * power;
  }
  // A label cut to `max` characters with "…" (the whole of it goes in a title, shown on hover).
  const kLabelChars = 40;
  function elide(text, max) {
    return text.length <= max ? text : text.slice(0, max - 1) + "…";
  }
  // `ett report --time utc`: a capture time (ns from its start) as UTC time of day with `digits` decimals.
  function utcOfDay(ns, digits) {
    const u = data.utc;
    const total = u.ns + ns * u.scale;
    let second = u.second + Math.floor(total / 1e9);
    let fraction = Math.round(((total % 1e9) + 1e9) % 1e9 / Math.pow(10, 9 - digits));
    if (fraction >= Math.pow(10, digits)) {
      second += 1;
      fraction = 0;
    }
    const text = new Date(second * 1000).toISOString().slice(11, 19);
    return digits > 0 ? text + "." + String(fraction).padStart(digits, "0") : text;
  }
  // Axis ticks of a time axis in `unit`: its numbers, or with data.utc UTC time of day to the unit's digits.
  function timeTicks(unit) {
    if (!data.utc) return function (u, s) { return s.map(num); };
    const digits = unit.ns >= 1e9 ? 3 : unit.ns >= 1e6 ? 6 : 9;
    return function (u, s) { return s.map(function (v) { return v == null ? "" : utcOfDay(v * unit.ns, digits); }); };
  }
  // The x axis of a time in `unit`; UTC ticks are long, so they are set further apart.
  function timeAxis(text, unit) {
    if (!data.utc) return {label: text + " (" + unit.name + ")", values: timeTicks(unit)};
    return {label: text + ", UTC time of day (time 0 = " + data.utc.time0 + ")", values: timeTicks(unit), space: 140};
  }
  function chartWidth(el) {
    return Math.max(500, Math.min(1400, el.clientWidth || 1000));
  }

  // Zoom and pan on x for every chart: drag to zoom (uPlot), the wheel zooms around the pointer, shift+wheel or
  // shift+drag pans, double-click or "reset" shows everything; the toolbar buttons do the same.
  function setX(u, min, max) {
    if (!(max > min)) return;
    u.setScale("x", {min: min, max: max});
  }
  function zoomBy(u, factor, at) {
    const sc = u.scales.x, span = sc.max - sc.min;
    const center = at === undefined ? (sc.min + sc.max) / 2 : at;
    const frac = (center - sc.min) / span;
    const next = span * factor;
    setX(u, center - frac * next, center - frac * next + next);
  }
  function panBy(u, fraction) {
    const sc = u.scales.x, shift = (sc.max - sc.min) * fraction;
    setX(u, sc.min + shift, sc.max + shift);
  }
  function interactive(u, name, full, el) {
    const bar = document.createElement("div");
    bar.className = "toolbar";
    const buttons = [
      ["zoom in", "+", function () { zoomBy(u, 0.5); }],
      ["zoom out", "−", function () { zoomBy(u, 2); }],
      ["pan left", "◀", function () { panBy(u, -0.25); }],
      ["pan right", "▶", function () { panBy(u, 0.25); }],
      ["reset", "reset", function () { setX(u, full[0], full[1]); }],
    ];
    buttons.forEach(function (b) {
      const button = document.createElement("button");
      button.type = "button";
      button.title = b[0];
      button.textContent = b[1];
      button.dataset.action = b[0].replace(" ", "-");
      button.addEventListener("click", b[2]);
      bar.appendChild(button);
    });
    const hint = document.createElement("span");
    hint.className = "hint";
    hint.textContent = "drag to zoom, wheel to zoom, shift+wheel or shift+drag to pan, double-click to reset";
    bar.appendChild(hint);
    el.parentNode.insertBefore(bar, el);
    u.over.addEventListener("wheel", function (e) {
      e.preventDefault();
      const rect = u.over.getBoundingClientRect();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        panBy(u, (e.deltaX || e.deltaY) / rect.width);
      } else {
        zoomBy(u, e.deltaY < 0 ? 0.75 : 1 / 0.75, u.posToVal(e.clientX - rect.left, "x"));
      }
    }, {passive: false});
    u.over.addEventListener("mousedown", function (e) {
      if (!e.shiftKey && e.button !== 1) return;
      e.stopPropagation();
      e.preventDefault();
      const rect = u.over.getBoundingClientRect(), start = e.clientX, min = u.scales.x.min, max = u.scales.x.max;
      function move(m) {
        const shift = -(m.clientX - start) / rect.width * (max - min);
        setX(u, min + shift, max + shift);
      }
      function up() {
        document.removeEventListener("mousemove", move);
        document.removeEventListener("mouseup", up);
      }
      document.addEventListener("mousemove", move);
      document.addEventListener("mouseup", up);
    }, true);
    charts[name] = u;
  }

  // Lanes of the timeline: the step line between kLaneLow and kLaneLow + kLaneSpan of a lane's height, the
  // bus values above it.
  const kLaneLow = 0.08, kLaneSpan = 0.56, kLaneText = 0.82;
  // The legend's labels cut to kLabelChars, the whole of each in its title.
  function titleLegend(el, full) {
    el.querySelectorAll(".u-legend .u-series").forEach(function (row, i) {
      const label = row.querySelector(".u-label");
      if (!label || full[i] == null || full[i] === "") return;
      label.title = full[i];
      label.textContent = elide(full[i], kLabelChars);
    });
  }

  function timeline() {
    const el = document.getElementById("chart-timeline");
    const tl = data.timeline;
    if (!el || !tl) return;
    const unit = unitFor(Math.max(Math.abs(tl.t0), Math.abs(tl.t1)));
    const lanes = tl.probes.length;
    // One x column for all probes (uPlot's aligned data); a probe is null where another probe changed.
    const index = new Map();
    const xs = [tl.t0, tl.t1];
    tl.probes.forEach(function (p) { p.t.forEach(function (t) { xs.push(t); }); });
    xs.sort(function (a, b) { return a - b; });
    const unique = xs.filter(function (t, i) { return i === 0 || t !== xs[i - 1]; });
    unique.forEach(function (t, i) { index.set(t, i); });
    const columns = [unique.map(function (t) { return t / unit.ns; })];
    const codes = [null];
    const series = [{label: data.utc ? "UTC" : "time (" + unit.name + ")",
                     value: function (u, v) { return v == null ? "–" : data.utc ? utcOfDay(v * unit.ns, 9) : num(v); }}];
    tl.probes.forEach(function (p, lane) {
      const ys = new Array(unique.length).fill(null), cs = new Array(unique.length).fill(null);
      const base = lanes - 1 - lane, scale = kLaneSpan / p.full_code;
      p.t.forEach(function (t, i) {
        ys[index.get(t)] = base + kLaneLow + p.c[i] * scale;
        cs[index.get(t)] = p.c[i];
      });
      // Hovering shows the code each probe holds at that time: from its latest change at or before it ("–"
      // before its first), not only on the probe that changed there.
      let held = null;
      for (let i = 0; i < cs.length; ++i) {
        if (cs[i] == null) cs[i] = held;
        else held = cs[i];
      }
      // The probe keeps its last code to the end of the capture.
      if (p.t.length) {
        ys[unique.length - 1] = ys[unique.length - 1] == null ? base + kLaneLow + p.c[p.c.length - 1] * scale
                                                              : ys[unique.length - 1];
      }
      columns.push(ys);
      codes.push(cs);
      series.push({
        label: p.name,
        stroke: colors[lane % colors.length],
        width: 1.5,
        spanGaps: true,
        paths: uPlot.paths.stepped({align: 1}),
        value: function (u, v, si, i) {
          return i == null || codes[si][i] == null ? "–" : "code 0x" + codes[si][i].toString(16);
        },
      });
    });
    const names = tl.probes.map(function (p) { return elide(p.name, 28); });
    const longest = names.reduce(function (m, n) { return Math.max(m, n.length); }, 0);
    // The code scale on the right: each lane's lowest and highest code (1-bit lanes read 0 and 1).
    const scaleSplits = [], scaleTexts = [];
    tl.probes.forEach(function (p, lane) {
      const base = lanes - 1 - lane;
      scaleSplits.push(base + kLaneLow, base + kLaneLow + kLaneSpan);
      scaleTexts.push(p.full_code > 1 ? "0x0" : "0", p.full_code > 1 ? "0x" + p.full_code.toString(16) : "1");
    });
    const opts = {
      width: chartWidth(el),
      height: Math.max(160, 56 * lanes + 70),
      scales: {x: {time: false}, y: {auto: false, range: [0, lanes]}},
      axes: [
        timeAxis("time since capture start", unit),
        {
          size: Math.min(280, 24 + 8 * longest),
          splits: function () { return names.map(function (n, i) { return lanes - 1 - i + 0.5; }); },
          values: function (u, splits) { return splits.map(function (s) { return names[lanes - 1 - Math.floor(s)]; }); },
          grid: {show: false},
        },
        {
          side: 1,
          size: 44,
          label: "code",
          splits: function () { return scaleSplits; },
          values: function () { return scaleTexts; },
          grid: {show: true, stroke: "#eee", width: 1},
        },
      ],
      series: series,
      hooks: {
        draw: [drawBusValues, function (u) {
          // The capture's stalls: a red band across every lane, at least 2 px wide so that a short one shows.
          const ctx = u.ctx, box = u.bbox;
          ctx.save();
          ctx.beginPath();
          ctx.rect(box.left, box.top, box.width, box.height);
          ctx.clip();
          ctx.fillStyle = "rgba(214, 39, 40, 0.35)";
          tl.stalls.forEach(function (s) {
            const x0 = u.valToPos(s[0] / unit.ns, "x", true), x1 = u.valToPos((s[0] + s[1]) / unit.ns, "x", true);
            ctx.fillRect(x0, box.top, Math.max(2 * (window.devicePixelRatio || 1), x1 - x0), box.height);
          });
          ctx.restore();
        }],
      },
    };
    // A lane of several bits is a bus, as in a logic analyser's view: its code, in hex, written over every
    // stretch wide enough to hold it.
    function drawBusValues(u) {
      const ctx = u.ctx, box = u.bbox, ratio = window.devicePixelRatio || 1;
      let drawn = 0;
      ctx.save();
      ctx.beginPath();
      ctx.rect(box.left, box.top, box.width, box.height);
      ctx.clip();
      ctx.font = Math.round(11 * ratio) + "px sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      tl.probes.forEach(function (p, lane) {
        if (p.full_code <= 1) return;
        const y = u.valToPos(lanes - 1 - lane + kLaneText, "y", true);
        ctx.fillStyle = colors[lane % colors.length];
        for (let i = 0; i < p.t.length; ++i) {
          const x0 = Math.max(box.left, u.valToPos(p.t[i] / unit.ns, "x", true));
          const end = i + 1 < p.t.length ? p.t[i + 1] : tl.t1;
          const x1 = Math.min(box.left + box.width, u.valToPos(end / unit.ns, "x", true));
          const text = "0x" + p.c[i].toString(16);
          if (x1 - x0 < ctx.measureText(text).width + 6 * ratio) continue;
          ctx.fillText(text, (x0 + x1) / 2, y);
          ++drawn;
        }
      });
      ctx.restore();
      u.busValuesDrawn = drawn;
    }
    const u = new uPlot(opts, columns, el);
    interactive(u, "timeline", [columns[0][0], columns[0][columns[0].length - 1]], el);
    titleLegend(el, [""].concat(tl.probes.map(function (p) { return p.name; })));
  }

  // A histogram: bars for one series, filled steps for several (a comparison); the open-ended last bin (tail) is
  // shaded and labelled "≥ X" on the axis, so that its width says nothing it does not know.
  function histogram(id, h) {
    const el = document.getElementById(id);
    if (!el || !h || !h.edges.length) return;
    const n = h.edges.length;
    const unit = unitFor(h.edges[h.tail ? Math.max(0, n - 2) : n - 1][1]);
    const multi = h.series.length > 1;
    const xs = [];
    for (let i = 0; i < n; ++i) xs.push(multi ? i : i + 0.5);
    if (multi) xs.push(n);
    const columns = [xs];
    const series = [{
      label: h.x_label + " (" + unit.name + ")",
      value: function (u, v, si, i) {
        if (i == null || i >= n) return "–";
        const e = h.edges[i];
        return h.tail && i === n - 1 ? "≥ " + num(e[0] / unit.ns) : num(e[0] / unit.ns) + " – " + num(e[1] / unit.ns);
      },
    }];
    h.series.forEach(function (s, k) {
      const values = s.values.slice();
      if (multi) values.push(values[values.length - 1]);
      columns.push(values);
      series.push({
        label: s.label,
        stroke: s.color,
        fill: s.color + (multi ? "40" : "c0"),
        width: multi ? 1.5 : 0,
        paths: multi ? uPlot.paths.stepped({align: 1}) : uPlot.paths.bars({size: [0.9, 60], align: 0}),
        points: {show: false},
        value: function (u, v) { return v == null ? "–" : num(v); },
      });
    });
    // x is the bin index; the body's bins are equal, so a value maps to a fractional index. Ticks go at
    // round values (a step of 1, 2 or 5 times a power of ten in the axis's unit) wherever the bins lie.
    const body = h.tail ? n - 1 : n;
    const lo = h.edges[0][0], hi = h.edges[Math.max(0, body - 1)][1];
    const width = body > 0 && hi > lo ? (hi - lo) / body : 1;
    function indexOf(ns) { return (ns - lo) / width; }
    function valueAt(index) { return lo + Math.min(index, body) * width; }
    let tickStep = 1;
    const opts = {
      width: chartWidth(el),
      height: 260,
      // x is the bin index (bar i is centred on i + 0.5): a range snaps to whole bins.
      scales: {x: {time: false, range: function (u, min, max) {
        return [Math.max(0, Math.floor(min)), Math.min(n, Math.max(Math.floor(min) + 1, Math.ceil(max)))];
      }},
               y: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }}},
      axes: [
        {
          label: h.x_label + " (" + unit.name + ")" + (h.tail ? "; the last bin is open-ended" : ""),
          splits: function (u, ai, min, max) {
            const out = [];
            const from = valueAt(Math.max(0, min)) / unit.ns, to = valueAt(Math.min(body, max)) / unit.ns;
            const step = niceStep((to - from) / 7);
            tickStep = step;
            for (let k = Math.ceil(from / step - 1e-9); k * step <= to * (1 + 1e-12) + 1e-12; ++k) {
              const at = indexOf(k * step * unit.ns);
              if (at >= min - 1e-9 && at <= Math.min(max, body) + 1e-9) out.push(at);
            }
            // The open-ended bin is labelled "≥ X" at its middle.
            if (h.tail && n - 0.5 >= min && n - 0.5 <= max) out.push(n - 0.5);
            return out;
          },
          values: function (u, splits) {
            return splits.map(function (s) {
              if (h.tail && s === n - 0.5) return "≥ " + num(h.edges[n - 1][0] / unit.ns);
              const v = valueAt(s) / unit.ns;
              return (Math.round(v / tickStep) * tickStep).toFixed(Math.max(0, -Math.floor(Math.log10(tickStep))));
            });
          },
        },
        {label: h.y_label, size: 70, values: function (u, s) { return s.map(num); }},
      ],
      series: series,
      hooks: {
        drawClear: [function (u) {
          if (!h.tail) return;
          const ctx = u.ctx, box = u.bbox;
          const x0 = Math.max(box.left, u.valToPos(n - 1, "x", true)), x1 = Math.min(box.left + box.width, u.valToPos(n, "x", true));
          if (x1 <= x0) return;
          ctx.save();
          ctx.fillStyle = "rgba(255, 127, 14, 0.15)";
          ctx.fillRect(x0, box.top, x1 - x0, box.height);
          ctx.restore();
        }],
      },
    };
    const u = new uPlot(opts, columns, el);
    interactive(u, id.replace("chart-", ""), [0, n], el);
  }

  // A scatter that stays readable with a few outliers: by default the y axis ends just above the bulk and the
  // points past it sit on the top edge (orange, counted in the legend); "log axis" shows every point on a log scale.
  function scatter(id, s) {
    const el = document.getElementById(id);
    if (!el || !s || !s.x.length) return;
    const allPositive = s.y.every(function (v) { return v > 0; });
    let log = false;
    const box = document.createElement("label");
    box.className = "toggle";
    const check = document.createElement("input");
    check.type = "checkbox";
    check.disabled = !allPositive;
    box.appendChild(check);
    box.appendChild(document.createTextNode(" log axis, every point" + (s.clip_ns == null ? "" : " (" + s.above + " above the clipped view)")));
    el.parentNode.insertBefore(box, el);
    function build() {
      const top = log ? null : s.clip_ns;
      const yMax = top == null ? s.y.reduce(function (m, v) { return Math.max(m, v); }, -Infinity) : top;
      const unit = unitFor(yMax);
      const xUnit = s.x_time ? unitFor(s.x[s.x.length - 1]) : null;
      const xs = s.x.map(function (v) { return xUnit ? v / xUnit.ns : v; });
      const plain = [], stalled = [], above = [];
      let lo = Infinity;
      s.y.forEach(function (v, i) {
        const clipped = top != null && v > top;
        const y = (clipped ? top : v) / unit.ns;
        plain.push(!clipped && !s.stalled[i] ? y : null);
        stalled.push(!clipped && s.stalled[i] ? y : null);
        above.push(clipped ? y : null);
        if (!clipped) lo = Math.min(lo, v / unit.ns);
      });
      const hi = yMax / unit.ns;
      const columns = [xs, plain, stalled];
      const series = [
        {label: s.x_label + (xUnit ? " (" + xUnit.name + ")" : ""), value: function (u, v) { return v == null ? "–" : num(v); }},
        {label: s.y_label, stroke: "#1f77b4", fill: "#1f77b4", paths: function () { return null; }, points: {show: true, size: 4}},
        {label: "touched by a stall", stroke: "#d62728", fill: "#d62728", paths: function () { return null; }, points: {show: true, size: 5}},
      ];
      if (top != null) {
        columns.push(above);
        series.push({label: s.above + " above the view (longest " + num(s.max_ns / unit.ns) + " " + unit.name + ")",
                     stroke: "#ff7f0e", fill: "#ff7f0e", paths: function () { return null; }, points: {show: true, size: 8}});
      }
      if (s.line) {
        columns.push(xs.map(function (x) { return (s.line[0] + s.line[1] * x) / unit.ns; }));
        series.push({label: "fit", stroke: "#2ca02c", width: 2, points: {show: false}});
      }
      series.forEach(function (se, i) {
        if (i > 0 && !se.value) se.value = function (u, v) { return v == null ? "–" : num(v); };
      });
      const pad = (hi - lo) * 0.05 || Math.abs(hi) * 0.05 || 1;
      const opts = {
        width: chartWidth(el),
        height: 300,
        scales: {x: {time: false}, y: log ? {distr: 3} : {auto: false, range: [lo - pad, hi + pad]}},
        axes: [
          xUnit ? timeAxis(s.x_label, xUnit) : {label: s.x_label, values: function (u, v) { return v.map(num); }},
          {label: s.y_label + " (" + unit.name + ")" + (log ? ", log scale" : top != null ? ", clipped at " + num(hi) : ""),
           size: 70, values: function (u, v) { return v.map(num); }},
        ],
        series: series,
      };
      if (charts[id.replace("chart-", "")]) charts[id.replace("chart-", "")].destroy();
      const u = new uPlot(opts, columns, el);
      const full = [xs[0], xs[xs.length - 1] > xs[0] ? xs[xs.length - 1] : xs[0] + 1];
      if (!el.previousSibling || !el.previousSibling.classList || !el.previousSibling.classList.contains("toolbar")) {
        interactive(u, id.replace("chart-", ""), full, el);
      } else {
        charts[id.replace("chart-", "")] = u;
      }
    }
    check.addEventListener("change", function () {
      log = check.checked;
      // The toolbar acts on the chart through charts[...]: rebuild and rebind.
      const bar = el.previousSibling;
      if (bar && bar.classList && bar.classList.contains("toolbar")) bar.remove();
      build();
    });
    build();
  }

  try {
    timeline();
    if (data.steps) histogram("chart-steps", data.steps);
    if (data.durations) histogram("chart-durations", data.durations);
    if (data.duration_time) scatter("chart-duration-time", data.duration_time);
    if (data.fit) scatter("chart-fit", data.fit);
    if (data.comparison) histogram("chart-comparison", data.comparison);
    if (root.dataset.ready !== "error") root.dataset.ready = "1";
  } catch (e) {
    root.dataset.ready = "error";
    console.error("ett report: " + e);
  }
})();
