// tracedoc view: the timeline and report panels of one self-contained page.
//
// Data comes from the JSON element #tracedoc-data (report/html_view_writer.cpp). Every name in it
// is untrusted text from a trace: it only ever reaches the page through textContent or canvas
// fillText, never as markup.
//
// Drawing: each track row draws its exactly embedded events ("raw") when the view lies inside the
// raw window and the row holds few enough of them for the pixels; otherwise it draws the level of
// detail whose buckets are at least a pixel wide (levels are pairs of buckets merged, built on first
// use). Events narrower than a pixel are merged into one rectangle per pixel run, coloured by the
// longest of them, so a frame costs O(visible events) at worst and O(pixels) zoomed out.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("tracedoc-data").textContent);

  // ---- decoding -----------------------------------------------------------------------------
  const B64 = new Uint8Array(128);
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("").forEach((c, i) => { B64[c.charCodeAt(0)] = i; });
  function bytes(s) {
    let n = (s.length / 4) * 3;
    if (s.endsWith("==")) n -= 2; else if (s.endsWith("=")) n -= 1;
    const out = new Uint8Array(n);
    let o = 0;
    for (let i = 0; i < s.length; i += 4) {
      const v = (B64[s.charCodeAt(i)] << 18) | (B64[s.charCodeAt(i + 1)] << 12) | (B64[s.charCodeAt(i + 2)] << 6) | B64[s.charCodeAt(i + 3)];
      if (o < n) out[o++] = v >> 16;
      if (o < n) out[o++] = (v >> 8) & 255;
      if (o < n) out[o++] = v & 255;
    }
    return out.buffer;
  }
  const f64 = (s) => new Float64Array(bytes(s));
  const u32 = (s) => new Uint32Array(bytes(s));
  const u16 = (s) => new Uint16Array(bytes(s));
  const u8 = (s) => new Uint8Array(bytes(s));

  const names = data.names, details = data.details, palette = data.palette, categories = data.categories;
  const span = Math.max(1, data.span_ns);
  const lodBuckets = data.lod.buckets, bucketNs = data.lod.bucket_ns;

  const tracks = data.tracks.map((t, index) => {
    const tr = { index, group: t.group, label: t.label, kind: t.kind, device: t.device, rows: t.rows, events: t.events, n: t.n,
      s: f64(t.s), d: f64(t.d), c: f64(t.c), name: u32(t.name), detail: u32(t.detail), color: u16(t.color), depth: u8(t.depth), cat: u8(t.cat),
      rowIdx: [], rowMaxEnd: [], lod: [] };
    // Per depth row: its events in start order, with the running maximum of their ends, so the
    // first event visible at time t is a binary search even when rows hold long and short events.
    const perRow = [];
    for (let r = 0; r < tr.rows; r++) perRow.push([]);
    for (let i = 0; i < tr.n; i++) perRow[tr.depth[i]].push(i);
    for (let r = 0; r < tr.rows; r++) {
      const idx = Uint32Array.from(perRow[r]);
      const maxEnd = new Float64Array(idx.length);
      let m = -Infinity;
      for (let k = 0; k < idx.length; k++) { m = Math.max(m, tr.s[idx[k]] + tr.d[idx[k]]); maxEnd[k] = m; }
      tr.rowIdx.push(idx);
      tr.rowMaxEnd.push(maxEnd);
      tr.lod.push(null);
    }
    return tr;
  });
  for (const r of data.lod.rows) {
    tracks[r.track].lod[r.row] = { levels: [{ b: u16(r.b), busy: u16(r.busy), color: u16(r.color), count: u32(r.count) }] };
  }
  const utilization = data.utilization.map((u) => ({ label: u.label, group: u.group, share: u.share, busy: u16(u.busy) }));
  const memory = data.memory.map((m) => ({ label: m.label, group: m.group, max: m.max, maxTime: m.max_time, peak: f64(m.peak) }));
  // GPU metrics the GPU sampled: time-weighted mean per bucket, -1 where nothing was sampled.
  const metrics = (data.metrics || []).map((m) => ({ label: m.label, unit: m.unit, group: m.group, max: m.max, mean: f64(m.mean) }));
  const raw = data.raw;
  // CPU samples: a lane of ticks under each sampled thread (every sample, bucketed), and the
  // samples of the embedded window with their stacks, for the flame graph.
  const S = data.samples || { total: 0, embedded: 0, complete: true, start: 0, end: 0, classes: [], lanes: [], strings: [] };
  const samples = {
    total: S.total, n: S.embedded || 0, complete: S.complete, start: S.start, end: S.end, classes: S.classes, strings: S.strings,
    fnName: S.fn_name ? u32(S.fn_name) : new Uint32Array(0), fnModule: S.fn_module ? u32(S.fn_module) : new Uint32Array(0),
    fnClass: S.fn_class ? u8(S.fn_class) : new Uint8Array(0), stackOffsets: S.stack_offsets ? u32(S.stack_offsets) : new Uint32Array(1),
    stackFns: S.stack_fns ? u32(S.stack_fns) : new Uint32Array(0), stackClass: S.stack_class ? u8(S.stack_class) : new Uint8Array(0),
    track: S.track ? u32(S.track) : new Uint32Array(0), t: S.t ? f64(S.t) : new Float64Array(0),
    stack: S.stack ? u32(S.stack) : new Uint32Array(0), idle: S.idle ? u8(S.idle) : new Uint8Array(0),
  };
  const NO_STACK = 0xFFFFFFFF;
  // By SampleClass: Python, GIL, PyTorch, CUDA, allocation, numerics, data, profiler, kernel, other,
  // unresolved, no stack.
  const classColors = ["#3b6fb6", "#e15759", "#f28e2b", "#59a14f", "#edc948", "#b07aa1", "#9c755f", "#bab0ac", "#76b7b2", "#8aa6c1", "#d3d3d3", "#eeeeee"];
  const classColor = (c) => classColors[c] || "#999999";
  const sampleClass = (i) => (samples.stack[i] === NO_STACK ? 11 : samples.stackClass[samples.stack[i]]);
  const sampleLanes = new Map();  // track -> {samples, levels, idx: the embedded samples of the thread}
  for (const l of S.lanes || []) sampleLanes.set(l.track, { samples: l.samples, levels: [{ b: u16(l.b), count: u32(l.count), cls: u8(l.cls) }], idx: [] });
  for (let i = 0; i < samples.n; i++) { const l = sampleLanes.get(samples.track[i]); if (l) l.idx.push(i); }
  for (const l of sampleLanes.values()) l.idx = Uint32Array.from(l.idx);

  // A coarser level: pairs of buckets merged (covered share averaged, the colour of the busier).
  function level(lod, L) {
    while (lod.levels.length <= L) {
      const fine = lod.levels[lod.levels.length - 1];
      const b = [], busy = [], color = [], count = [];
      for (let i = 0; i < fine.b.length; i++) {
        const k = fine.b[i] >> 1;
        const last = b.length - 1;
        if (last >= 0 && b[last] === k) {
          if (fine.busy[i] > fine.busy[i - 1]) color[last] = fine.color[i];  // i - 1 is the pair's first
          busy[last] = (busy[last] * 2 + fine.busy[i]) / 2;
          count[last] += fine.count[i];
        } else {
          b.push(k); busy.push(fine.busy[i] / 2); color.push(fine.color[i]); count.push(fine.count[i]);
        }
      }
      lod.levels.push({ b, busy, color, count });
    }
    return lod.levels[L];
  }

  // ---- layout -------------------------------------------------------------------------------
  const ROW = 16, LANE = 22, MEM = 30, HEADER = 18, AXIS = 26, GUTTER = 230, SAMPLES = 12;
  const lanes = [];  // {type, y, h, track?, row?, group?, util?, mem?}
  function layout() {
    lanes.length = 0;
    let y = AXIS;
    data.groups.forEach((label, g) => {
      lanes.push({ type: "group", y, h: HEADER, label });
      y += HEADER;
      for (const u of utilization) if (u.group === g) { lanes.push({ type: "util", y, h: LANE, util: u, label: u.label + " utilization" }); y += LANE; }
      for (const m of memory) if (m.group === g) { lanes.push({ type: "mem", y, h: MEM, mem: m, label: m.label }); y += MEM; }
      for (const m of metrics) if (m.group === g) { lanes.push({ type: "metric", y, h: LANE, metric: m, label: m.label }); y += LANE; }
      for (const t of tracks) {
        if (t.group !== g) continue;
        for (let r = 0; r < t.rows; r++) {
          lanes.push({ type: "row", y, h: ROW, track: t, row: r, label: r === 0 ? t.label : "" });
          y += ROW;
        }
        const sl = sampleLanes.get(t.index);
        if (sl) { lanes.push({ type: "samples", y, h: SAMPLES, track: t, sl, label: "CPU samples (" + sl.samples.toLocaleString("en-US") + ")" }); y += SAMPLES; }
        y += 3;
      }
    });
    return y;
  }
  const contentHeight = layout();

  // ---- state --------------------------------------------------------------------------------
  const view = { t0: 0, t1: span, scrollY: 0 };
  const state = { selected: null, linked: [], bands: [], finding: -1, search: null, matches: [], match: -1, hover: null };
  const stats = { frames: 0, drawnRects: 0, drawnEvents: 0, lodCells: 0, rawRows: 0, lodRows: 0, drawnSamples: 0, lastFrameMs: 0 };

  const canvas = document.getElementById("timeline");
  const ctx = canvas.getContext("2d");
  let width = 0, height = 0, dpr = 1;
  function resize() {
    dpr = window.devicePixelRatio || 1;
    const r = canvas.getBoundingClientRect();
    width = Math.max(200, r.width); height = Math.max(100, r.height);
    canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    clampScroll();
    requestDraw();
  }
  function clampScroll() { view.scrollY = Math.max(0, Math.min(view.scrollY, Math.max(0, contentHeight - height + 20))); }
  function clampWindow() {
    let w = view.t1 - view.t0;
    const minW = 10;  // ns: ten nanoseconds across the canvas is enough to see a single ns
    if (w < minW) { const c = (view.t0 + view.t1) / 2; view.t0 = c - minW / 2; view.t1 = c + minW / 2; w = minW; }
    const margin = span * 0.05;
    if (w > span + 2 * margin) { view.t0 = -margin; view.t1 = span + margin; return; }
    if (view.t0 < -margin) { view.t1 += -margin - view.t0; view.t0 = -margin; }
    if (view.t1 > span + margin) { view.t0 -= view.t1 - (span + margin); view.t1 = span + margin; }
  }
  function setWindow(t0, t1) {
    view.t0 = t0; view.t1 = t1;
    clampWindow();
    requestDraw();
    updateWindowInfo();
  }
  const plotW = () => width - GUTTER;
  const xOf = (t) => GUTTER + ((t - view.t0) / (view.t1 - view.t0)) * plotW();
  const tOf = (x) => view.t0 + ((x - GUTTER) / plotW()) * (view.t1 - view.t0);

  // ---- formatting ---------------------------------------------------------------------------
  function fmtDur(ns) {
    const a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + " ns";
    if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 3 : 2) + " µs";
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 3 : 2) + " ms";
    return (ns / 1e9).toFixed(3) + " s";
  }
  const fmtNs = (ns) => Math.round(ns).toLocaleString("en-US") + " ns";
  function fmtBytes(b) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(2) : b.toFixed(0)) + " " + u[i];
  }
  function updateWindowInfo() {
    document.getElementById("window-info").textContent = "window " + fmtDur(Math.max(0, view.t0)) + " – " + fmtDur(view.t1) + " (" + fmtDur(view.t1 - view.t0) + ")";
  }

  // ---- drawing ------------------------------------------------------------------------------
  let pending = false;
  function requestDraw() { if (!pending) { pending = true; requestAnimationFrame(draw); } }
  const colorOf = (i) => (palette[i] ? palette[i].color : "#999999");
  const rawCovers = () => raw.complete || (view.t0 >= raw.start && view.t1 <= raw.end);

  function lowerBoundMaxEnd(maxEnd, t) {
    let lo = 0, hi = maxEnd.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (maxEnd[m] < t) lo = m + 1; else hi = m; }
    return lo;
  }
  function visibleRawCount(tr, r) {
    const idx = tr.rowIdx[r];
    const a = lowerBoundMaxEnd(tr.rowMaxEnd[r], view.t0);
    let lo = a, hi = idx.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (tr.s[idx[m]] <= view.t1) lo = m + 1; else hi = m; }
    return [a, lo];
  }

  function drawRawRow(tr, r, y, h) {
    const idx = tr.rowIdx[r];
    const [a, b] = visibleRawCount(tr, r);
    const k = plotW() / (view.t1 - view.t0);
    let runX0 = -1, runX1 = -1, runColor = 0, runLongest = -1, runMatch = false;
    const searching = state.search !== null;
    const flush = () => {
      if (runX0 < 0) return;
      ctx.globalAlpha = searching && !runMatch ? 0.18 : 1;
      ctx.fillStyle = colorOf(runColor);
      ctx.fillRect(runX0, y + 1, Math.max(1, runX1 - runX0), h - 2);
      stats.drawnRects++;
      runX0 = -1;
    };
    for (let q = a; q < b; q++) {
      const i = idx[q];
      const s = tr.s[i], e = s + tr.d[i];
      if (e < view.t0) continue;
      stats.drawnEvents++;
      let x0 = GUTTER + (s - view.t0) * k, x1 = GUTTER + (e - view.t0) * k;
      if (x0 < GUTTER) x0 = GUTTER;
      if (x1 > width) x1 = width;
      const match = searching && state.search[tr.name[i]] === 1;
      if (x1 - x0 < 1.5) {  // sub-pixel: merge into the current run
        if (runX0 >= 0 && x0 <= runX1 + 1) {
          runX1 = Math.max(runX1, x1);
          if (tr.d[i] > runLongest) { runLongest = tr.d[i]; runColor = tr.color[i]; }
          runMatch = runMatch || match;
        } else {
          flush();
          runX0 = x0; runX1 = Math.max(x1, x0 + 1); runColor = tr.color[i]; runLongest = tr.d[i]; runMatch = match;
        }
        continue;
      }
      flush();
      ctx.globalAlpha = searching && !match ? 0.18 : 1;
      ctx.fillStyle = colorOf(tr.color[i]);
      ctx.fillRect(x0, y + 1, x1 - x0, h - 2);
      stats.drawnRects++;
      if (x1 - x0 > 28) {
        ctx.fillStyle = "#ffffff";
        ctx.globalAlpha = searching && !match ? 0.5 : 1;
        ctx.save();
        ctx.beginPath(); ctx.rect(x0, y, x1 - x0, h); ctx.clip();
        ctx.fillText(names[tr.name[i]], x0 + 3, y + h - 4);
        ctx.restore();
      }
    }
    flush();
    ctx.globalAlpha = 1;
  }

  function drawLodRow(tr, r, y, h) {
    const lod = tr.lod[r];
    if (!lod) return;
    const nsPerPx = (view.t1 - view.t0) / plotW();
    let L = 0;
    while (bucketNs * (1 << L) < nsPerPx && (1 << L) < lodBuckets) L++;
    const lv = level(lod, L);
    const w = bucketNs * (1 << L);
    const k = plotW() / (view.t1 - view.t0);
    const first = Math.max(0, Math.floor(view.t0 / w) - 1);
    let lo = 0, hi = lv.b.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (lv.b[m] < first) lo = m + 1; else hi = m; }
    for (let q = lo; q < lv.b.length; q++) {
      const t = lv.b[q] * w;
      if (t > view.t1) break;
      const x0 = Math.max(GUTTER, GUTTER + (t - view.t0) * k), x1 = Math.min(width, GUTTER + (t + w - view.t0) * k);
      if (x1 <= x0) continue;
      const share = lv.busy[q] / 65535;
      ctx.fillStyle = colorOf(lv.color[q]);
      ctx.globalAlpha = 0.35 + 0.65 * Math.min(1, share * 4);
      const bh = Math.max(2, (h - 2) * Math.min(1, Math.max(share, 0.15)));
      ctx.fillRect(x0, y + h - 1 - bh, Math.max(1, x1 - x0), bh);
      stats.lodCells++;
    }
    ctx.globalAlpha = 1;
  }

  // Bars of a per-bucket value (0..1; below 0 where nothing was measured), the buckets under one
  // pixel averaged over those measured.
  function drawBars(valueAt, color, y, h) {
    const k = plotW() / (view.t1 - view.t0);
    const nsPerPx = (view.t1 - view.t0) / plotW();
    const step = Math.max(1, Math.floor(nsPerPx / bucketNs));
    ctx.fillStyle = color;
    ctx.globalAlpha = 0.75;
    const first = Math.max(0, Math.floor(view.t0 / bucketNs)), last = Math.min(lodBuckets - 1, Math.ceil(view.t1 / bucketNs));
    for (let b = first - (first % step); b <= last; b += step) {
      let sum = 0, n = 0;
      for (let j = b; j < b + step && j < lodBuckets; j++) {
        const v = valueAt(j);
        if (v >= 0) { sum += v; n++; }
      }
      const share = n ? Math.min(1, sum / n) : 0;
      if (share <= 0) continue;
      const x0 = Math.max(GUTTER, GUTTER + (b * bucketNs - view.t0) * k), x1 = Math.min(width, GUTTER + ((b + step) * bucketNs - view.t0) * k);
      if (x1 <= x0) continue;
      ctx.fillRect(x0, y + h - 1 - share * (h - 3), Math.max(1, x1 - x0), share * (h - 3));
    }
    ctx.globalAlpha = 1;
  }
  function drawUtil(u, y, h) { drawBars((j) => u.busy[j] / 65535, "#4e79a7", y, h); }
  // A sampled GPU metric: each bucket's mean over the lane's full scale.
  function drawMetric(m, y, h) {
    if (m.max > 0) drawBars((j) => (m.mean[j] < 0 ? -1 : m.mean[j] / m.max), "#59a14f", y, h);
  }

  // A coarser level of a sample lane: pairs of buckets merged (counts summed, the class of the fuller).
  function sampleLevel(sl, L) {
    while (sl.levels.length <= L) {
      const fine = sl.levels[sl.levels.length - 1];
      const b = [], count = [], cls = [];
      for (let i = 0; i < fine.b.length; i++) {
        const k = fine.b[i] >> 1, last = b.length - 1;
        if (last >= 0 && b[last] === k) {
          if (fine.count[i] > fine.count[i - 1]) cls[last] = fine.cls[i];
          count[last] += fine.count[i];
        } else { b.push(k); count.push(fine.count[i]); cls.push(fine.cls[i]); }
      }
      const lv = { b, count, cls, max: 0 };
      for (const c of count) lv.max = Math.max(lv.max, c);
      sl.levels.push(lv);
    }
    const lv = sl.levels[L];
    if (lv.max === undefined) { lv.max = 0; for (const c of lv.count) lv.max = Math.max(lv.max, c); }
    return lv;
  }
  const samplesCover = () => samples.complete || (view.t0 >= samples.start && view.t1 <= samples.end);
  // The embedded samples of a thread inside [t0, t1]: [first, end) into its idx.
  function sampleRange(idx, t0, t1) {
    let lo = 0, hi = idx.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (samples.t[idx[m]] < t0) lo = m + 1; else hi = m; }
    let a = lo; hi = idx.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (samples.t[idx[m]] <= t1) lo = m + 1; else hi = m; }
    return [a, lo];
  }
  // Ticks: one per sample, coloured by what the CPU was doing (its class), where the embedded samples
  // cover the view and are few enough for the pixels; else each bucket's count, its height relative
  // to the lane's fullest bucket at that zoom.
  function drawSamples(lane, y, h) {
    const sl = lane.sl;
    const k = plotW() / (view.t1 - view.t0);
    if (samplesCover()) {
      const [a, b] = sampleRange(sl.idx, view.t0, view.t1);
      if (b - a <= plotW() * 3) {
        let lastX = -1, lastClass = -1;
        for (let q = a; q < b; q++) {
          const i = sl.idx[q];
          const x = Math.floor(GUTTER + (samples.t[i] - view.t0) * k), c = sampleClass(i);
          if (x === lastX && c === lastClass) continue;
          lastX = x; lastClass = c;
          ctx.fillStyle = classColor(c);
          ctx.fillRect(x, y + 1, 1.5, h - 2);
          stats.drawnSamples++;
        }
        return;
      }
    }
    const nsPerPx = (view.t1 - view.t0) / plotW();
    let L = 0;
    while (bucketNs * (1 << L) < nsPerPx && (1 << L) < lodBuckets) L++;
    const lv = sampleLevel(sl, L), w = bucketNs * (1 << L);
    const first = Math.max(0, Math.floor(view.t0 / w) - 1);
    for (let q = 0; q < lv.b.length; q++) {
      if (lv.b[q] < first) continue;
      const t = lv.b[q] * w;
      if (t > view.t1) break;
      const x0 = Math.max(GUTTER, GUTTER + (t - view.t0) * k), x1 = Math.min(width, GUTTER + (t + w - view.t0) * k);
      if (x1 <= x0) continue;
      const bh = Math.max(2, (h - 2) * (lv.max ? lv.count[q] / lv.max : 0));
      ctx.fillStyle = classColor(lv.cls[q]);
      ctx.fillRect(x0, y + h - 1 - bh, Math.max(1, x1 - x0), bh);
      stats.drawnSamples++;
    }
  }

  function drawMem(m, y, h) {
    if (!(m.max > 0)) return;
    const k = plotW() / (view.t1 - view.t0);
    ctx.strokeStyle = "#b8860b";
    ctx.fillStyle = "rgba(241, 194, 50, 0.35)";
    ctx.beginPath();
    let started = false;
    const first = Math.max(0, Math.floor(view.t0 / bucketNs) - 1), last = Math.min(lodBuckets - 1, Math.ceil(view.t1 / bucketNs) + 1);
    for (let b = first; b <= last; b++) {
      const v = m.peak[b];
      if (v < 0) continue;
      const x = Math.max(GUTTER, Math.min(width, GUTTER + (b * bucketNs - view.t0) * k));
      const yy = y + h - 2 - (v / m.max) * (h - 4);
      if (!started) { ctx.moveTo(x, y + h - 2); started = true; }
      ctx.lineTo(x, yy);
      ctx.lineTo(Math.min(width, GUTTER + ((b + 1) * bucketNs - view.t0) * k), yy);
    }
    if (started) { ctx.stroke(); }
  }

  function niceStep(ns) {
    const p = Math.pow(10, Math.floor(Math.log10(ns)));
    for (const m of [1, 2, 5, 10]) if (m * p >= ns) return m * p;
    return 10 * p;
  }
  function drawAxis() {
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, width, AXIS);
    const stepNs = niceStep(((view.t1 - view.t0) / plotW()) * 110);
    ctx.fillStyle = "#6b7280";
    ctx.strokeStyle = "#e3e5e9";
    ctx.font = "11px system-ui, sans-serif";
    // At most a few dozen ticks; the bound also ends the loop where t + step === t (times near 2^63).
    let ticks = 0;
    for (let t = Math.ceil(view.t0 / stepNs) * stepNs; t <= view.t1 && ticks < 200; t += stepNs, ticks++) {
      const x = xOf(t);
      if (x < GUTTER) continue;
      ctx.fillRect(x, AXIS - 6, 1, 6);
      ctx.fillText(fmtDur(t), x + 3, AXIS - 9);
      ctx.globalAlpha = 0.5;
      ctx.fillRect(x, AXIS, 0.5, height - AXIS);
      ctx.globalAlpha = 1;
    }
    // The gutter says which stretch is exact (the rest is drawn from the buckets).
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, GUTTER - 2, AXIS);
    ctx.fillStyle = "#1d1f23";
    ctx.fillText(raw.complete ? "all events exact" : "exact " + fmtDur(raw.start) + " – " + fmtDur(raw.end), 6, AXIS - 9);
  }

  function draw() {
    pending = false;
    const began = performance.now();
    stats.drawnRects = 0; stats.drawnEvents = 0; stats.lodCells = 0; stats.rawRows = 0; stats.lodRows = 0; stats.drawnSamples = 0;
    ctx.fillStyle = "#fbfbfc";
    ctx.fillRect(0, 0, width, height);
    ctx.font = "11px system-ui, sans-serif";
    const useRaw = rawCovers();
    const pixels = plotW();
    for (const lane of lanes) {
      const y = lane.y - view.scrollY;
      if (y + lane.h < AXIS || y > height) continue;
      if (lane.type === "group") {
        ctx.fillStyle = "#eef0f3";
        ctx.fillRect(0, y, width, lane.h);
        ctx.fillStyle = "#1d1f23";
        ctx.font = "bold 11px system-ui, sans-serif";
        ctx.fillText(lane.label, 6, y + 13);
        ctx.font = "11px system-ui, sans-serif";
        continue;
      }
      ctx.save();
      ctx.beginPath(); ctx.rect(GUTTER, y, width - GUTTER, lane.h); ctx.clip();
      if (lane.type === "util") drawUtil(lane.util, y, lane.h);
      else if (lane.type === "mem") drawMem(lane.mem, y, lane.h);
      else if (lane.type === "metric") drawMetric(lane.metric, y, lane.h);
      else if (lane.type === "samples") drawSamples(lane, y, lane.h);
      else {
        const tr = lane.track, r = lane.row;
        let drewRaw = false;
        if (useRaw && tr.rowIdx[r].length) {
          const [a, b] = visibleRawCount(tr, r);
          if (b - a <= pixels * 8 || !tr.lod[r]) { drawRawRow(tr, r, y, lane.h); drewRaw = true; stats.rawRows++; }
        }
        if (!drewRaw) { drawLodRow(tr, r, y, lane.h); stats.lodRows++; }
      }
      ctx.restore();
      if (lane.label) {
        ctx.fillStyle = "#fbfbfc";
        ctx.fillRect(0, y, GUTTER - 4, lane.h);
        ctx.fillStyle = lane.type === "row" ? "#1d1f23" : "#6b7280";
        ctx.save();
        ctx.beginPath(); ctx.rect(0, y, GUTTER - 6, lane.h); ctx.clip();
        ctx.fillText(lane.label, 10, y + lane.h - 4);
        ctx.restore();
      }
    }
    drawOverlays();
    drawAxis();
    scheduleFlame();
    stats.frames++;
    stats.lastFrameMs = performance.now() - began;
  }

  function eventBox(tr, i) {
    for (const lane of lanes) {
      if (lane.type === "row" && lane.track === tr && lane.row === tr.depth[i]) {
        return { x0: xOf(tr.s[i]), x1: xOf(tr.s[i] + tr.d[i]), y: lane.y - view.scrollY, h: lane.h };
      }
    }
    return null;
  }
  function drawOverlays() {
    for (const band of state.bands) {
      const x0 = Math.max(GUTTER, xOf(band.start)), x1 = Math.min(width, xOf(band.end));
      if (x1 < GUTTER || x0 > width) continue;
      ctx.fillStyle = "rgba(255, 127, 14, 0.13)";
      ctx.fillRect(x0, AXIS, Math.max(2, x1 - x0), height - AXIS);
      ctx.fillStyle = "rgba(255, 127, 14, 0.9)";
      ctx.fillRect(x0, AXIS, 1.5, height - AXIS);
      ctx.fillRect(Math.max(x0, x1 - 1.5), AXIS, 1.5, height - AXIS);
    }
    const outline = (ev, color) => {
      const b = eventBox(tracks[ev.track], ev.index);
      if (!b) return;
      ctx.strokeStyle = color;
      ctx.lineWidth = 2;
      ctx.strokeRect(Math.max(GUTTER, b.x0) - 1, b.y, Math.max(3, Math.min(width, b.x1) - Math.max(GUTTER, b.x0) + 2), b.h);
      ctx.lineWidth = 1;
    };
    for (const ev of state.linked) outline(ev, "#ff00aa");
    if (state.selected) outline(state.selected, "#111111");
    if (state.search && state.match >= 0 && state.matches[state.match]) outline(state.matches[state.match], "#ff7f0e");
  }

  // ---- picking ------------------------------------------------------------------------------
  function laneAt(y) {
    const yy = y + view.scrollY;
    for (const lane of lanes) if (yy >= lane.y && yy < lane.y + lane.h) return lane;
    return null;
  }
  function eventAt(x, y) {
    const lane = laneAt(y);
    if (!lane || lane.type !== "row" || x < GUTTER) return null;
    const tr = lane.track, r = lane.row;
    const t = tOf(x), tol = (3 * (view.t1 - view.t0)) / plotW();
    const idx = tr.rowIdx[r];
    const [a, b] = visibleRawCount(tr, r);
    let best = -1, bestDist = Infinity;
    for (let q = a; q < b; q++) {
      const i = idx[q];
      const s = tr.s[i], e = s + tr.d[i];
      const dist = t < s ? s - t : t > e ? t - e : 0;
      if (dist <= tol && dist < bestDist) { best = i; bestDist = dist; if (dist === 0) break; }
    }
    return best >= 0 ? { track: tr.index, index: best } : null;
  }
  function describe(ev) {
    const tr = tracks[ev.track], i = ev.index;
    const lines = [names[tr.name[i]], categories[tr.cat[i]] + " · " + tr.label + " · " + data.groups[tr.group],
      "start " + fmtNs(tr.s[i]) + " (" + fmtDur(tr.s[i]) + ")", "duration " + fmtNs(tr.d[i]) + (tr.d[i] >= 1000 ? " (" + fmtDur(tr.d[i]) + ")" : "")];
    if (tr.detail[i]) lines.push(details[tr.detail[i]]);
    if (tr.c[i] >= 0) lines.push("correlation " + tr.c[i]);
    return lines.join("\n");
  }
  function describeLod(lane, x) {
    const tr = lane.track, lod = tr.lod[lane.row];
    if (!lod) return null;
    const t = tOf(x);
    const b = Math.floor(t / bucketNs);
    const lv = lod.levels[0];
    for (let q = 0; q < lv.b.length; q++) {
      if (lv.b[q] === b) {
        return "aggregated " + fmtDur(b * bucketNs) + " – " + fmtDur((b + 1) * bucketNs) + "\n" + lv.count[q] + " events start here, " +
          ((100 * lv.busy[q]) / 65535).toFixed(1) + "% covered, mostly " + (palette[lv.color[q]] ? palette[lv.color[q]].label : "") +
          (raw.complete ? "" : "\nexact events: re-run with --window around this time");
      }
    }
    return null;
  }
  const fnLabel = (f) => samples.strings[samples.fnName[f]];
  // The sample nearest the pointer (3 px), with its stack; else the bucket's count and class.
  function describeSample(lane, x) {
    const sl = lane.sl, t = tOf(x), tol = (3 * (view.t1 - view.t0)) / plotW();
    if (samplesCover()) {
      const [a, b] = sampleRange(sl.idx, t - tol, t + tol);
      let best = -1;
      for (let q = a; q < b; q++) if (best < 0 || Math.abs(samples.t[sl.idx[q]] - t) < Math.abs(samples.t[best] - t)) best = sl.idx[q];
      if (best >= 0) {
        const lines = ["CPU sample at " + fmtDur(samples.t[best]) + " · " + samples.classes[sampleClass(best)] + (samples.idle[best] ? " · GPU idle" : "")];
        const st = samples.stack[best];
        if (st === NO_STACK) lines.push("(no call stack recorded)");
        else {
          const a0 = samples.stackOffsets[st], a1 = samples.stackOffsets[st + 1];
          for (let k = a0; k < Math.min(a1, a0 + 14); k++) lines.push((k === a0 ? "" : "  ") + fnLabel(samples.stackFns[k]));
          if (a1 - a0 > 14) lines.push("  … " + (a1 - a0 - 14) + " more frames");
        }
        lines.push("click: this thread's flame graph");
        return lines.join("\n");
      }
    }
    const lv = sl.levels[0], bk = Math.floor(t / bucketNs);
    for (let q = 0; q < lv.b.length; q++) {
      if (lv.b[q] === bk) return lv.count[q] + " CPU samples " + fmtDur(bk * bucketNs) + " – " + fmtDur((bk + 1) * bucketNs) + ", mostly " + samples.classes[lv.cls[q]] + "\nclick: this thread's flame graph";
    }
    return "CPU samples of " + lane.track.label + "\nclick: this thread's flame graph";
  }
  const tooltip = document.getElementById("tooltip");
  function showTooltip(text, x, y) {
    if (!text) { tooltip.hidden = true; return; }
    tooltip.textContent = text;
    tooltip.hidden = false;
    const pane = canvas.getBoundingClientRect();
    tooltip.style.left = Math.min(x + 14, pane.width - 360) + "px";
    tooltip.style.top = Math.min(y + 14, pane.height - 120) + "px";
  }

  // Correlation ids link an API call and the GPU work it launched, within one process group.
  function linkedTo(ev) {
    const tr = tracks[ev.track], c = tr.c[ev.index];
    const out = [];
    if (!(c >= 0)) return out;
    for (const other of tracks) {
      if (other.group !== tr.group) continue;
      for (let i = 0; i < other.n; i++) {
        if (other.c[i] === c && !(other === tr && i === ev.index)) out.push({ track: other.index, index: i });
      }
    }
    return out;
  }
  function select(ev) {
    state.selected = ev;
    state.linked = ev ? linkedTo(ev) : [];
    const box = document.getElementById("selection");
    box.textContent = "";
    if (ev) {
      box.textContent = describe(ev);
      for (const l of state.linked) {
        const a = document.createElement("a");
        a.href = "#";
        a.className = "linked";
        a.textContent = "\n→ " + categories[tracks[l.track].cat[l.index]] + ": " + names[tracks[l.track].name[l.index]] + " (" + tracks[l.track].label + ")";
        a.addEventListener("click", (e) => { e.preventDefault(); focusEvent(l); });
        box.appendChild(a);
      }
    }
    requestDraw();
  }
  function focusEvent(ev) {
    const tr = tracks[ev.track];
    const s = tr.s[ev.index], d = Math.max(tr.d[ev.index], 1);
    const w = Math.max(view.t1 - view.t0 > d * 50 ? d * 20 : view.t1 - view.t0, d * 3);
    setWindow(s + d / 2 - w / 2, s + d / 2 + w / 2);
    const b = lanes.find((l) => l.type === "row" && l.track === tr && l.row === tr.depth[ev.index]);
    if (b && (b.y - view.scrollY < AXIS || b.y - view.scrollY > height - 40)) { view.scrollY = b.y - height / 3; clampScroll(); }
  }

  // ---- interaction --------------------------------------------------------------------------
  let drag = null;
  canvas.addEventListener("mousedown", (e) => {
    drag = { x: e.offsetX, y: e.offsetY, t0: view.t0, t1: view.t1, scrollY: view.scrollY, moved: false };
    canvas.style.cursor = "grabbing";
  });
  window.addEventListener("mouseup", (e) => {
    if (drag && !drag.moved && e.target === canvas) {
      const lane = laneAt(e.offsetY);
      if (lane && lane.type === "samples") setFlame({ track: lane.track.index, focus: [] });
      else select(eventAt(e.offsetX, e.offsetY));
    }
    drag = null;
    canvas.style.cursor = "grab";
  });
  canvas.addEventListener("mousemove", (e) => {
    if (drag) {
      const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) {
        const dt = (dx / plotW()) * (drag.t1 - drag.t0);
        view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt;
        view.scrollY = drag.scrollY - dy;
        clampWindow(); clampScroll(); updateWindowInfo(); requestDraw();
      }
      tooltip.hidden = true;
      return;
    }
    const ev = eventAt(e.offsetX, e.offsetY);
    if (ev) { showTooltip(describe(ev), e.offsetX, e.offsetY); return; }
    const lane = laneAt(e.offsetY);
    if (lane && lane.type === "row" && e.offsetX >= GUTTER) { showTooltip(describeLod(lane, e.offsetX), e.offsetX, e.offsetY); return; }
    if (lane && lane.type === "util") {
      const b = Math.floor(tOf(e.offsetX) / bucketNs);
      if (b >= 0 && b < lodBuckets) { showTooltip(lane.label + "\n" + ((100 * lane.util.busy[b]) / 65535).toFixed(1) + "% busy at " + fmtDur(b * bucketNs) + "\nwhole run " + (100 * lane.util.share).toFixed(1) + "%", e.offsetX, e.offsetY); return; }
    }
    if (lane && lane.type === "samples" && e.offsetX >= GUTTER) { showTooltip(describeSample(lane, e.offsetX), e.offsetX, e.offsetY); return; }
    if (lane && lane.type === "metric") {
      const b = Math.floor(tOf(e.offsetX) / bucketNs);
      if (b >= 0 && b < lodBuckets && lane.metric.mean[b] >= 0) { showTooltip(lane.label + "\n" + lane.metric.mean[b].toFixed(1) + " " + lane.metric.unit + " at " + fmtDur(b * bucketNs) + " (mean of the samples in the bucket)", e.offsetX, e.offsetY); return; }
    }
    if (lane && lane.type === "mem") {
      const b = Math.floor(tOf(e.offsetX) / bucketNs);
      if (b >= 0 && b < lodBuckets && lane.mem.peak[b] >= 0) { showTooltip(lane.label + "\n" + fmtBytes(lane.mem.peak[b]) + " allocated (most in bucket)\npeak " + fmtBytes(lane.mem.max), e.offsetX, e.offsetY); return; }
    }
    showTooltip(null);
  });
  canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
  function zoomAt(factor, x) {
    const t = tOf(x === undefined ? GUTTER + plotW() / 2 : Math.max(GUTTER, x));
    setWindow(t - (t - view.t0) * factor, t + (view.t1 - t) * factor);
  }
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    if (e.ctrlKey || e.metaKey || e.altKey) { zoomAt(Math.pow(1.0025, e.deltaY), e.offsetX); return; }
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const d = (e.shiftKey ? e.deltaY : e.deltaX) / plotW() * (view.t1 - view.t0);
      setWindow(view.t0 + d, view.t1 + d);
      return;
    }
    view.scrollY += e.deltaY; clampScroll(); requestDraw();
  }, { passive: false });
  window.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT") return;
    const w = view.t1 - view.t0;
    if (e.key === "w") zoomAt(0.8);
    else if (e.key === "s") zoomAt(1.25);
    else if (e.key === "a") setWindow(view.t0 - w * 0.2, view.t1 - w * 0.2);
    else if (e.key === "d") setWindow(view.t0 + w * 0.2, view.t1 + w * 0.2);
    else if (e.key === "0" || e.key === "f") fit();
    else if (e.key === "Escape") { select(null); state.bands = []; setActiveFinding(-1); requestDraw(); }
  });
  function fit() { setWindow(0, span); }
  document.getElementById("fit").addEventListener("click", fit);
  document.getElementById("zoom-in").addEventListener("click", () => zoomAt(0.5));
  document.getElementById("zoom-out").addEventListener("click", () => zoomAt(2));
  window.addEventListener("resize", resize);

  // ---- search -------------------------------------------------------------------------------
  const searchBox = document.getElementById("search"), searchCount = document.getElementById("search-count");
  function runSearch() {
    const text = searchBox.value;
    state.matches = []; state.match = -1;
    if (!text) { state.search = null; searchCount.textContent = ""; searchBox.style.outline = ""; requestDraw(); return; }
    let re;
    try { re = new RegExp(text, "i"); } catch (err) { searchCount.textContent = "bad regex"; searchBox.style.outline = "2px solid #c0392b"; return; }
    searchBox.style.outline = "";
    const hit = new Uint8Array(names.length);
    let nameHits = 0;
    names.forEach((n, i) => { if (re.test(n)) { hit[i] = 1; nameHits++; } });
    state.search = hit;
    for (const tr of tracks) for (let i = 0; i < tr.n; i++) if (hit[tr.name[i]]) state.matches.push({ track: tr.index, index: i });
    state.matches.sort((p, q) => tracks[p.track].s[p.index] - tracks[q.track].s[q.index]);
    searchCount.textContent = state.matches.length + " events (" + nameHits + " names)" + (raw.complete ? "" : " in the exact window");
    requestDraw();
  }
  function stepMatch(dir) {
    if (!state.matches.length) return;
    state.match = (state.match + dir + state.matches.length) % state.matches.length;
    focusEvent(state.matches[state.match]);
    select(state.matches[state.match]);
  }
  searchBox.addEventListener("input", runSearch);
  searchBox.addEventListener("keydown", (e) => { if (e.key === "Enter") stepMatch(e.shiftKey ? -1 : 1); });
  document.getElementById("search-next").addEventListener("click", () => stepMatch(1));
  document.getElementById("search-prev").addEventListener("click", () => stepMatch(-1));

  // ---- panels -------------------------------------------------------------------------------
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  // The file's name in the header (the whole path on hover): pages look the same wherever made.
  const inputBox = document.getElementById("input");
  inputBox.textContent = data.input.split(/[\\/]/).filter((p) => p).pop() || data.input;
  inputBox.title = data.input;
  document.getElementById("producer").textContent = data.producer + " · colours: " + data.colors;
  const legend = document.getElementById("legend");
  palette.forEach((p) => {
    if (!p.events) return;
    const s = el("span", undefined, "swatch");
    const i = el("i"); i.style.background = p.color;
    s.appendChild(i); s.appendChild(document.createTextNode(p.label + " (" + p.events.toLocaleString("en-US") + ")"));
    legend.appendChild(s);
  });
  const figures = document.getElementById("figures");
  for (const f of data.figures) { figures.appendChild(el("dt", f.label)); figures.appendChild(el("dd", f.value)); }
  document.getElementById("lod-note").textContent = raw.complete
    ? "All " + data.events.toLocaleString("en-US") + " events are embedded exactly."
    : raw.events.toLocaleString("en-US") + " of " + data.events.toLocaleString("en-US") + " events are embedded exactly (" + fmtDur(raw.start) + " – " + fmtDur(raw.end) +
      "); elsewhere the timeline shows " + lodBuckets + " buckets of " + fmtDur(bucketNs) + ". Use --window or --max-events for more.";

  const findingList = document.getElementById("findings");
  function setActiveFinding(k) {
    state.finding = k;
    Array.from(findingList.children).forEach((li, i) => li.classList.toggle("active", i === k));
  }
  function showFinding(k) {
    const f = data.findings[k];
    setActiveFinding(k);
    state.bands = f.ranges.map((r) => ({ start: r.start, end: r.end }));
    if (f.ranges.length) {
      let lo = Infinity, hi = -Infinity;
      for (const r of f.ranges) { lo = Math.min(lo, r.start); hi = Math.max(hi, r.end); }
      const pad = Math.max((hi - lo) * 0.1, 1000);
      setWindow(lo - pad, hi + pad);
    } else {
      requestDraw();
    }
  }
  if (!data.findings.length) findingList.appendChild(el("li", "No findings."));
  data.findings.forEach((f, k) => {
    const li = el("li");
    li.appendChild(el("span", f.severity, "sev " + f.severity));
    li.appendChild(el("strong", f.id));
    li.appendChild(document.createTextNode(" " + f.title));
    if (f.savings_ns > 0) li.appendChild(el("span", " · saves up to " + fmtDur(f.savings_ns), "savings"));
    if (f.remedy) li.appendChild(el("span", f.remedy, "remedy"));
    li.title = f.ranges.length ? f.ranges.length + " evidence ranges: click to zoom there" : "no time ranges";
    li.addEventListener("click", () => showFinding(k));
    findingList.appendChild(li);
  });

  const kernelBody = document.querySelector("#kernels tbody");
  for (const k of data.kernels) {
    const tr = el("tr");
    const name = el("td", k.name); name.title = k.name;
    tr.appendChild(name);
    tr.appendChild(el("td", k.count.toLocaleString("en-US")));
    tr.appendChild(el("td", fmtDur(k.total_ns)));
    tr.appendChild(el("td", (100 * k.share).toFixed(1)));
    tr.appendChild(el("td", fmtDur(k.median_ns)));
    tr.addEventListener("click", () => { searchBox.value = "^" + k.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$"; runSearch(); });
    kernelBody.appendChild(tr);
  }

  const partColors = ["#2ca02c", "#1f77b4", "#f1c232", "#8c8c8c", "#e5e7eb"];
  const stepsBox = document.getElementById("steps"), stepsLegend = document.getElementById("steps-legend");
  const bars = data.steps.bars;
  if (!bars.length) stepsBox.appendChild(el("p", "No steps found (no ProfilerStep ranges, no --step-marker, nothing periodic).", "note"));
  else {
    data.steps.parts.forEach((p, i) => {
      const s = el("span", undefined, "swatch");
      const sw = el("i"); sw.style.background = partColors[i];
      s.appendChild(sw); s.appendChild(document.createTextNode(p));
      stepsLegend.appendChild(s);
    });
    const longest = Math.max(...bars.map((b) => b.end - b.start));
    const shown = bars.slice(0, 400);
    for (const b of shown) {
      const row = el("div", undefined, "step");
      row.appendChild(el("span", "#" + b.number, "n"));
      const bar = el("div", undefined, "bar");
      b.parts.forEach((p, i) => { const seg = el("i"); seg.style.width = ((100 * p) / longest).toFixed(3) + "%"; seg.style.background = partColors[i]; bar.appendChild(seg); });
      row.appendChild(bar);
      row.title = b.unit + " step " + b.number + ": " + fmtDur(b.end - b.start) + "\n" + data.steps.parts.map((p, i) => p + " " + fmtDur(b.parts[i])).join("\n");
      row.addEventListener("click", () => { state.bands = [{ start: b.start, end: b.end }]; setWindow(b.start - (b.end - b.start) * 0.05, b.end + (b.end - b.start) * 0.05); });
      stepsBox.appendChild(row);
    }
    if (bars.length > shown.length) stepsBox.appendChild(el("p", bars.length - shown.length + " more steps not listed", "note"));
  }

  const memBox = document.getElementById("memory");
  if (!memory.length) memBox.appendChild(el("p", "The trace records no GPU memory events.", "note"));
  for (const m of memory) {
    memBox.appendChild(el("div", m.label + ": peak " + fmtBytes(m.max) + (m.maxTime >= 0 ? " at " + fmtDur(m.maxTime) : ""), "mem-label"));
    const c = el("canvas");
    memBox.appendChild(c);
    requestAnimationFrame(() => {
      const w = c.getBoundingClientRect().width || 380, h = 90;
      c.width = w * dpr; c.height = h * dpr;
      const g = c.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.fillStyle = "rgba(241, 194, 50, 0.45)"; g.strokeStyle = "#b8860b";
      g.beginPath(); g.moveTo(0, h);
      for (let b = 0; b < lodBuckets; b++) {
        const v = m.peak[b] < 0 ? 0 : m.peak[b];
        g.lineTo((b / lodBuckets) * w, h - 2 - (m.max > 0 ? (v / m.max) * (h - 6) : 0));
      }
      g.lineTo(w, h); g.closePath(); g.fill(); g.stroke();
    });
    c.addEventListener("click", (e) => { const t = (e.offsetX / c.getBoundingClientRect().width) * span; const w = view.t1 - view.t0; setWindow(t - w / 2, t + w / 2); });
  }

  // ---- flame graph --------------------------------------------------------------------------
  // The samples of the visible window (all of them, or those taken while their GPU was idle; of
  // every thread or of one), as an icicle: callers above callees, widths by samples. Rebuilt when
  // the window or the choice changes; a click on a frame shows only the samples through it.
  const flame = { mode: "window", track: -1, focus: [], key: "", timer: 0, tree: null, rows: [], shown: 0 };
  const flameCanvas = document.getElementById("flame"), flameInfo = document.getElementById("flame-info");
  const flameNote = document.getElementById("flame-note"), flameThread = document.getElementById("flame-thread");
  const flameMode = document.getElementById("flame-mode");
  const FLAME_ROW = 15, FLAME_DEPTH = 48;
  function flameSamples() {
    const out = [];
    const idx = flame.track >= 0 ? (sampleLanes.get(flame.track) || { idx: new Uint32Array(0) }).idx : null;
    const t0 = view.t0, t1 = view.t1;
    if (idx) {
      const [a, b] = sampleRange(idx, t0, t1);
      for (let q = a; q < b; q++) out.push(idx[q]);
    } else {
      let lo = 0, hi = samples.n;
      while (lo < hi) { const m = (lo + hi) >> 1; if (samples.t[m] < t0) lo = m + 1; else hi = m; }
      for (let i = lo; i < samples.n && samples.t[i] <= t1; i++) out.push(i);
    }
    return flame.mode === "idle" ? out.filter((i) => samples.idle[i]) : out;
  }
  function buildFlame() {
    const root = { fn: -1, total: 0, self: 0, children: new Map(), depth: 0 };
    const chosen = flameSamples();
    const focus = flame.focus;
    let maxDepth = 0;
    for (const i of chosen) {
      const st = samples.stack[i];
      if (st === NO_STACK) continue;
      const a0 = samples.stackOffsets[st], a1 = samples.stackOffsets[st + 1];
      // Outermost first: the stack must pass through the focus path to count.
      let k = a1 - 1, f = 0;
      for (; f < focus.length && k >= a0; f++, k--) if (samples.stackFns[k] !== focus[f]) break;
      if (f < focus.length) continue;
      root.total++;
      let node = root, depth = 0;
      for (; k >= a0; k--) {
        const fn = samples.stackFns[k];
        let child = node.children.get(fn);
        if (!child) { child = { fn, total: 0, self: 0, children: new Map(), depth: depth + 1 }; node.children.set(fn, child); }
        child.total++;
        node = child;
        depth++;
      }
      node.self++;
      maxDepth = Math.max(maxDepth, depth);
    }
    flame.tree = root;
    flame.shown = chosen.length;
    flame.depth = maxDepth;
  }
  function drawFlame() {
    const w = flameCanvas.getBoundingClientRect().width || 380;
    const depth = Math.min(flame.depth, FLAME_DEPTH);
    const h = (depth + 1) * FLAME_ROW + 2;
    flameCanvas.style.height = h + "px";
    flameCanvas.width = Math.round(w * dpr); flameCanvas.height = Math.round(h * dpr);
    const g = flameCanvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = "11px system-ui, sans-serif";
    flame.rows = [];
    const root = flame.tree;
    if (!root || !root.total) return;
    const scale = w / root.total;
    const place = (node, x, d) => {
      const nw = node.total * scale;
      if (nw < 0.5 || d > FLAME_DEPTH) return;
      const y = d * FLAME_ROW;
      const label = node.fn < 0 ? (flame.focus.length ? "↑ " + fnLabel(flame.focus[flame.focus.length - 1]) : "all " + root.total.toLocaleString("en-US") + " samples") : fnLabel(node.fn);
      g.fillStyle = node.fn < 0 ? "#d9dde3" : classColor(samples.fnClass[node.fn]);
      g.fillRect(x, y, Math.max(0.5, nw - 0.5), FLAME_ROW - 1);
      flame.rows.push({ x, w: nw, d, node });
      if (nw > 30) {
        g.fillStyle = "#1d1f23";
        g.save(); g.beginPath(); g.rect(x, y, nw - 1, FLAME_ROW); g.clip();
        g.fillText(label, x + 3, y + FLAME_ROW - 4);
        g.restore();
      }
      const kids = Array.from(node.children.values()).sort((p, q) => q.total - p.total || fnLabel(p.fn).localeCompare(fnLabel(q.fn)));
      let cx = x;
      for (const c of kids) { place(c, cx, d + 1); cx += c.total * scale; }
    };
    place(root, 0, 0);
  }
  function flameKey() { return [view.t0, view.t1, flame.mode, flame.track, flame.focus.join(",")].join("|"); }
  function refreshFlame() {
    flame.timer = 0;
    if (!samples.total) return;
    flame.key = flameKey();
    buildFlame();
    drawFlame();
    const who = flame.track >= 0 ? tracks[flame.track].label : "all threads";
    flameThread.textContent = who;
    flameThread.title = flame.track >= 0 ? "click: all threads" : "click a thread's sample lane for its own";
    const partial = samplesCover() ? "" : " (samples embedded only for " + fmtDur(samples.start) + " – " + fmtDur(samples.end) + ")";
    flameNote.textContent = flame.shown.toLocaleString("en-US") + " samples in the window" + (flame.mode === "idle" ? " while the GPU was idle" : "") +
      (flame.tree.total < flame.shown ? ", " + (flame.shown - flame.tree.total).toLocaleString("en-US") + " of them without a stack or outside the focus" : "") + partial;
  }
  function scheduleFlame() {
    if (!samples.total || flame.timer || flameKey() === flame.key) return;
    flame.timer = setTimeout(refreshFlame, 120);
  }
  function setFlame(change) {
    Object.assign(flame, change);
    if (flame.timer) { clearTimeout(flame.timer); flame.timer = 0; }
    refreshFlame();
  }
  function flameNodeAt(x, y) {
    const d = Math.floor(y / FLAME_ROW);
    for (const r of flame.rows) if (r.d === d && x >= r.x && x < r.x + r.w) return r.node;
    return null;
  }
  // A node's path of functions from the root, for the focus.
  function pathTo(target) {
    const walk = (node, path) => {
      if (node === target) return path;
      for (const c of node.children.values()) { const p = walk(c, path.concat([c.fn])); if (p) return p; }
      return null;
    };
    return walk(flame.tree, []);
  }
  if (!samples.total) {
    document.getElementById("samples-section").hidden = true;
  } else {
    const legendBox = document.getElementById("sample-legend");
    samples.classes.forEach((c, i) => {
      const sp = el("span", undefined, "swatch");
      const sw = el("i"); sw.style.background = classColor(i);
      sp.appendChild(sw); sp.appendChild(document.createTextNode(c));
      legendBox.appendChild(sp);
    });
    flameMode.addEventListener("change", () => setFlame({ mode: flameMode.value, focus: [] }));
    flameThread.addEventListener("click", () => setFlame({ track: -1, focus: [] }));
    flameCanvas.addEventListener("mousemove", (e) => {
      const node = flameNodeAt(e.offsetX, e.offsetY);
      if (!node || !flame.tree.total) { flameInfo.textContent = ""; return; }
      if (node.fn < 0) { flameInfo.textContent = flame.focus.length ? "click: back to the callers" : root_text(); return; }
      flameInfo.textContent = fnLabel(node.fn) + " — " + samples.strings[samples.fnModule[node.fn]] + "\n" + node.total.toLocaleString("en-US") + " samples (" +
        ((100 * node.total) / flame.tree.total).toFixed(1) + "%), " + node.self.toLocaleString("en-US") + " in it · " + samples.classes[samples.fnClass[node.fn]];
    });
    const root_text = () => flame.tree.total.toLocaleString("en-US") + " samples with a stack";
    flameCanvas.addEventListener("click", (e) => {
      const node = flameNodeAt(e.offsetX, e.offsetY);
      if (!node) return;
      if (node.fn < 0) setFlame({ focus: flame.focus.slice(0, -1) });
      else setFlame({ focus: flame.focus.concat(pathTo(node)) });
    });
  }

  // ---- start --------------------------------------------------------------------------------
  // A window in the address (#t0=..&t1=.., ns from the start) opens the page there.
  function fromHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (h.has("t0") && h.has("t1")) { setWindow(Number(h.get("t0")), Number(h.get("t1"))); return true; }
    return false;
  }
  window.addEventListener("hashchange", fromHash);
  resize();
  // The window the page was made for (--window), else the whole run.
  if (!fromHash()) setWindow(data.view.start, data.view.end > data.view.start ? data.view.end : span);
  updateWindowInfo();
  if (samples.total) refreshFlame();  // at once: the first frame's flame graph is not left to a timer
  // What tests and scripts read: the window, what the last frame drew, the selection.
  window.tracedoc = {
    get window() { return { t0: view.t0, t1: view.t1 }; },
    setWindow, stats, state, tracks: () => tracks.length, data: () => ({ events: data.events, raw: data.raw, findings: data.findings.length }),
    drawNow() { pending = false; draw(); return Object.assign({}, stats); },
    eventBox(track, index) { return eventBox(tracks[track], index); },
    // Where a lane is drawn (canvas px, scrolled), by its label; null when there is none.
    laneBox(label) {
      const l = lanes.find((x) => x.label === label);
      return l ? { x: GUTTER, y: l.y - view.scrollY, w: plotW(), h: l.h } : null;
    },
    // The flame graph as drawn: its samples and the root's children (name, samples), largest first.
    flame() {
      refreshFlame();
      const kids = flame.tree ? Array.from(flame.tree.children.values()).sort((p, q) => q.total - p.total) : [];
      return { mode: flame.mode, track: flame.track, shown: flame.shown, total: flame.tree ? flame.tree.total : 0, depth: flame.depth || 0,
        roots: kids.map((c) => ({ name: fnLabel(c.fn), samples: c.total })), frames: flame.rows.length };
    },
    setFlame,
    samples: () => ({ total: samples.total, embedded: samples.n, lanes: sampleLanes.size }),
    // Where the k-th sample lane is drawn (canvas px, scrolled into view) and its thread's track.
    sampleLaneBox(k) {
      const l = lanes.filter((x) => x.type === "samples")[k];
      if (!l) return null;
      if (l.y - view.scrollY < AXIS || l.y - view.scrollY > height - 40) { view.scrollY = l.y - height / 3; clampScroll(); pending = false; draw(); }
      return { x: GUTTER, y: l.y - view.scrollY, w: plotW(), h: l.h, track: l.track.index };
    },
    ready: true,
  };
  document.body.dataset.ready = "1";
})();
