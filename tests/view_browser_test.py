#!/usr/bin/env python3
"""The `tracedoc view` page in a real browser.

Writes pages with the tracedoc binary (two real traces from ../shared when present, and a small
hostile PyTorch trace written here), opens them in Debian's headless chromium and drives it through
the Chrome DevTools Protocol with real mouse and keyboard input. It checks that the page loads
without errors, that the events drawn in a window are exactly the rows of the nsys SQLite export
that overlap it, that findings zoom, that API calls and their kernels link both ways, hover and
search, screenshots against tests/golden/view/, that names from a trace never become markup, and
that the page starts inside the sandboxed iframe a notebook shows (the Python package's View).

Usage (ctest runs it): view_browser_test.py TRACEDOC_BINARY SOURCE_DIR [--update-golden]
Run it with /usr/bin/python3 (Debian's python3-websocket and python3-pil). Exit status: 0 passed,
1 failed, 77 skipped (no chromium or no python modules).
"""

import base64
import json
import os
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SKIP = 77
VIEWPORT = (1400, 900)
GUTTER = 230  # viewer.js: the label column left of the plot
NSYS_TRACE = "nsys/nsys-ai/mfu_2gpu_before.sqlite"
METRICS_TRACE = "nsys/ai-profiler/secondOptimization_gpu-metrics-3.0-4.5s.sqlite"
SAMPLES_TRACE = "nsys/ai-profiler/baseline_nvtx.sqlite"
TORCH_TRACE = "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
HOSTILE_NAMES = ["<script>alert(1)</script>", "\"quoted' & <b>bold</b>", "</script><img src=x onerror=alert(2)>"]
PIXEL_TOLERANCE = 40      # a pixel differs when a channel differs by more than this
GOLDEN_SHARE = 0.005      # at most this share of pixels may differ from the golden picture
DISTINCT_SHARE = 0.01     # two zoom levels must differ in at least this share of pixels
NO_STYLE_MOTION = "*, *::before, *::after { caret-color: transparent !important; animation: none !important; transition: none !important; }"

failures = []


def ok(text):
    print("ok: " + text, flush=True)


def fail(text):
    failures.append(text)
    print("FAIL: " + text, flush=True)


def check(cond, text, why=""):
    if cond:
        ok(text)
    else:
        fail(text + (" (" + why + ")" if why else ""))
    return bool(cond)


def shared_traces(source):
    env = os.environ.get("TRACEDOC_SHARED")
    base = Path(env) if env else Path(source).resolve().parent / "shared"
    return base / "traces" if (base / "traces").is_dir() else None


# ---- Chrome DevTools Protocol -----------------------------------------------------------------

class CdpError(Exception):
    pass


class Cdp:
    """One browser websocket; page sessions are attached with flatten, so every message carries its
    sessionId. Events are kept in arrival order; dialogs are dismissed at once (and recorded)."""

    def __init__(self, websocket, url):
        self.websocket = websocket
        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        return self.next_id

    def _recv(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no answer from chromium in time")
        self.ws.settimeout(remaining)
        msg = json.loads(self.ws.recv())
        if "method" in msg:
            self.events.append(msg)
            if msg["method"] == "Page.javascriptDialogOpening":
                self.send("Page.handleJavaScriptDialog", {"accept": True}, msg.get("sessionId"))
        return msg

    def call(self, method, params=None, session=None, timeout=30):
        mid = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._recv(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise CdpError(f"{method}: {msg['error'].get('message')} {msg['error'].get('data', '')}")
                return msg.get("result", {})

    def pump(self, seconds):
        """Reads events for a while (late console errors, dialogs)."""
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                self._recv(deadline)
        except (TimeoutError, self.websocket.WebSocketTimeoutException):
            pass

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


class JsError(Exception):
    pass


class Page:
    def __init__(self, cdp):
        self.cdp = cdp
        target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.sid = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False})
        self.mark = 0

    def call(self, method, params=None, timeout=30):
        return self.cdp.call(method, params, self.sid, timeout)

    def js(self, expr, await_promise=False):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": await_promise})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise JsError((d.get("exception") or {}).get("description") or d.get("text") or str(d))
        return r["result"].get("value")

    def problems(self):
        """Errors, exceptions and dialogs of this page since the last load."""
        out = []
        for msg in self.cdp.events[self.mark:]:
            if msg.get("sessionId") != self.sid:
                continue
            m, p = msg["method"], msg.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append("exception: " + ((d.get("exception") or {}).get("description") or d.get("text", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log error: " + p["entry"].get("text", "") + (" (" + p["entry"]["url"] + ")" if p["entry"].get("url") else ""))
            elif m == "Page.javascriptDialogOpening":
                out.append(f"dialog opened ({p.get('type')}): {p.get('message')!r}")
        return out

    def load(self, path, timeout=40):
        """Navigates to a page and waits for document.body.dataset.ready; returns seconds."""
        self.mark = len(self.cdp.events)
        url = Path(path).resolve().as_uri()
        began = time.monotonic()
        self.call("Page.navigate", {"url": url})
        probe = f"location.href === {json.dumps(url)} && !!document.body && document.body.dataset.ready === '1'"
        while not self.js(probe):
            if any(p.startswith("exception") for p in self.problems()):
                raise JsError("the page threw before it was ready: " + "; ".join(self.problems()))
            if time.monotonic() - began > timeout:
                raise TimeoutError(f"{path}: not ready after {timeout} s")
            time.sleep(0.02)
        seconds = time.monotonic() - began
        self.js(f"(() => {{ const s = document.createElement('style'); s.textContent = {json.dumps(NO_STYLE_MOTION)};"
                " document.head.appendChild(s); if (document.activeElement) document.activeElement.blur(); })()")
        return seconds

    def frames(self, n=2):
        self.js("new Promise((r) => { let k = " + str(n) + "; const f = () => (--k > 0 ? requestAnimationFrame(f) : r(true)); requestAnimationFrame(f); })", True)

    def mouse(self, kind, x, y, buttons=0, button="none"):
        params = {"type": kind, "x": x, "y": y, "buttons": buttons, "button": button}
        if kind != "mouseMoved":
            params["clickCount"] = 1
        self.call("Input.dispatchMouseEvent", params)

    def move(self, x, y):
        self.mouse("mouseMoved", x, y)

    def click(self, x, y):
        self.move(x, y)
        self.mouse("mousePressed", x, y, 1, "left")
        self.mouse("mouseReleased", x, y, 0, "left")

    def rect(self, selector_expr):
        return self.js(f"(() => {{ const r = ({selector_expr}).getBoundingClientRect(); return {{left: r.left, top: r.top, width: r.width, height: r.height}}; }})()")

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png", "fromSurface": True})["data"])


def die_with_parent():
    """Linux: chromium gets SIGKILL if this script is killed (a ctest timeout) before its finally runs."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class Browser:
    def __init__(self, exe, profile):
        cmd = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--remote-debugging-port=0",
               f"--user-data-dir={profile}", f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "about:blank"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True, preexec_fn=die_with_parent)
        self.stderr = []
        self.url = None
        found = threading.Event()

        def drain():  # reads stderr to the end so chromium never blocks on a full pipe
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.stderr.append(line)
                m = re.search(r"DevTools listening on (ws://\S+)", line)
                if m and not self.url:
                    self.url = m.group(1)
                    found.set()
            found.set()

        threading.Thread(target=drain, daemon=True).start()
        found.wait(30)
        if not self.url:
            raise RuntimeError("chromium did not print its DevTools address:\n  " + "\n  ".join(self.stderr[-20:]))

    def stop(self, cdp):
        if cdp is not None:
            try:
                cdp.send("Browser.close")
            except Exception:
                pass
            cdp.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        try:  # chromium's helpers share its process group (start_new_session)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass


# ---- the page's data document -------------------------------------------------------------------

def decode(doc):
    """Decodes the typed-array columns of the data document (little-endian base64)."""
    formats = {"s": "d", "d": "d", "c": "d", "name": "I", "detail": "I", "color": "H", "depth": "B", "cat": "B"}
    for t in doc["tracks"]:
        for key, f in formats.items():
            raw = base64.b64decode(t[key])
            t[key] = struct.unpack("<%d%s" % (len(raw) // struct.calcsize(f), f), raw)
            if len(t[key]) != t["n"]:
                raise ValueError(f"track {t['label']}: column {key} has {len(t[key])} values, n = {t['n']}")
    return doc


def data_of(page):
    return decode(json.loads(page.js("document.getElementById('tracedoc-data').textContent")))


def make_page(binary, trace, out, *extra):
    r = subprocess.run([binary, "view", str(trace), "-o", str(out), "--colors", "critical", *extra],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"tracedoc view {trace} exited {r.returncode}: {r.stderr.strip()}")
    return out


# ---- checks -----------------------------------------------------------------------------------------

def check_load(page, path, label):
    seconds = page.load(path)
    ready_ms = page.js("performance.now()")
    dcl = page.js("(performance.getEntriesByType('navigation')[0] || {}).domContentLoadedEventStart || 0")
    page.cdp.pump(0.2)
    probs = page.problems()
    size = os.path.getsize(path) / 2**20
    check(not probs and page.js("!!window.tracedoc"),
          f"{label}: page loads without errors ({size:.1f} MiB; navigation to ready {seconds:.2f} s, "
          f"DOMContentLoaded at {dcl:.0f} ms of {ready_ms:.0f} ms)",
          "; ".join(probs) or "window.tracedoc missing")
    return seconds


def check_no_problems(page, label):
    page.cdp.pump(0.2)
    probs = page.problems()
    check(not probs, f"{label}: no console errors, exceptions or dialogs while interacting", "; ".join(probs))


SQL_TABLES = [  # table, viewer category, extra condition
    ("CUPTI_ACTIVITY_KIND_KERNEL", 0, ""),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", 1, ""),
    ("CUPTI_ACTIVITY_KIND_MEMSET", 2, ""),
    ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 3, ""),
    ("CUPTI_ACTIVITY_KIND_RUNTIME", 5, ""),
    ("NVTX_EVENTS", 6, " AND eventType != 75 AND (\"end\" IS NOT NULL OR eventType = 34)"),
    ("OSRT_API", 8, ""),
]


def sql_counts(db, t0, t1):
    """Rows of each event table whose [start, end] overlaps [t0, t1] (absolute ns); None: no table."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out = {}
        for table, _, extra in SQL_TABLES:
            if table not in have:
                out[table] = None
                continue
            q = f"SELECT count(*) FROM {table} WHERE start <= ? AND COALESCE(\"end\", start) >= ?" + extra
            out[table] = con.execute(q, (t1, t0)).fetchone()[0]
        return out
    finally:
        con.close()


def doc_counts(doc, t0, t1):
    """The data document's events per category overlapping [t0, t1] (relative ns), viewer's test."""
    out = {}
    for t in doc["tracks"]:
        s, d, cat = t["s"], t["d"], t["cat"]
        for i in range(t["n"]):
            if s[i] + d[i] >= t0 and s[i] <= t1:
                out[cat[i]] = out.get(cat[i], 0) + 1
    return out


def check_drawn_counts(page, doc, db, label, t0, t1):
    origin = int(doc["origin_ns"])
    for _ in range(12):
        page.js(f"tracedoc.setWindow({t0!r}, {t1!r})")
        stats = page.js("tracedoc.drawNow()")
        if stats["lodRows"] == 0:
            break
        c = (t0 + t1) / 2
        t0, t1 = int(c - (t1 - t0) / 4), int(c + (t1 - t0) / 4)
    win = page.js("tracedoc.window")
    rows = sum(t["rows"] for t in doc["tracks"])
    if stats["rawRows"] + stats["lodRows"] != rows:  # rows scrolled out of the canvas are not drawn
        fail(f"{label}: only {stats['rawRows'] + stats['lodRows']} of {rows} track rows fit on the canvas: the count would be partial")
        return
    if stats["lodRows"] != 0 or (win["t0"], win["t1"]) != (t0, t1):
        fail(f"{label}: window [{t0}, {t1}] ns draws exact rows only (stats {stats}, window {win})")
        return
    sql = sql_counts(db, origin + t0, origin + t1)
    expected = sum(v for v in sql.values() if v is not None)
    got = stats["drawnEvents"]
    detail = ", ".join(f"{k.replace('CUPTI_ACTIVITY_KIND_', '')} {v}" for k, v in sql.items() if v is not None)
    if got == expected:
        ok(f"{label}: window {t0 / 1e6:.3f}-{t1 / 1e6:.3f} ms draws {got} events = the SQLite rows overlapping it ({detail}; "
           f"{stats['rawRows']} exact rows, {stats['drawnRects']} rectangles, frame {stats['lastFrameMs']:.1f} ms)")
        return
    per_cat = doc_counts(doc, t0, t1)
    diffs = []
    for table, cat, _ in SQL_TABLES:
        if sql[table] is not None or per_cat.get(cat):
            diffs.append(f"{table}: SQLite {sql[table]}, page data {per_cat.get(cat, 0)}")
    fail(f"{label}: window [{t0}, {t1}] ns drew {got} events, SQLite has {expected} overlapping rows: " + "; ".join(diffs))


def index_events(doc):
    """(group, correlation) -> [(track, index)] over the whole document."""
    by = {}
    for ti, t in enumerate(doc["tracks"]):
        for i, c in enumerate(t["c"]):
            if c >= 0:
                by.setdefault((t["group"], c), []).append((ti, i))
    return by


def center_of(page, box, canvas):
    x0, x1 = max(box["x0"], GUTTER), min(box["x1"], canvas["width"])
    return canvas["left"] + (x0 + x1) / 2, canvas["top"] + box["y"] + box["h"] / 2


def zoom_to(page, doc, ev, times=5.0):
    t = doc["tracks"][ev[0]]
    s, d = t["s"][ev[1]], max(t["d"][ev[1]], 1.0)
    mid, w = s + d / 2, d * times
    page.js(f"tracedoc.setWindow({mid - w / 2!r}, {mid + w / 2!r})")
    page.js("tracedoc.drawNow()")


def click_event(page, doc, ev, label):
    """Zooms to an event and clicks its centre with the mouse; returns the point or None."""
    zoom_to(page, doc, ev)
    canvas = page.rect("document.getElementById('timeline')")
    box = page.js(f"tracedoc.eventBox({ev[0]}, {ev[1]})")
    if not box:
        fail(f"{label}: eventBox({ev[0]}, {ev[1]}) gave nothing")
        return None
    x, y = center_of(page, box, canvas)
    hit = page.js(f"document.elementFromPoint({x}, {y}) === document.getElementById('timeline')")
    if not hit:
        fail(f"{label}: the point ({x:.0f}, {y:.0f}) of the event is covered by another element")
        return None
    page.click(x, y)
    return x, y


LAUNCH = re.compile(r"cudaLaunchKernel(_v\d+)?$")  # nsys names carry the API version: cudaLaunchKernel_v7000


def check_linking(page, doc, label):
    names = doc["names"]
    by = index_events(doc)
    candidates = []
    for ti, t in enumerate(doc["tracks"]):
        if t["kind"] != "cpu":
            continue
        for i in range(t["n"]):
            if not LAUNCH.match(names[t["name"][i]]) or t["c"][i] < 0:
                continue
            kernels = [e for e in by[(t["group"], t["c"][i])] if doc["tracks"][e[0]]["cat"][e[1]] == 0]
            if kernels:
                candidates.append((t["group"], t["s"][i], (ti, i), kernels[0]))
    if not candidates:
        fail(f"{label}: no cudaLaunchKernel call with a correlated kernel in the data document")
        return None
    group0 = [c for c in candidates if c[0] == candidates[0][0]]
    group0.sort(key=lambda c: c[1])
    _, _, api, kernel = group0[len(group0) // 2]  # one from the middle of the run
    corr = doc["tracks"][api[0]]["c"][api[1]]

    def expected_links(ev):
        t = doc["tracks"][ev[0]]
        return sorted(e for e in by[(t["group"], t["c"][ev[1]])] if e != ev)

    def state():
        return page.js("({selected: tracedoc.state.selected, linked: tracedoc.state.linked, text: document.getElementById('selection').textContent})")

    for what, ev, other, want_cat in (("API call", api, kernel, 0), ("kernel", kernel, api, 5)):
        t = doc["tracks"][ev[0]]
        name = names[t["name"][ev[1]]]
        if click_event(page, doc, ev, f"{label}: click the {what}") is None:
            continue
        st = state()
        sel = st["selected"]
        linked = sorted((l["track"], l["index"]) for l in st["linked"])
        cats = {doc["tracks"][l[0]]["cat"][l[1]] for l in linked}
        check(sel == {"track": ev[0], "index": ev[1]},
              f"{label}: a click on the {what} {name[:60]!r} (track {t['label']!r}, correlation {corr:.0f}) selects it",
              f"selected {sel}")
        check(other in linked and want_cat in cats and linked == expected_links(ev),
              f"{label}: ... and links its {'kernel' if want_cat == 0 else 'API call'} by correlation "
              f"({len(linked)} linked: {sorted(doc['categories'][c] for c in cats)})",
              f"linked {linked}, expected {expected_links(ev)} containing {other}")
        check(st["text"].startswith(name + "\n") and names[doc["tracks"][other[0]]["name"][other[1]]] in st["text"],
              f"{label}: ... and #selection describes it and the linked event", repr(st["text"][:200]))
    return kernel


def check_hover(page, doc, ev, label):
    t = doc["tracks"][ev[0]]
    name = doc["names"][t["name"][ev[1]]]
    page.move(5, 5)
    zoom_to(page, doc, ev)
    canvas = page.rect("document.getElementById('timeline')")
    box = page.js(f"tracedoc.eventBox({ev[0]}, {ev[1]})")
    x, y = center_of(page, box, canvas)
    page.move(x, y)
    tip = page.js("(() => { const t = document.getElementById('tooltip'); return {hidden: t.hidden, visible: getComputedStyle(t).display !== 'none' && t.getBoundingClientRect().width > 0, text: t.textContent}; })()")
    check(not tip["hidden"] and tip["visible"] and tip["text"].startswith(name + "\n"),
          f"{label}: hovering {name[:60]!r} shows #tooltip starting with its name", repr(tip))
    page.move(5, 5)
    hidden = page.js("document.getElementById('tooltip').hidden")
    check(hidden, f"{label}: the tooltip hides when the mouse leaves the canvas")


def check_metric_lane(page, html, label):
    """GPU metrics: one lane per sampled metric under the GPU; hovering it gives the bucket's mean."""
    check_load(page, html, label)
    doc = data_of(page)
    labels = [m["label"] for m in doc["metrics"]]
    check(labels[:3] == ["GPU 0 PCIe TX Throughput", "GPU 0 PCIe RX Throughput", "GPU 0 DRAM Write Throughput"]
          and len(labels) == 9,
          f"{label}: a lane per sampled metric of a known kind ({len(labels)})", repr(labels))
    # Zoom to the sampled 3.0-4.5 s (relative to the page's origin) and hover SM Active mid-way.
    origin = int(doc["origin_ns"])
    t0, t1 = 3_000_000_000 - origin, 4_500_000_000 - origin
    page.js(f"tracedoc.setWindow({t0}, {t1}); tracedoc.drawNow()")
    box = page.js("tracedoc.laneBox('GPU 0 SM Active')")
    canvas = page.rect("document.getElementById('timeline')")
    tip = None
    if box:
        for frac in (0.5, 0.3, 0.7, 0.1, 0.9):
            page.move(canvas["left"] + box["x"] + box["w"] * frac, canvas["top"] + box["y"] + box["h"] / 2)
            tip = page.js("document.getElementById('tooltip').hidden ? null : document.getElementById('tooltip').textContent")
            if tip:
                break
    check(bool(tip) and tip.startswith("GPU 0 SM Active\n") and " % at " in tip,
          f"{label}: hovering the SM Active lane shows the sampled mean", repr(tip))
    page.move(5, 5)
    check_no_problems(page, label)


def check_samples(page, binary, trace, html, label):
    """CPU samples: a lane under every sampled thread, and the flame graph of the window, whose
    samples and root functions equal SQL over COMPOSITE_EVENTS and SAMPLING_CALLCHAINS."""
    check_load(page, html, label)
    doc = data_of(page)
    db = sqlite3.connect(f"file:{trace}?mode=ro&immutable=1", uri=True)
    total = db.execute("SELECT count(*) FROM COMPOSITE_EVENTS").fetchone()[0]
    threads = db.execute("SELECT count(DISTINCT globalTid) FROM COMPOSITE_EVENTS").fetchone()[0]
    info = page.js("tracedoc.samples()")
    check(info == {"total": total, "embedded": total, "lanes": threads},
          f"{label}: every sample embedded, a sample lane per sampled thread ({total} samples, {threads} threads)",
          repr(info))
    # The whole run: the samples with a stack, rooted at each stack's outermost function.
    roots = dict(db.execute(
        "SELECT s.value, count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol "
        "WHERE c.stackDepth = (SELECT max(stackDepth) FROM SAMPLING_CALLCHAINS d WHERE d.id = c.id) "
        "GROUP BY s.value").fetchall())
    with_stack = db.execute("SELECT count(DISTINCT id) FROM SAMPLING_CALLCHAINS").fetchone()[0]
    page.js(f"tracedoc.setWindow(-1, {doc['span_ns'] + 1})")
    flame = page.js("tracedoc.flame()")
    got = {}  # by name: one function name may live in several modules
    for r in flame["roots"]:
        got[r["name"]] = got.get(r["name"], 0) + r["samples"]
    check(flame["shown"] == total and flame["total"] == with_stack and got == roots,
          f"{label}: the flame graph of the whole run has every sample, rooted as SQL roots them "
          f"({len(roots)} roots, {flame['frames']} frames drawn)",
          f"shown {flame['shown']} of {total}, {flame['total']} of {with_stack} with a stack; "
          f"{sorted(got.items())[:5]} vs {sorted(roots.items())[:5]}")
    # While the GPU was idle: the samples cpu_sample_class_sum:during=gpu-idle counts.
    r = subprocess.run([binary, "stats", "-r", "cpu_sample_class_sum:during=gpu-idle", "-f", "csv", str(trace)],
                       capture_output=True, text=True, timeout=120)
    rows = [line.split(",") for line in r.stdout.strip().splitlines()[1:]]
    idle = sum(int(row[4]) for row in rows if len(row) > 4)
    page.js("tracedoc.setFlame({mode: 'idle', focus: []})")
    flame = page.js("tracedoc.flame()")
    check(idle > 0 and flame["shown"] == idle, f"{label}: while the GPU was idle: {idle} samples, as the report",
          f"{flame['shown']} vs {idle}")
    page.js("tracedoc.setFlame({mode: 'window', focus: []})")
    # Hover and click a sample lane: its samples described, the flame graph then that thread's.
    main_label = [t["label"] for t in doc["tracks"] if t["kind"] == "cpu"][0]
    box = page.js("tracedoc.sampleLaneBox(0)")
    canvas = page.rect("document.getElementById('timeline')")
    tip = None
    if box:
        for frac in (0.5, 0.25, 0.75, 0.1, 0.9, 0.6, 0.4):
            page.move(canvas["left"] + box["x"] + box["w"] * frac, canvas["top"] + box["y"] + box["h"] / 2)
            tip = page.js("document.getElementById('tooltip').hidden ? null : document.getElementById('tooltip').textContent")
            if tip and "CPU sample" in tip:
                break
    check(bool(tip) and "CPU sample" in tip and "flame graph" in tip,
          f"{label}: hovering a thread's sample lane describes its samples", repr(tip))
    if box:
        page.click(canvas["left"] + box["x"] + box["w"] * 0.5, canvas["top"] + box["y"] + box["h"] / 2)
        flame = page.js("tracedoc.flame()")
        check(flame["track"] == box["track"] and 0 < flame["shown"] < total,
              f"{label}: clicking the lane shows that thread's flame graph ({flame['shown']} samples)", repr(flame))
    page.move(5, 5)
    check(main_label != "", f"{label}: the main thread has a track ({main_label})")
    check_no_problems(page, label)


def check_search(page, doc, pattern, label):
    rx = re.compile(pattern, re.IGNORECASE)  # the viewer searches with new RegExp(text, "i")
    hit = [bool(rx.search(n)) for n in doc["names"]]
    events = sum(1 for t in doc["tracks"] for k in t["name"] if hit[k])
    page.js("document.getElementById('search').focus()")
    page.call("Input.insertText", {"text": pattern})  # real typing: fires 'input'
    got = page.js("document.getElementById('search-count').textContent")
    want = f"{events} events ({sum(hit)} names)" + ("" if doc["raw"]["complete"] else " in the exact window")
    check(events > 0 and got == want, f"{label}: searching {pattern!r} reports {got!r}", f"expected {want!r}")
    page.js("(() => { const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); s.blur(); })()")


def check_finding(page, doc, label):
    k = next((i for i, f in enumerate(doc["findings"]) if f["ranges"]), None)
    if k is None:
        fail(f"{label}: no finding with evidence ranges")
        return
    f = doc["findings"][k]
    lo, hi = min(r["start"] for r in f["ranges"]), max(r["end"] for r in f["ranges"])
    before = page.js("tracedoc.window")
    page.js(f"document.querySelectorAll('#findings li')[{k}].scrollIntoView({{block: 'center'}})")
    r = page.rect(f"document.querySelectorAll('#findings li')[{k}]")
    x, y = r["left"] + r["width"] / 2, r["top"] + r["height"] / 2
    inside = page.js(f"document.querySelectorAll('#findings li')[{k}].contains(document.elementFromPoint({x}, {y}))")
    page.click(x, y)
    after = page.js("tracedoc.window")
    st = page.js(f"({{active: document.querySelectorAll('#findings li')[{k}].classList.contains('active'), bands: tracedoc.state.bands, finding: tracedoc.state.finding}})")
    check(inside and after != before and after["t0"] <= lo and after["t1"] >= hi,
          f"{label}: a click on finding #{k + 1} ({f['id']}) zooms from {before['t0'] / 1e6:.2f}-{before['t1'] / 1e6:.2f} ms "
          f"to {after['t0'] / 1e6:.2f}-{after['t1'] / 1e6:.2f} ms, covering its {len(f['ranges'])} ranges ({lo / 1e6:.2f}-{hi / 1e6:.2f} ms)",
          f"li under the mouse: {inside}; before {before}, after {after}")
    check(st["active"] and len(st["bands"]) == len(f["ranges"]) and st["finding"] == k,
          f"{label}: ... the finding is marked active and its {len(st['bands'])} evidence bands are drawn", repr(st))


def pixel_diff(a, b):
    """Share of pixels whose largest channel difference exceeds the tolerance, and the mask."""
    from PIL import ImageChops
    d = ImageChops.difference(a, b).split()
    m = ImageChops.lighter(ImageChops.lighter(d[0], d[1]), d[2])
    mask = m.point(lambda v: 255 if v > PIXEL_TOLERANCE else 0)
    return mask.histogram()[255] / (a.width * a.height), mask


def check_screenshots(page, doc, source, artifacts, update, label):
    import io
    from PIL import Image
    span = doc["span_ns"]
    bars = doc["steps"]["bars"]
    if bars:
        b = bars[len(bars) // 2]
        step = (b["start"] - (b["end"] - b["start"]) * 0.05, b["end"] + (b["end"] - b["start"]) * 0.05)
    else:
        step = (span * 0.475, span * 0.525)
    mid = (step[0] + step[1]) / 2
    windows = {"fit": (0, span), "step": step, "detail": (mid - 100e3, mid + 100e3)}
    golden_dir = Path(source) / "tests" / "golden" / "view"
    shots = {}
    page.move(5, 5)
    for key, (t0, t1) in windows.items():
        page.js(f"tracedoc.setWindow({t0!r}, {t1!r})")
        page.js("tracedoc.drawNow()")
        page.frames(2)
        png = page.screenshot()
        img = Image.open(io.BytesIO(png)).convert("RGB")
        shots[key] = img
        golden = golden_dir / f"mfu_{key}.png"
        what = f"{label}: screenshot '{key}' ({(t1 - t0) / 1e6:.3f} ms)"
        if img.size != VIEWPORT:
            fail(f"{what} is {img.size[0]}x{img.size[1]}, not {VIEWPORT[0]}x{VIEWPORT[1]}")
            continue
        if update:
            golden_dir.mkdir(parents=True, exist_ok=True)
            img.save(golden, optimize=True)
            ok(f"{what} written to {golden}")
            continue
        if not golden.is_file():
            fail(f"{what}: no golden {golden} (run with --update-golden)")
            continue
        want = Image.open(golden).convert("RGB")
        if want.size != img.size:
            fail(f"{what}: golden {golden} is {want.size}, screenshot {img.size}")
            continue
        share, mask = pixel_diff(img, want)
        if share < GOLDEN_SHARE:
            ok(f"{what} matches {golden.relative_to(source)} ({100 * share:.3f}% of pixels differ)")
        else:
            artifacts.mkdir(parents=True, exist_ok=True)
            actual, diff = artifacts / f"mfu_{key}.actual.png", artifacts / f"mfu_{key}.diff.png"
            img.save(actual)
            faded = img.point(lambda v: 170 + v // 3)
            Image.composite(Image.new("RGB", img.size, (255, 0, 0)), faded, mask).save(diff)
            fail(f"{what}: {100 * share:.2f}% of pixels differ from {golden} (limit {100 * GOLDEN_SHARE}%); actual {actual}, diff {diff}")
    keys = [k for k in windows if k in shots]
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            share, _ = pixel_diff(shots[keys[i]], shots[keys[j]])
            check(share >= DISTINCT_SHARE, f"{label}: screenshots '{keys[i]}' and '{keys[j]}' differ ({100 * share:.1f}% of pixels)")


def hostile_trace(path):
    events = [{"ph": "X", "cat": "cpu_op", "name": "<img src=x onerror=alert(3)>", "pid": 7, "tid": 7,
               "ts": 1000.0, "dur": 1400.0, "args": {"External id": 1}}]
    ts = 1010.0
    for k, name in enumerate(HOSTILE_NAMES):
        corr = 100 + k
        dur = 300.0 - 100.0 * k  # distinct totals: the top-kernel table lists them in this order
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
                       "ts": ts, "dur": 20.0, "args": {"correlation": corr, "External id": 1}})
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": "stream 7", "ts": ts + 40.0, "dur": dur,
                       "args": {"device": 0, "stream": 7, "correlation": corr, "External id": 1}})
        ts += 40.0 + dur + 60.0
    events.append({"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "</title><script>alert(4)</script>"}})
    doc = {"schemaVersion": 1, "traceEvents": events, "baseTimeNanoseconds": 1700000000000000000}
    Path(path).write_text(json.dumps(doc), encoding="utf-8")


def check_firefox(binary, source, tmp):
    """The same page in Firefox (Debian firefox-esr, headless): its screenshot shows the timeline
    the viewer drew, in the critical preset's colours (the canvas stays empty if the script fails)."""
    exe = shutil.which("firefox-esr") or shutil.which("firefox")
    if not exe:
        print("view_browser_test: no firefox-esr on PATH: the Firefox check is skipped")
        return
    from PIL import Image
    page = make_page(binary, Path(source) / "examples" / "toy_training.sqlite", tmp / "firefox.html")
    shot = tmp / "firefox.png"
    home = tmp / "firefox-home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), MOZ_HEADLESS="1")
    began = time.monotonic()
    run = subprocess.run([exe, "--headless", "--no-remote", "--profile", str(home), f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
                          "--screenshot", str(shot), page.resolve().as_uri()], env=env, capture_output=True, timeout=120)
    took = time.monotonic() - began
    if not check(run.returncode == 0 and shot.is_file(), f"firefox: screenshot of the example's page ({took:.1f} s)",
                 run.stderr.decode("utf-8", "replace")[-400:]):
        return
    img = Image.open(shot).convert("RGB")
    # Only the canvas draws events: count the critical preset's red (kernels on the critical path)
    # and purple (sync waits) there.
    red = purple = 0
    for r, g, b in img.getdata():
        if abs(r - 0xd6) < 12 and abs(g - 0x27) < 12 and abs(b - 0x28) < 12:
            red += 1
        elif abs(r - 0x8e) < 12 and abs(g - 0x44) < 12 and abs(b - 0xad) < 12:
            purple += 1
    check(red > 500 and purple > 50, f"firefox: the timeline is drawn ({red} red and {purple} purple pixels)")


def notebook_view_class(source):
    """python/tracedoc/_view.py's View, loaded alone (it needs no engine): what Jupyter shows."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tracedoc_view", Path(source) / "python" / "tracedoc" / "_view.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.View


def check_notebook(page, source, html_path, tmp, label):
    """The page as a notebook shows tracedoc.View: inside a sandboxed iframe's srcdoc, in a host page.
    The viewer must start there (its script runs under the page's own policy and nonce) and draw."""
    view = notebook_view_class(source)(Path(html_path).read_text(encoding="utf-8"))
    host = tmp / "notebook.html"
    host.write_text("<!DOCTYPE html><html><body style='margin:0'><p>a notebook cell</p>" + view._repr_html_() +
                    "</body></html>", encoding="utf-8")
    page.mark = len(page.cdp.events)
    page.call("Page.navigate", {"url": host.resolve().as_uri()})
    # Chromium runs a sandboxed iframe (an opaque origin) in a process of its own: a target of its
    # own, attached here to ask the viewer in it whether it started.
    probe = {"expression": "!!document.body && document.body.dataset.ready === '1' && !!window.tracedoc && "
                           "document.querySelectorAll('canvas').length > 0", "returnByValue": True}
    began, session, ready = time.monotonic(), None, False
    while time.monotonic() - began < 40 and not ready:
        if session is None:
            for t in page.cdp.call("Target.getTargets")["targetInfos"]:
                if t["type"] == "iframe" and t["url"] == "about:srcdoc":
                    session = page.cdp.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})["sessionId"]
                    page.cdp.call("Runtime.enable", None, session)
        if session is not None:
            r = page.cdp.call("Runtime.evaluate", probe, session)
            ready = bool(r.get("result", {}).get("value"))
        if not ready:
            time.sleep(0.1)
    page.cdp.pump(0.2)
    probs = page.problems() + [m["params"]["exceptionDetails"].get("text", "exception") for m in page.cdp.events[page.mark:]
                               if m.get("sessionId") == session and m.get("method") == "Runtime.exceptionThrown"]
    check(ready and not probs, f"{label}: the notebook view (tracedoc.View: the page in an iframe's srcdoc) starts "
          f"and draws", "; ".join(probs) or ("no iframe target" if session is None else "the viewer never became ready"))
    if session is not None:
        page.cdp.call("Target.detachFromTarget", {"sessionId": session})


def check_hostile(page, binary, tmp):
    label = "hostile names"
    trace = tmp / "hostile.pt.trace.json"
    hostile_trace(trace)
    html = make_page(binary, trace, tmp / "hostile.html")
    seconds = page.load(html)
    page.cdp.pump(0.3)
    probs = page.problems()
    check(not probs and page.js("!!window.tracedoc"), f"{label}: page loads without dialogs or console errors ({seconds:.2f} s)", "; ".join(probs))
    dom = page.js("({scripts: document.scripts.length, img: document.querySelectorAll('img').length, b: document.querySelectorAll('b').length,"
                  " handlers: document.querySelectorAll('[onerror]').length, title: document.title,"
                  " kernels: Array.from(document.querySelectorAll('#kernels tbody tr')).map((tr) => tr.cells[0].textContent)})")
    check(dom["scripts"] == 2 and dom["img"] == 0 and dom["b"] == 0 and dom["handlers"] == 0,
          f"{label}: the document holds its 2 scripts and no <img>, <b> or onerror element", repr(dom))
    check(dom["kernels"] == HOSTILE_NAMES, f"{label}: the top-kernel table shows the three names as exact text", repr(dom["kernels"]))
    doc = data_of(page)
    for name in HOSTILE_NAMES:
        ev = next(((ti, i) for ti, t in enumerate(doc["tracks"]) for i in range(t["n"])
                   if t["cat"][i] == 0 and doc["names"][t["name"][i]] == name), None)
        if ev is None:
            fail(f"{label}: kernel {name!r} is not in the data document")
            continue
        page.move(5, 5)
        page.js("tracedoc.setWindow(0, " + repr(doc["span_ns"]) + "); tracedoc.drawNow()")
        canvas = page.rect("document.getElementById('timeline')")
        x, y = center_of(page, page.js(f"tracedoc.eventBox({ev[0]}, {ev[1]})"), canvas)
        page.move(x, y)
        tip = page.js("(() => { const t = document.getElementById('tooltip'); return {hidden: t.hidden, text: t.textContent, children: t.children.length}; })()")
        check(not tip["hidden"] and tip["text"].split("\n")[0] == name and tip["children"] == 0,
              f"{label}: hovering kernel {name!r} shows exactly that name in #tooltip", repr(tip))
    page.move(5, 5)
    check_no_problems(page, label)
    check(page.js("document.scripts.length === 2 && !document.querySelector('img, b')"), f"{label}: still no injected elements after hovering")


# ---- main -------------------------------------------------------------------------------------------

def main():
    argv = sys.argv[1:]
    update = "--update-golden" in argv
    argv = [a for a in argv if a != "--update-golden"]
    if len(argv) != 2:
        print(__doc__)
        return 2
    binary, source = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    try:
        import websocket  # python3-websocket (websocket-client)
        import PIL.Image  # noqa: F401  python3-pil
    except ImportError as e:
        print(f"view_browser_test: skipped: {e} (Debian python3-websocket and python3-pil; run with /usr/bin/python3)")
        return SKIP
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if not exe:
        print("view_browser_test: skipped: no chromium on PATH (Debian package chromium; scripts/install-deps.sh)")
        return SKIP
    if not os.access(binary, os.X_OK):
        print(f"FAIL: {binary} is not an executable")
        return 1
    traces = shared_traces(source)
    began = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="tracedoc-view-browser-"))
    artifacts = Path(str(tmp) + "-artifacts")
    browser = cdp = None
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # ctest's timeout: still clean up
    try:
        pages = {}
        if traces is None:
            print("view_browser_test: ../shared/traces not found (set TRACEDOC_SHARED): skipping the real-trace checks")
        else:
            for key, rel in (("nsys", NSYS_TRACE), ("pytorch", TORCH_TRACE)):
                if (traces / rel).is_file():
                    pages[key] = (traces / rel, make_page(binary, traces / rel, tmp / f"{key}.html"))
                else:
                    print(f"view_browser_test: {traces / rel} not found: skipping its checks")
        profile = tmp / "profile"
        profile.mkdir()
        browser = Browser(exe, profile)
        cdp = Cdp(websocket, browser.url)
        page = Page(cdp)
        if "nsys" in pages:
            label = "nsys " + Path(NSYS_TRACE).name
            trace, html = pages["nsys"]
            check_load(page, html, label)
            doc = data_of(page)
            check_screenshots(page, doc, source, artifacts, update, label)
            span = doc["span_ns"]
            mid = int(span // 2)
            check_drawn_counts(page, doc, trace, label, mid - 2_500_000, mid + 2_500_000)
            if doc["steps"]["bars"]:
                b = doc["steps"]["bars"][len(doc["steps"]["bars"]) // 2]
                check_drawn_counts(page, doc, trace, label + " (one step)", int(b["start"]), int(b["end"]))
            kernel = check_linking(page, doc, label)
            if kernel is not None:
                check_hover(page, doc, kernel, label)
            check_search(page, doc, "^ncclDevKernel", label)
            check_no_problems(page, label)
        if "pytorch" in pages:
            label = "pytorch " + Path(TORCH_TRACE).name
            trace, html = pages["pytorch"]
            check_load(page, html, label)
            doc = data_of(page)
            check_finding(page, doc, label)
            check_no_problems(page, label)
            check_notebook(page, source, html, tmp, label)
        if traces is not None and (traces / METRICS_TRACE).is_file():
            check_metric_lane(page, make_page(binary, traces / METRICS_TRACE, tmp / "metrics.html"),
                              "nsys " + Path(METRICS_TRACE).name)
        if traces is not None and (traces / SAMPLES_TRACE).is_file():
            check_samples(page, binary, traces / SAMPLES_TRACE,
                          make_page(binary, traces / SAMPLES_TRACE, tmp / "samples.html"),
                          "nsys " + Path(SAMPLES_TRACE).name)
        check_hostile(page, binary, tmp)
        check_firefox(binary, source, tmp)
    except Exception as e:  # a broken page or browser: report it as a failure, not a traceback only
        import traceback
        traceback.print_exc()
        fail(f"{type(e).__name__}: {e}")
    finally:
        if browser is not None:
            browser.stop(cdp)
        shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)
    took = time.monotonic() - began
    if failures:
        print(f"view_browser_test: {len(failures)} check(s) failed ({took:.1f} s):")
        for f in failures:
            print("  - " + f)
        return 1
    print(f"view_browser_test: all checks passed ({took:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
