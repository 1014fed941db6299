#!/usr/bin/env python3
"""How fast `tracedoc view` makes a page of a 1 GB PyTorch trace, and how fast the page opens.

Tiles HTA's trace_diff control trace (a real 8-GPU training rank, 34.8 MB of JSON) 30 times into
about 1 GB with build/bench/tile_kineto_trace (timestamps shifted, ids renumbered), then, in one run:
  * `tracedoc view BIG.json -o BIG.html --colors critical` (wall, CPU seconds, peak RSS),
  * the page opened in the real Debian chromium (headless, through the DevTools protocol): from
    navigation to the first drawn frame, and the JS heap it holds,
  * a fit / zoom / pan frame time on that page,
  * the baseline: Python's json.load of the same file (the first step of every Python analyzer:
    HTA, the TensorBoard plugin), and
  * for reference, what chrome://tracing and Perfetto would need: the file is over V8's 512 MiB
    string limit (docs anchors), so a browser cannot even hold it as one string.

usage: /usr/bin/python3 bench/view_open.py [--build DIR] [--copies N] [--workdir DIR] [--runs R]
(Debian python3-websocket and chromium; scripts/install-deps.sh installs them.)
"""
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
import view_browser_test as vbt  # noqa: E402  (the test's CDP driver)

TRACE = "kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"


def timed(cmd):
    """Runs a command; returns (wall s, CPU s, peak RSS MB) of that child alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    # A fresh process per measurement, so ru_maxrss of RUSAGE_CHILDREN is this one's (the largest).
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def main():
    args = sys.argv[1:]
    opt = {"--build": str(HERE.parent / "build"), "--copies": "30", "--workdir": str(Path(tempfile.gettempdir()) / "tracedoc-bench-view"), "--runs": "3"}
    while args:
        key = args.pop(0)
        if key not in opt or not args:
            print(__doc__)
            return 2
        opt[key] = args.pop(0)
    build, work, copies, runs = Path(opt["--build"]), Path(opt["--workdir"]), int(opt["--copies"]), int(opt["--runs"])
    traces = vbt.shared_traces(str(HERE.parent))
    if traces is None or not (traces / TRACE).is_file():
        print("view_open: ../shared/traces (or $TRACEDOC_SHARED) with the HTA trace_diff sample is needed")
        return 2
    work.mkdir(parents=True, exist_ok=True)
    big = work / f"control_x{copies}.json"
    if not big.is_file():
        subprocess.run([str(build / "bench/tile_kineto_trace"), str(traces / TRACE), str(big) + ".tmp", str(copies)], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(str(big) + ".tmp", big)
    size_mb = big.stat().st_size / 1e6
    print(f"input: {big.name}, {size_mb:.0f} MB of JSON ({copies} copies of {TRACE})")

    page = work / "control.html"
    best = None
    for _ in range(runs):
        r = timed([str(build / "tracedoc"), "view", str(big), "-o", str(page), "--colors", "critical"])
        best = r if best is None or r[0] < best[0] else best
    wall, cpu, rss = best
    print(f"tracedoc view: {wall:.2f} s wall, {cpu:.2f} CPU-s, {rss:.0f} MB peak ({size_mb / wall:.0f} MB/s); page {page.stat().st_size / 1e6:.1f} MB")

    import websocket
    exe = "/usr/bin/chromium"
    profile = Path(tempfile.mkdtemp(prefix="tracedoc-bench-profile-"))
    browser = vbt.Browser(exe, profile)
    cdp = vbt.Cdp(websocket, browser.url)
    try:
        tab = vbt.Page(cdp)
        opens = []
        for _ in range(runs):
            opens.append(tab.load(page, timeout=120))
        tab.frames(2)
        doc = tab.js("window.tracedoc.data()")
        heap = tab.call("Runtime.getHeapUsage")
        frames = {}
        span = tab.js("JSON.parse(document.getElementById('tracedoc-data').textContent).span_ns")
        for name, (t0, t1) in {"fit": (0, span), "exact window": (doc["raw"]["start"], doc["raw"]["end"]),
                               "one step": (doc["raw"]["start"], doc["raw"]["start"] + span / 200),
                               "10 us": (doc["raw"]["start"] + 1e6, doc["raw"]["start"] + 1e6 + 1e4)}.items():
            tab.js(f"window.tracedoc.setWindow({t0}, {t1})")
            ms = []
            for _ in range(5):
                ms.append(tab.js("window.tracedoc.drawNow().lastFrameMs"))
            frames[name] = (min(ms), tab.js("window.tracedoc.stats.drawnRects"), tab.js("window.tracedoc.stats.lodCells"))
        problems = tab.problems()
    finally:
        browser.stop(cdp)
    print(f"page open (navigation to first frame): best {min(opens):.2f} s, runs {', '.join(f'{s:.2f}' for s in opens)}; "
          f"JS heap {heap['usedSize'] / 1e6:.0f} MB; {doc['raw']['events']:,} of {doc['events']:,} events exact")
    for name, (ms, rects, cells) in frames.items():
        print(f"  frame '{name}': {ms:.1f} ms ({rects:,} rectangles, {cells:,} bucket cells)")
    if problems:
        print("  page problems: " + "; ".join(problems))

    began = time.monotonic()
    subprocess.run([sys.executable, "-c", f"import json; json.load(open({str(big)!r}))"], check=True)
    parse = time.monotonic() - began
    total = wall + min(opens)
    print(f"baseline json.load: {parse:.1f} s; tracedoc view + page open {total:.2f} s = {parse / total:.1f}x faster than parsing the JSON in Python")
    print(f"chrome://tracing / Perfetto: {size_mb:.0f} MB is over V8's 536,870,888-character string limit; trace-viewer refuses files over 256 MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
