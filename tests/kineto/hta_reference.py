#!/usr/bin/env python3
"""Holistic Trace Analysis (HTA) reference numbers for tracedoc's Kineto reader.

tests/hta_cross_check_test.cpp reads the same traces with tracedoc and recomputes, from tracedoc's
exact int64-ns times, the per-kernel-name statistics HTA's GPU kernel breakdown reports
(`TraceAnalysis.get_gpu_kernel_breakdown`: per name sum/min/max of `dur` per rank). This script runs
HTA itself and writes what it reports to tests/golden/kineto/hta_kernel_breakdown.tsv, so the
comparison is against the real tool, not against our reading of its code.

Usage (needs HTA installed, e.g. in a virtualenv: `pip install HolisticTraceAnalysis`):
    <venv>/bin/python tests/kineto/hta_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout (as the C++ tests do).
The output path is fixed, relative to this script, so the committed file never names a machine path.

What HTA does to a trace before the breakdown (read from the installed HTA's code, and the reasons the
C++ side has to redo each step rather than compare raw durations):
  * hta/common/trace_parser.py round_down_time_stamps: when the `ts` column is float64 (fractional
    "us.nnn" traces, 2024 on), end = ts + dur in double, then ts = ceil(ts), end = floor(end),
    dur = end - ts. The ns are thrown away, and a kernel that starts and ends inside one µs gets
    dur 0 or -1 (HTA issue #317). Integer-µs traces (2021-early 2024) are left as they are.
    HTA_DISABLE_NS_ROUNDING would turn this off; it is removed from the environment here so the
    numbers are HTA's defaults.
  * _compress_df drops events without `dur` or `cat`; args.stream becomes a `stream` column
    (missing or not an int -> -1). HTA 0.5.0 has no 7-day duration cut (later versions do).
  * breakdown_analysis.get_gpu_kernel_breakdown takes every row with stream != -1 and classifies the
    name (hta/utils/utils.py get_kernel_type): COMMUNICATION ^nccl.*Kernel, MEMORY ^Memcpy|^Memset|^dma,
    COMPUTATION = no match of (^nccl.*Kernel)|(.*Memcpy)|(^Memset)|(.*Sync), else OTHER. OTHER names
    are not in the breakdown at all.
  * Names are the event names in full (the symbol table, not the shortened display names).
Configuration, so that HTA neither drops nor merges kernels:
  * num_kernels=10**9, duration_ratio=1.0: no name is folded into HTA's "others" bucket.
  * Trace._filter_irrelevant_gpu_kernels is disabled. With >= 2 ProfilerStep names it keeps only GPU
    events whose `correlation` matches a CPU event starting at or before the end of the last step
    (include_last_profiler_step=True; without it, before the start of the last step), so even with
    the option set it drops GPU events whose launch is outside the steps or not in the trace, and
    duplicates a GPU event when several CPU events share its correlation id. What the stock filter
    would have done is recorded per file in the header ("stock filter: ...") for the record.
  * HTA's breakdown has no count column; `count` is taken from the same frame HTA aggregates
    (groupby name, dur count), and checked against HTA's own mean (sum / mean).
Extra columns: HTA's kernel_type, and `cats`: the trace categories of the events that fed the row
(from HTA's frame), so the C++ test knows which rows are kernels / memcpys / memsets.
"""

import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_PATH = os.path.join(CHECKOUT, "tests", "golden", "kineto", "hta_kernel_breakdown.tsv")

# One entry per HTA run: the files (relative to SHARED/traces) in rank order. Chosen to cover every
# format era, both vendors and a multi-rank load:
TRACE_SETS = [
    # E1 (2021, capitalized categories, integer µs), tb_plugin resnet50 sample, V100
    ["kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"],
    # E2 (2022, integer µs, many dur:0), A100, NCCL
    ["kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"],
    # E3 (2023, integer µs), A100, 6 streams, NCCL
    ["kineto/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz"],
    # E4 (Apr 2024 nightly): fractional absolute-epoch µs, no base (double keeps only 1/4 µs there)
    ["kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"],
    # E5: "us.nnn" relative to baseTimeNanoseconds, A100, NCCL
    ["kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"],
    # E5, H100 (TraceLens)
    ["kineto/TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"],
    # E5, AMD MI300X, RCCL, 2 streams (TraceLens)
    ["kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"],
    # E5, AMD MI300X VF (TraceLens)
    ["kineto/TraceLens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"],
    # E3, two ranks of a 128-rank job loaded together (HTA aligns ranks; durations are per rank)
    ["kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
     "kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"],
]


# The shared folder, as every reference script of this folder finds it.
shared_dir = _reference.shared_dir


def hta_version():
    try:
        from importlib.metadata import version
        return version("HolisticTraceAnalysis")
    except Exception:  # pragma: no cover - only for odd installs
        from hta.version import __version_tuple__
        return ".".join(str(x) for x in __version_tuple__)


def number(x):
    """HTA's values as text: integers without a fraction (they are sums of integer µs)."""
    x = float(x)
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return repr(x)


def escape(name):
    # Kernel names are one TSV cell; none seen so far has these, but a template argument could.
    return name.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def kernel_frame(t, rank):
    """The frame get_gpu_kernel_breakdown aggregates for one rank (its own selection, decoded)."""
    from hta.utils.utils import get_kernel_type
    sym = t.symbol_table.get_sym_table()
    df = t.traces[rank]
    g = df[df["stream"].ne(-1)][["name", "cat", "dur", "correlation"]].copy()
    g["name"] = g["name"].apply(lambda x: sym[x])
    g["cat"] = g["cat"].apply(lambda x: sym[x])
    g["kernel_type"] = g["name"].apply(get_kernel_type)
    return g[g["kernel_type"].isin(["COMPUTATION", "COMMUNICATION", "MEMORY"])]


def load(files, traces, shim):
    """TraceAnalysis over `files` with the GPU-event filter off; `shim`: see run_set."""
    import hta.common.trace as hta_trace
    from hta.trace_analysis import TraceAnalysis

    stock_filter = hta_trace.Trace._filter_irrelevant_gpu_kernels
    stock_transform = hta_trace.transform_correlation_to_index
    hta_trace.Trace._filter_irrelevant_gpu_kernels = lambda self, *args, **kwargs: None
    if shim:
        def transform(df, symbol_table):
            df["correlation"] = df["correlation"].astype("int64")
            return stock_transform(df, symbol_table)
        hta_trace.transform_correlation_to_index = transform
    try:
        return TraceAnalysis(trace_files={r: os.path.join(traces, f) for r, f in enumerate(files)},
                             trace_dir=traces, include_last_profiler_step=True)
    finally:
        hta_trace.Trace._filter_irrelevant_gpu_kernels = stock_filter
        hta_trace.transform_correlation_to_index = stock_transform


def run_set(shared, files):
    import hta.common.trace as hta_trace

    traces = os.path.join(shared, "traces")
    t0 = time.perf_counter()
    failure = None
    try:
        analysis = load(files, traces, shim=False)
    except Exception as e:  # noqa: BLE001 - recorded in the output, then retried with the shim
        # HTA 0.5.0 under pandas >= 3 (2.x only warned about lossy in-place casts; 3 raises):
        # _compress_df downcasts `correlation` to int8/int16 when the ids are small, then
        # transform_correlation_to_index writes row indices into a column derived from it and pandas
        # raises. The column only links CPU and GPU rows; durations and names do not depend on it, so
        # widening it to int64 before that step (the shim in load()) changes nothing in the breakdown.
        failure = f"{type(e).__name__}: {str(e)[:80]}"
        analysis = load(files, traces, shim=True)
    _, kernels = analysis.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=10**9, include_memory_kernels=True)
    seconds = time.perf_counter() - t0
    stock_filter = hta_trace.Trace._filter_irrelevant_gpu_kernels

    t = analysis.t
    rows, notes = [], []
    for rank, f in enumerate(files):
        frame = kernel_frame(t, rank)
        counts = frame.groupby("name")["dur"].count()
        cats = frame.groupby("name")["cat"].agg(lambda c: ",".join(sorted(set(c))))
        mine = kernels[kernels["rank"].eq(rank)]
        if (mine["name"] == "others").any():
            raise SystemExit(f"{f}: HTA folded kernels into 'others' despite num_kernels/duration_ratio")
        if len(mine) != len(counts):
            raise SystemExit(f"{f}: {len(mine)} breakdown rows but {len(counts)} names in HTA's frame")
        for r in mine.to_dict("records"):
            name = r["name"]
            count = int(counts[name])
            s, mean = r["sum (us)"], r["mean (us)"]
            if abs(mean * count - s) > 1e-6 * max(1.0, abs(s)):
                raise SystemExit(f"{f}: {name}: count {count} disagrees with HTA's sum {s} / mean {mean}")
            rows.append((f, name, count, s, r["min (us)"], r["max (us)"], r["kernel_type"], cats[name]))
        notes.append((f, len(frame), frame["dur"].lt(0).sum(), frame["dur"].eq(0).sum()))

    # What HTA's stock filter (include_last_profiler_step=True) would have kept, for the record.
    stock_filter(t, True)
    for i, (f, n, negative, zero) in enumerate(notes):
        kept = len(kernel_frame(t, i))
        notes[i] = (f"# {f}: {n} GPU events in the breakdown ({negative} with dur < 0, {zero} with dur 0); "
                    f"stock filter (include_last_profiler_step=True) would keep {kept}")
        if failure:
            notes[i] += f"; stock HTA fails to load it ({failure}), loaded with the correlation shim"
    return rows, notes, seconds


def main():
    os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    import logging
    logging.getLogger("hta").setLevel(logging.ERROR)
    shared = shared_dir()
    if not os.path.isdir(os.path.join(shared, "traces")):
        raise SystemExit(f"no traces under {shared}")

    all_rows, all_notes = [], []
    for files in TRACE_SETS:
        rows, notes, seconds = run_set(shared, files)
        all_rows += rows
        all_notes += notes
        print(f"{seconds:7.2f} s  {len(rows):5d} rows  {' + '.join(files)}", file=sys.stderr)

    with open(OUT_PATH, "w", encoding="utf-8", newline="\n") as out:
        import pandas
        out.write(f"# generated by tests/kineto/hta_reference.py with HolisticTraceAnalysis {hta_version()}"
                  f" (pandas {pandas.__version__})\n")
        out.write("# regenerate: <venv with HTA>/bin/python tests/kineto/hta_reference.py [SHARED_DIR]\n")
        out.write("# HTA GPU kernel breakdown per file and kernel name, HTA's own µs after its rounding\n")
        out.write("# (num_kernels=1e9, duration_ratio=1.0, include_memory_kernels=True, GPU-event filter off;\n")
        out.write("# count = rows HTA aggregated; cats = trace categories of those rows). See the script's docstring.\n")
        for note in all_notes:
            out.write(note + "\n")
        out.write("file\tname\tcount\tsum_us\tmin_us\tmax_us\tkernel_type\tcats\n")
        for f, name, count, s, mn, mx, kind, cats in all_rows:
            out.write(f"{f}\t{escape(name)}\t{count}\t{number(s)}\t{number(mn)}\t{number(mx)}\t{kind}\t{cats}\n")
    print(f"wrote {len(all_rows)} rows to {os.path.relpath(OUT_PATH, CHECKOUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
