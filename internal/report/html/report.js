// ortel report charts: plain SVG drawn from the report JSON embedded in the
// page (script#ortel-data). No network, no libraries. After drawing, each
// figure[data-chart] gets data-ok="<marks drawn>" (or data-empty / data-error)
// and <body> gets data-rendered="ok" or "error" (with data-js-error), which
// the headless-browser test reads back.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var errors = [];
  function fail(msg) {
    errors.push(msg);
    document.body.setAttribute("data-js-error", errors.join(" | "));
  }
  window.addEventListener("error", function (e) { fail(String(e.message || e)); });

  var R = JSON.parse(document.getElementById("ortel-data").textContent);
  var W = 900, PAD = { l: 84, r: 18, t: 14, b: 40 };
  var PALETTE = ["#2f6fdb", "#d9822b", "#2f9e6b", "#c0392b", "#8e44ad", "#16a2b8", "#b8860b",
    "#e84393", "#6c5ce7", "#00897b", "#7f8c8d", "#a0522d", "#5f9ea0"];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { if (attrs.hasOwnProperty(k)) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function tip(node, s) { el("title", {}, node).textContent = s; }
  // svg adds an SVG of height h to plot, as wide (in user units) as the
  // plot is on screen, so text keeps its size in narrow columns. It sets W.
  function svg(plot, h) {
    W = Math.max(420, Math.round(plot.getBoundingClientRect().width) || 900);
    var s = el("svg", { viewBox: "0 0 " + W + " " + h, role: "img" });
    plot.appendChild(s);
    return s;
  }
  function fmtDur(s) {
    if (!isFinite(s)) return "?";
    var a = Math.abs(s);
    if (a === 0) return "0";
    if (a < 1e-6) return (s * 1e9).toFixed(0) + "ns";
    if (a < 1e-3) return (s * 1e6).toFixed(1) + "µs";
    if (a < 1) return (s * 1e3).toFixed(2) + "ms";
    return s.toFixed(2) + "s";
  }
  // fmtTick is a compact duration for axis ticks: 200ms, 1.5s, 35µs.
  function fmtTick(s) {
    var a = Math.abs(s);
    if (a === 0) return "0";
    if (a < 1e-3) return +(s * 1e6).toPrecision(3) + "µs";
    if (a < 1) return +(s * 1e3).toPrecision(3) + "ms";
    return +s.toPrecision(3) + "s";
  }
  function fmtSI(v, unit) {
    var a = Math.abs(v), p = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < p.length; i++) {
      if (a >= p[i][0]) return +(v / p[i][0]).toPrecision(3) + " " + p[i][1] + unit;
    }
    return +v.toPrecision(3) + " " + unit;
  }
  function fmtBytes(n) {
    var p = [[1 << 30, "GiB"], [1 << 20, "MiB"], [1 << 10, "KiB"]];
    for (var i = 0; i < p.length; i++) {
      if (n >= p[i][0]) return +(n / p[i][0]).toPrecision(3) + " " + p[i][1];
    }
    return n + " B";
  }
  function lin(d0, d1, r0, r1) {
    if (d1 === d0) { d1 = d0 + 1; }
    var f = function (v) { return r0 + (v - d0) / (d1 - d0) * (r1 - r0); };
    f.ticks = function (n) { return niceTicks(d0, d1, n); };
    return f;
  }
  function logScale(d0, d1, r0, r1) {
    var l0 = Math.log10(d0), l1 = Math.log10(d1);
    if (l1 === l0) { l1 = l0 + 1; }
    var f = function (v) { return r0 + (Math.log10(v) - l0) / (l1 - l0) * (r1 - r0); };
    f.ticks = function () {
      var out = [];
      for (var e = Math.floor(l0); e <= Math.ceil(l1); e++) {
        var v = Math.pow(10, e);
        if (v >= d0 * 0.999 && v <= d1 * 1.001) out.push(v);
      }
      return out;
    };
    return f;
  }
  function niceTicks(a, b, n) {
    var span = b - a;
    if (!(span > 0)) return [a];
    var step = Math.pow(10, Math.floor(Math.log10(span / n)));
    var err = span / n / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  // axes draws x and y axes with grid lines and labels.
  function axes(s, x, y, h, o) {
    var g = el("g", { "class": "axis" }, s), grid = el("g", { "class": "grid" }, s);
    s.insertBefore(grid, s.firstChild);
    el("line", { x1: PAD.l, x2: W - PAD.r, y1: h - PAD.b, y2: h - PAD.b }, g);
    el("line", { x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: h - PAD.b }, g);
    (o.xt || x.ticks(Math.max(3, Math.floor((W - PAD.l - PAD.r) / 90)))).forEach(function (v) {
      var px = x(v);
      el("line", { x1: px, x2: px, y1: h - PAD.b, y2: h - PAD.b + 4 }, g);
      el("line", { x1: px, x2: px, y1: PAD.t, y2: h - PAD.b }, grid);
      text(g, px, h - PAD.b + 16, o.xf(v), { "text-anchor": "middle" });
    });
    (o.yt || y.ticks(5)).forEach(function (v) {
      var py = y(v);
      el("line", { x1: PAD.l - 4, x2: PAD.l, y1: py, y2: py }, g);
      el("line", { x1: PAD.l, x2: W - PAD.r, y1: py, y2: py }, grid);
      text(g, PAD.l - 7, py + 4, o.yf(v), { "text-anchor": "end" });
    });
    text(g, (PAD.l + W - PAD.r) / 2, h - 6, o.xl, { "text-anchor": "middle" });
    text(g, 14, (PAD.t + h - PAD.b) / 2, o.yl, { "text-anchor": "middle", transform: "rotate(-90 14 " + ((PAD.t + h - PAD.b) / 2) + ")" });
  }
  // label places a text beside x, on its left near the right edge.
  function label(s, x, y, str, attrs) {
    var right = x > W - PAD.r - 110;
    return text(s, right ? x - 6 : x + 6, y, str, Object.assign({ "text-anchor": right ? "end" : "start" }, attrs || {}));
  }
  function vmark(s, x, h, str, color) {
    el("line", { x1: x, x2: x, y1: PAD.t, y2: h - PAD.b, stroke: color, "stroke-dasharray": "4 3" }, s);
    label(s, x, PAD.t + 10, str, { fill: color, "class": "lbl" });
  }
  // declutter hides each optional label (class lbl) whose box meets a
  // label already shown: axis text and legends first, then the optional
  // ones in drawing order. A hidden label stays in the page (its mark's
  // tooltip says the same).
  function declutter(svgEl) {
    var kept = [], opt = [];
    var ts = svgEl.querySelectorAll("text");
    for (var i = 0; i < ts.length; i++) {
      if (!ts[i].textContent.trim()) continue;
      ((ts[i].getAttribute("class") || "").indexOf("lbl") >= 0 ? opt : kept).push(ts[i]);
    }
    var boxes = kept.map(function (t) { return t.getBoundingClientRect(); });
    opt.forEach(function (t) {
      var b = t.getBoundingClientRect();
      var meets = boxes.some(function (k) { return b.left < k.right && k.left < b.right && b.top < k.bottom && k.top < b.bottom; });
      var outside = b.left < svgEl.getBoundingClientRect().left || b.right > svgEl.getBoundingClientRect().right;
      if (meets || outside) t.setAttribute("display", "none");
      else boxes.push(b);
    });
  }
  function samples() { return ((R.latency && R.latency.samples_s) || []).filter(isFinite).slice().sort(function (a, b) { return a - b; }); }
  // supported says whether the run's order-statistic interval can bound
  // percentile pct (reports without intervals: yes, as before).
  function supported(pct) {
    var iv = (R.latency && R.latency.intervals) || [];
    for (var i = 0; i < iv.length; i++) if (iv[i].percentile === pct) return iv[i].sufficient !== false;
    return true;
  }
  // pctLabel names a percentile marker; one the runs cannot support says so.
  function pctLabel(pct) { return "p" + pct + (supported(pct) ? "" : " (insufficient runs)"); }
  function quantile(sorted, q) {
    if (!sorted.length) return NaN;
    var h = q * (sorted.length - 1), lo = Math.floor(h), hi = Math.min(lo + 1, sorted.length - 1);
    return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
  }
  function empty(plot, msg) {
    var d = document.createElement("div");
    d.className = "empty";
    d.textContent = msg;
    plot.appendChild(d);
    return 0;
  }

  var charts = {};

  charts["latency-hist"] = function (plot) {
    var xs = samples();
    if (!xs.length) return empty(plot, "No latency samples in this report.");
    var h = 260, s = svg(plot, h), lo = xs[0], hi = xs[xs.length - 1];
    if (hi === lo) { hi = lo * 1.01 + 1e-9; }
    var nb = Math.max(10, Math.min(60, Math.ceil(Math.sqrt(xs.length)))), w = (hi - lo) / nb, counts = [];
    for (var i = 0; i < nb; i++) counts.push(0);
    xs.forEach(function (v) { counts[Math.min(nb - 1, Math.floor((v - lo) / w))]++; });
    var x = lin(lo, hi, PAD.l, W - PAD.r), y = lin(0, Math.max.apply(null, counts), h - PAD.b, PAD.t);
    axes(s, x, y, h, { xf: fmtTick, yf: String, xl: "latency", yl: "runs" });
    var n = 0;
    counts.forEach(function (c, i) {
      if (!c) return;
      var r = el("rect", { x: x(lo + i * w) + 0.5, y: y(c), width: Math.max(1, x(lo + (i + 1) * w) - x(lo + i * w) - 1), height: y(0) - y(c), fill: "#2f6fdb", "class": "mark" }, s);
      tip(r, fmtDur(lo + i * w) + "–" + fmtDur(lo + (i + 1) * w) + ": " + c + " runs");
      n++;
    });
    vmark(s, x(quantile(xs, 0.5)), h, "p50", "#2f9e6b");
    vmark(s, x(quantile(xs, 0.99)), h, pctLabel(99), "#c0392b");
    return n;
  };

  charts["latency-cdf"] = function (plot) {
    var xs = samples();
    if (!xs.length) return empty(plot, "No latency samples in this report.");
    var h = 260, s = svg(plot, h), lo = xs[0], hi = xs[xs.length - 1];
    if (hi === lo) { hi = lo * 1.01 + 1e-9; }
    var x = lin(lo, hi, PAD.l, W - PAD.r), y = lin(0, 1, h - PAD.b, PAD.t);
    axes(s, x, y, h, { xf: fmtTick, yf: function (v) { return Math.round(v * 100) + "%"; }, xl: "latency", yl: "share of runs ≤ latency" });
    var pts = [x(lo).toFixed(1) + "," + y(0).toFixed(1)];
    xs.forEach(function (v, i) {
      pts.push(x(v).toFixed(1) + "," + y(i / xs.length).toFixed(1));
      pts.push(x(v).toFixed(1) + "," + y((i + 1) / xs.length).toFixed(1));
    });
    el("polyline", { points: pts.join(" "), fill: "none", stroke: "#2f6fdb", "stroke-width": 2, "class": "mark" }, s);
    [[0.5, 50, "#2f9e6b"], [0.9, 90, "#d9822b"], [0.99, 99, "#c0392b"]].forEach(function (m) {
      var v = quantile(xs, m[0]);
      m[1] = pctLabel(m[1]);
      var c = el("circle", { cx: x(v), cy: y(m[0]), r: 4, fill: m[2] }, s);
      tip(c, m[1] + " " + fmtDur(v));
      label(s, x(v), y(m[0]) + 12, m[1] + " " + fmtDur(v), { fill: m[2] });
    });
    return xs.length;
  };

  charts["warmup"] = function (plot) {
    var c = (R.warmup && R.warmup.curve_s) || [];
    if (!c.length) return empty(plot, "No warm-up curve in this report.");
    var h = 240, s = svg(plot, h), lo = Math.min.apply(null, c), hi = Math.max.apply(null, c);
    var useLog = lo > 0 && hi / lo > 20;
    var x = lin(0, Math.max(1, c.length - 1), PAD.l, W - PAD.r);
    var y = useLog ? logScale(lo / 1.2, hi * 1.2, h - PAD.b, PAD.t) : lin(0, hi * 1.05, h - PAD.b, PAD.t);
    axes(s, x, y, h, { xf: function (v) { return String(Math.round(v)); }, yf: fmtTick, xl: "run (0 = first run)", yl: "latency" });
    var pts = c.map(function (v, i) { return x(i).toFixed(1) + "," + y(v).toFixed(1); });
    el("polyline", { points: pts.join(" "), fill: "none", stroke: "#2f6fdb", "stroke-width": 1.5 }, s);
    c.forEach(function (v, i) { tip(el("circle", { cx: x(i), cy: y(v), r: 2.5, fill: "#2f6fdb", "class": "mark" }, s), "run " + i + ": " + fmtDur(v)); });
    if (R.warmup.steady && R.warmup.steady_after_runs) vmark(s, x(R.warmup.steady_after_runs), h, "steady", "#2f9e6b");
    return c.length;
  };

  // kvcache: the KV cache held after each token of the first measured
  // generation (generation.kv_cache_bytes_per_step).
  charts["kvcache"] = function (plot) {
    var c = ((R.generation && R.generation.kv_cache_bytes_per_step) || []).filter(isFinite);
    if (!c.length) return empty(plot, "No per-token KV-cache sizes in this report.");
    var h = 240, s = svg(plot, h), lo = Math.min.apply(null, c), hi = Math.max.apply(null, c);
    var pad = Math.max((hi - lo) * 0.08, hi * 0.002, 1);
    var x = lin(1, Math.max(2, c.length), PAD.l, W - PAD.r), y = lin(Math.max(0, lo - pad), hi + pad, h - PAD.b, PAD.t);
    var xt = niceTicks(1, Math.max(2, c.length), Math.max(3, Math.floor((W - PAD.l - PAD.r) / 90))).filter(function (v) { return v === Math.round(v); });
    axes(s, x, y, h, { xt: xt, xf: String, yf: fmtBytes, xl: "after token (1 = the prefill)", yl: "KV cache" });
    var pts = c.map(function (v, i) { return x(i + 1).toFixed(1) + "," + y(v).toFixed(1); });
    el("polyline", { points: pts.join(" "), fill: "none", stroke: "#8e44ad", "stroke-width": 1.5 }, s);
    c.forEach(function (v, i) { tip(el("circle", { cx: x(i + 1), cy: y(v), r: 2.5, fill: "#8e44ad", "class": "mark" }, s), "after token " + (i + 1) + ": " + v + " B (" + fmtBytes(v) + ")"); });
    return c.length;
  };

  function opColors(types) {
    var m = {};
    types.forEach(function (t, i) { m[t] = PALETTE[i % PALETTE.length]; });
    return m;
  }

  charts["gantt"] = function (plot) {
    var tl = (R.operators && R.operators.timeline) || [];
    if (!tl.length) return empty(plot, "No operator timeline in this report.");
    var tot = {};
    tl.forEach(function (n) { tot[n.op_type] = (tot[n.op_type] || 0) + n.dur_s; });
    var types = Object.keys(tot).sort(function (a, b) { return tot[b] - tot[a]; });
    var lanes = types.slice(0, 14);
    if (types.length > 14) lanes.push("other");
    var laneOf = function (t) { var i = lanes.indexOf(t); return i < 0 ? lanes.length - 1 : i; };
    var colors = opColors(types);
    var end = 0;
    tl.forEach(function (n) { end = Math.max(end, n.start_s + n.dur_s); });
    var rowH = 18, h = PAD.t + lanes.length * rowH + PAD.b, s = svg(plot, h);
    var padL = 130, x = lin(0, end, padL, W - PAD.r);
    var g = el("g", { "class": "axis" }, s);
    niceTicks(0, end, Math.max(3, Math.floor((W - padL) / 90))).forEach(function (v) {
      el("line", { x1: x(v), x2: x(v), y1: PAD.t, y2: h - PAD.b, stroke: "#eef1f5" }, s);
      text(g, x(v), h - PAD.b + 16, fmtTick(v), { "text-anchor": "middle" });
    });
    text(g, (padL + W - PAD.r) / 2, h - 6, "time since the run started", { "text-anchor": "middle" });
    lanes.forEach(function (t, i) {
      text(s, padL - 8, PAD.t + i * rowH + 13, t, { "text-anchor": "end" });
      el("line", { x1: padL, x2: W - PAD.r, y1: PAD.t + (i + 1) * rowH, y2: PAD.t + (i + 1) * rowH, stroke: "#eef1f5" }, s);
    });
    var n = 0;
    tl.forEach(function (d) {
      var r = el("rect", { x: x(d.start_s), y: PAD.t + laneOf(d.op_type) * rowH + 2, width: Math.max(0.8, x(d.start_s + d.dur_s) - x(d.start_s)), height: rowH - 4, fill: colors[d.op_type], "class": "mark" }, s);
      tip(r, d.name + " (" + d.op_type + ", " + (d.provider || "").replace("ExecutionProvider", "") + ")\n" + fmtDur(d.dur_s) + " at " + fmtDur(d.start_s) +
        "\nin: " + (d.input_shapes || []).join(" ") + "\nout: " + (d.output_shapes || []).join(" "));
      n++;
    });
    return n;
  };

  charts["optypes"] = function (plot) {
    var bt = ((R.operators && R.operators.by_op_type) || []).slice(0, 20);
    if (!bt.length) return empty(plot, "No operator profile in this report.");
    var rowH = 20, h = PAD.t + bt.length * rowH + PAD.b, s = svg(plot, h), padL = 210;
    var mx = Math.max.apply(null, bt.map(function (t) { return t.share; }));
    var x = lin(0, mx * 1.4, padL, W - PAD.r);
    var g = el("g", { "class": "axis" }, s);
    niceTicks(0, mx * 1.4, 6).forEach(function (v) {
      el("line", { x1: x(v), x2: x(v), y1: PAD.t, y2: h - PAD.b, stroke: "#eef1f5" }, s);
      text(g, x(v), h - PAD.b + 16, Math.round(v * 100) + "%", { "text-anchor": "middle" });
    });
    text(g, (padL + W - PAD.r) / 2, h - 6, "share of operator time", { "text-anchor": "middle" });
    var colors = opColors(bt.map(function (t) { return t.op_type; }));
    bt.forEach(function (t, i) {
      var y0 = PAD.t + i * rowH;
      text(s, padL - 8, y0 + 14, t.op_type + " (" + (t.provider || "").replace("ExecutionProvider", "") + ")", { "text-anchor": "end" });
      var r = el("rect", { x: padL, y: y0 + 3, width: Math.max(1, x(t.share) - padL), height: rowH - 6, fill: colors[t.op_type], "class": "mark" }, s);
      tip(r, t.op_type + ": " + t.calls + " calls, " + fmtDur(t.total_s) + " total, mean " + fmtDur(t.mean_s));
      text(s, x(t.share) + 5, y0 + 14, (t.share * 100).toFixed(1) + "% · " + fmtDur(t.total_s / Math.max(1, R.operators.profiled_runs)) + "/run");
    });
    return bt.length;
  };

  charts["roofline"] = function (plot) {
    var a = R.analysis || {}, rf = a.roofline, pk = a.peaks;
    if (!rf) return empty(plot, "No roofline in this report.");
    var pts = [], types = [];
    (rf.ops || []).forEach(function (o) {
      if (o.intensity > 0 && o.flops_per_s > 0) pts.push(o);
    });
    (rf.by_op_type || []).forEach(function (t) {
      if (t.intensity > 0 && t.flops_per_s > 0) types.push(t);
    });
    if (!pts.length && !types.length) return empty(plot, "No operator with known, nonzero FLOPs to place.");
    var all = pts.concat(types);
    var xi = all.map(function (p) { return p.intensity; }), yi = all.map(function (p) { return p.flops_per_s; });
    var xmin = Math.min.apply(null, xi) / 2, xmax = Math.max.apply(null, xi) * 2;
    var ymin = Math.min.apply(null, yi) / 2, ymax = Math.max.apply(null, yi) * 2;
    if (pk) {
      xmin = Math.min(xmin, pk.ridge_flops_per_byte / 100); xmax = Math.max(xmax, pk.ridge_flops_per_byte * 10);
      ymax = Math.max(ymax, pk.flops_per_s * 2); ymin = Math.min(ymin, xmin * pk.bytes_per_s);
    }
    var h = 400, s = svg(plot, h);
    var x = logScale(xmin, xmax, PAD.l, W - PAD.r), y = logScale(ymin, ymax, h - PAD.b, PAD.t);
    axes(s, x, y, h, { xf: function (v) { return +v.toPrecision(3) + ""; }, yf: function (v) { return fmtSI(v, "FLOP/s"); }, xl: "arithmetic intensity (FLOP per byte moved)", yl: "achieved FLOP/s" });
    if (pk) {
      var r = pk.ridge_flops_per_byte;
      var x0 = Math.max(xmin, ymin / pk.bytes_per_s);
      var roof = [[x0, x0 * pk.bytes_per_s], [r, pk.flops_per_s], [xmax, pk.flops_per_s]];
      el("polyline", { points: roof.map(function (p) { return x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1); }).join(" "), fill: "none", stroke: "#1d2330", "stroke-width": 2 }, s);
      text(s, x(xmax) - 4, y(pk.flops_per_s) - 6, "peak " + fmtSI(pk.flops_per_s, "FLOP/s") + " (" + pk.flops_source + ")", { "text-anchor": "end", "class": "lbl" });
      text(s, x(Math.sqrt(xmin * r)) + 4, y(Math.sqrt(xmin * r) * pk.bytes_per_s) - 8, (pk.levels && pk.levels.length ? "DRAM " : "") + fmtSI(pk.bytes_per_s, "B/s") + " (" + pk.bytes_source + ")", { "class": "lbl" });
      vmark(s, x(r), h, "ridge " + (+r.toPrecision(3)), "#8a93a6");
      // Per-level bandwidth roofs, on the thread count the model ran with.
      var want = (R.config && R.config.intra_op_threads === 1) ? 1 : 0;
      var lv = (pk.levels || []).filter(function (l) { return l.threads === want && l.level !== "DRAM"; });
      lv.forEach(function (l, i) {
        var bw = l.bytes_per_s, lr = pk.flops_per_s / bw, lx0 = Math.max(xmin, ymin / bw);
        if (lr <= lx0) return;
        el("polyline", { points: [[lx0, lx0 * bw], [lr, pk.flops_per_s]].map(function (p) { return x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1); }).join(" "), fill: "none", stroke: "#4a6fa5", "stroke-width": 1.2, "stroke-dasharray": "5 3", "class": "level-roof" }, s);
        var lxl = lx0 * Math.pow(lr / lx0, 0.15 + 0.12 * i);
        text(s, x(lxl) - 4, y(lxl * bw) - 4, l.level + " " + fmtSI(bw, "B/s") + " (" + (l.cache_bytes ? fmtBytes(l.cache_bytes) : "") + ")", { "text-anchor": "end", fill: "#4a6fa5", "class": "lbl" });
      });
    }
    var colorOf = { compute: "#2f9e6b", memory: "#d9822b", overhead: "#b5446e", unknown: "#8a93a6" };
    var n = 0;
    pts.forEach(function (o) {
      var c = el("circle", { cx: x(o.intensity), cy: y(o.flops_per_s), r: 2, fill: colorOf[o.bound] || "#8a93a6", "fill-opacity": 0.45, "class": "mark" }, s);
      tip(c, o.name + " (" + o.op_type + ")\n" + (+o.intensity.toPrecision(3)) + " FLOP/B, " + fmtSI(o.flops_per_s, "FLOP/s") + ", " + fmtDur(o.dur_s) +
        (o.roof ? "\nvs " + o.roof + " roof" + (o.roof_share != null ? ": " + (o.roof_share * 100).toFixed(0) + "%" : "") : "") + (o.above_roof ? "\nabove it: " + o.above_roof : ""));
      n++;
    });
    types.forEach(function (t) {
      var c = el("circle", { cx: x(t.intensity), cy: y(t.flops_per_s), r: 4 + 26 * Math.sqrt(t.share), fill: colorOf[t.bound] || "#8a93a6", "fill-opacity": 0.35, stroke: colorOf[t.bound] || "#8a93a6", "class": "mark" }, s);
      tip(c, t.op_type + ": " + (t.share * 100).toFixed(1) + "% of time, " + (+t.intensity.toPrecision(3)) + " FLOP/B, " + fmtSI(t.flops_per_s, "FLOP/s") + ", " + t.bound + "-bound" + (t.roof_share != null ? ", " + (t.roof_share * 100).toFixed(0) + "% of roof" : ""));
      text(s, x(t.intensity) + 6, y(t.flops_per_s) + 4, t.op_type, { "font-weight": 600, "class": "lbl" });
      n++;
    });
    var lg = el("g", {}, s);
    [["compute-bound", "compute"], ["memory-bound", "memory"], ["unknown", "unknown"]].forEach(function (l, i) {
      el("circle", { cx: PAD.l + 14 + i * 120, cy: PAD.t + 10, r: 5, fill: colorOf[l[1]] }, lg);
      text(lg, PAD.l + 24 + i * 120, PAD.t + 14, l[0]);
    });
    text(lg, W - PAD.r - 4, h - PAD.b - 6, "0-FLOP data movement is not drawn on log axes", { "text-anchor": "end", fill: "#8a93a6", "class": "lbl" });
    return n;
  };

  charts["batch"] = function (plot) {
    var st = (R.batch_sweep && R.batch_sweep.steps) || [];
    if (!st.length) return empty(plot, "No batch sweep in this report.");
    var h = 260, s = svg(plot, h);
    var mx = Math.max.apply(null, st.map(function (b) { return b.items_per_s; }));
    var bw = (W - PAD.l - PAD.r) / st.length;
    var y = lin(0, mx * 1.15, h - PAD.b, PAD.t);
    axes(s, lin(0, st.length, PAD.l, W - PAD.r), y, h, { xt: [], xf: String, yf: function (v) { return +v.toPrecision(3) + ""; }, xl: "batch size", yl: "items/s" });
    var p99 = st.map(function (b) { return (b.latency_s && b.latency_s.p99) || 0; }), pmx = Math.max.apply(null, p99) || 1;
    var yl = lin(0, pmx * 1.15, h - PAD.b, PAD.t), line = [];
    st.forEach(function (b, i) {
      var x0 = PAD.l + i * bw;
      var r = el("rect", { x: x0 + bw * 0.2, y: y(b.items_per_s), width: bw * 0.6, height: y(0) - y(b.items_per_s), fill: b.batch === R.batch_sweep.best_batch ? "#2f9e6b" : "#2f6fdb", "class": "mark" }, s);
      tip(r, "batch " + b.batch + ": " + b.items_per_s.toFixed(1) + " items/s, p99 " + fmtDur(p99[i]));
      text(s, x0 + bw / 2, h - PAD.b + 16, String(b.batch), { "text-anchor": "middle" });
      line.push((x0 + bw / 2).toFixed(1) + "," + yl(p99[i]).toFixed(1));
    });
    el("polyline", { points: line.join(" "), fill: "none", stroke: "#c0392b", "stroke-width": 2 }, s);
    text(s, W - PAD.r - 4, PAD.t + 10, "red line: p99 latency (max " + fmtDur(pmx) + ")", { "text-anchor": "end", fill: "#c0392b" });
    return st.length;
  };

  // hardware draws the hardware section's time series (hardware.series: one
  // sample per tick), one small chart per reading: CPU, GPU, power, memory.
  charts["hardware"] = function (plot) {
    var ticks = (R.hardware && R.hardware.series) || [];
    var groups = [
      { title: "CPU utilization", unit: "%", scale: 100, lines: {} },
      { title: "GPU utilization", unit: "%", scale: 100, lines: {} },
      { title: "Power", unit: "W", scale: 1, lines: {} },
      { title: "Memory", unit: "MiB", scale: 1 / 1048576, lines: {} }
    ];
    function add(g, name, t, v) {
      if (v == null || !isFinite(v)) return;
      (g.lines[name] = g.lines[name] || []).push([t, v * g.scale]);
    }
    ticks.forEach(function (k) {
      add(groups[0], "host", k.t_s, k.cpu_utilization);
      add(groups[0], "process", k.t_s, k.process_cpu_utilization);
      for (var id in (k.gpu_utilization || {})) add(groups[1], id, k.t_s, k.gpu_utilization[id]);
      for (var pid in (k.power_w || {})) add(groups[2], pid, k.t_s, k.power_w[pid]);
      if (k.rss_bytes) add(groups[3], "process RSS", k.t_s, k.rss_bytes);
    });
    var n = 0;
    groups.forEach(function (g) {
      var names = Object.keys(g.lines);
      if (!names.length) return;
      var all = [];
      names.forEach(function (nm) { all = all.concat(g.lines[nm]); });
      var h = 170, s = svg(plot, h);
      var t0 = Math.min.apply(null, all.map(function (p) { return p[0]; })), t1 = Math.max.apply(null, all.map(function (p) { return p[0]; }));
      var hi = Math.max.apply(null, all.map(function (p) { return p[1]; }));
      if (g.unit === "%") hi = Math.max(hi, 100);
      var x = lin(t0, t1 > t0 ? t1 : t0 + 1, PAD.l, W - PAD.r), y = lin(0, (hi || 1) * 1.08, h - PAD.b, PAD.t);
      axes(s, x, y, h, { xf: function (v) { return +v.toPrecision(3) + "s"; }, yf: function (v) { return +v.toPrecision(3) + ""; }, xl: "time since the measured phase started", yl: g.unit });
      text(s, PAD.l + 6, PAD.t + 10, g.title, { "font-weight": 600 });
      names.forEach(function (nm, i) {
        var pts = g.lines[nm].map(function (p) { return x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1); });
        var line = el("polyline", { points: pts.join(" "), fill: "none", stroke: PALETTE[i % PALETTE.length], "stroke-width": 1.5, "class": "mark" }, s);
        tip(line, g.title + " " + nm);
        text(s, W - PAD.r - 4, PAD.t + 10 + 13 * i, nm, { "text-anchor": "end", fill: PALETTE[i % PALETTE.length] });
        n += pts.length;
      });
    });
    if (!n) return empty(plot, "The hardware section has no time series.");
    return n;
  };

  // series: one value per run with its interval, the level between change
  // points, and the change points (ortel history show). Data: R.charts[i],
  // i from the figure's data-index.
  charts["series"] = function (plot) {
    var c = (R.charts || [])[+plot.parentNode.getAttribute("data-index")];
    var pts = (c && c.points) || [];
    if (!pts.length) return empty(plot, "No runs in this series.");
    var fmt = c.unit === "s" ? fmtTick : c.unit === "By" ? fmtBytes : function (v) { return fmtSI(v, c.unit === "1/s" ? "/s" : c.unit || ""); };
    var lo = Infinity, hi = -Infinity;
    pts.forEach(function (p) {
      lo = Math.min(lo, p.v, p.lo != null ? p.lo : p.v);
      hi = Math.max(hi, p.v, p.hi != null ? p.hi : p.v);
    });
    var pad = (hi - lo) * 0.08 || hi * 0.1 || 1;
    var h = 300, s = svg(plot, h);
    var x = lin(-0.5, pts.length - 0.5, PAD.l, W - PAD.r), y = lin(Math.max(0, lo - pad), hi + pad, h - PAD.b, PAD.t);
    var xt = niceTicks(1, pts.length, Math.max(3, Math.floor((W - PAD.l - PAD.r) / 70))).filter(function (v) { return v === Math.round(v); }).map(function (v) { return v - 1; });
    axes(s, x, y, h, { xt: xt, xf: function (v) { return String(v + 1); }, yf: fmt, xl: "run (oldest first)", yl: c.caption || "" });
    var n = 0;
    (c.levels || []).forEach(function (l) {
      el("line", { x1: x(l.from - 0.4), x2: x(l.to - 0.6), y1: y(l.level), y2: y(l.level), stroke: "#7f8c8d", "stroke-width": 2, "class": "level" }, s);
    });
    (c.changes || []).forEach(function (cp) {
      vmark(s, x(cp.index - 0.5), h, cp.label, cp.worse ? "#c0392b" : "#2f9e6b");
      n++;
    });
    pts.forEach(function (p, i) {
      if (p.lo != null && p.hi != null) el("line", { x1: x(i), x2: x(i), y1: y(p.lo), y2: y(p.hi), stroke: "#9bb7ea", "stroke-width": 2 }, s);
      var dot = el("circle", { cx: x(i), cy: y(p.v), r: 3.5, fill: p.candidate ? "#fff" : "#2f6fdb", stroke: "#2f6fdb", "class": "mark" }, s);
      tip(dot, p.label + ": " + fmt(p.v) + (p.lo != null && p.hi != null ? " [" + fmt(p.lo) + ", " + fmt(p.hi) + "]" : ""));
      n++;
    });
    return n;
  };

  var figs = document.querySelectorAll("figure[data-chart]");
  for (var i = 0; i < figs.length; i++) {
    var fig = figs[i], name = fig.getAttribute("data-chart");
    try {
      var draw = charts[name];
      if (!draw) throw new Error("no chart named " + name);
      var n = draw(fig.querySelector(".plot"));
      var drawn = fig.querySelectorAll("svg");
      for (var k = 0; k < drawn.length; k++) declutter(drawn[k]);
      if (n > 0) fig.setAttribute("data-ok", String(n));
      else fig.setAttribute("data-empty", "true");
    } catch (e) {
      fig.setAttribute("data-error", String((e && e.message) || e));
      fail(name + ": " + ((e && e.message) || e));
    }
  }
  document.body.setAttribute("data-rendered", errors.length ? "error" : "ok");
  console.log("ortel-report: rendered " + figs.length + " charts, " + errors.length + " errors");
})();
